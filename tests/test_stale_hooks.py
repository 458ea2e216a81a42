"""Stale hooks (issue 18, item 12): doctor and stats say when each harness last captured a
turn, and warn when the harness has been active since (its newest transcript is newer)."""
from __future__ import annotations

import json
import os
import time

from conftest import run, run_json
from hookkit import hook, ok
from recorded import calls, materialise

CLAUDE = "claude-code-2.1.330"


def _world(tmp_path):
    fake = tmp_path / "h"
    fake.mkdir()
    cc = tmp_path / "cc"
    materialise(CLAUDE, cc, tmp_path / "work").rename(cc / "projects")
    main = next(p for p in (cc / "projects").rglob("*.jsonl") if "subagents" not in p.parts)
    return {"HOME": fake, "CLAUDE_CONFIG_DIR": cc}, main


def test_doctor_and_stats_warn_when_the_harness_is_active_but_nothing_is_captured(home, tmp_path):
    env, transcript = _world(tmp_path)
    assert run(["install", "claude-code"], home, **env).returncode == 0
    p, report = run_json(["doctor", "--harness", "claude-code"], home, **env)
    r = report["harnesses"]["claude-code"]
    assert p.returncode == 0  # a warning, not a failure
    assert r["status"] == "stale" and r["capture"]["last_capture"] is None and r["capture"]["stale"]
    assert r["capture"]["activity_path"] == str(transcript)
    assert "no turn captured from claude-code ever" in r["fix"] and "chrollo import claude-code" in r["fix"]
    human = run(["doctor", "--harness", "claude-code"], home, **env)
    assert "STALE" in human.stdout and "last capture: never" in human.stdout
    assert (home / "memories").is_dir()  # install made the (empty) vault (#33 item 21)
    _, st = run_json(["stats"], home, **env)
    assert st["hooks"]["claude-code"]["stale"] and st["hooks"]["claude-code"]["last_capture"] is None
    plain = run(["stats"], home, **env)
    assert "claude-code" in plain.stdout and "never" in plain.stdout and "STALE" in plain.stdout
    assert "hooks may have stopped firing" in plain.stderr

    # the hook fires (a real Stop of the recorded run): captured now, nothing stale
    stop = next(c["payload"] for c in calls(CLAUDE) if c["event"] == "Stop")
    ok(hook(home, "claude-code", "Stop", dict(stop, transcript_path=str(transcript), cwd=str(tmp_path / "work"))))
    _, report = run_json(["doctor", "--harness", "claude-code"], home, **env)
    r = report["harnesses"]["claude-code"]
    assert r["status"] == "ok" and r["capture"]["last_capture"] and not r["capture"]["stale"]
    _, st = run_json(["stats"], home, **env)
    assert st["hooks"]["claude-code"]["last_capture"] and not st["hooks"]["claude-code"]["stale"]

    # the harness keeps working (a session written two hours later), the hooks do not fire
    later = time.time() + 7200
    os.utime(transcript, (later, later))
    _, report = run_json(["doctor", "--harness", "claude-code"], home, **env)
    r = report["harnesses"]["claude-code"]
    assert r["status"] == "stale" and "no turn captured from claude-code since" in r["fix"]


def test_a_harness_never_used_is_not_stale(home, tmp_path):
    fake = tmp_path / "h"
    fake.mkdir()
    env = {"HOME": fake, "CODEX_HOME": tmp_path / "codex"}
    run(["install", "codex"], home, **env)
    _, report = run_json(["doctor", "--harness", "codex"], home, **env)
    cap = report["harnesses"]["codex"]["capture"]
    assert cap == {"last_capture": None, "last_activity": None, "activity_path": None, "stale": False, "message": ""}
    assert json.dumps(report)  # (the report stays one JSON object)


def test_no_stale_warning_for_hooks_never_installed(home, tmp_path):
    # #33 item 9: right after a successful `import all`, stats warned STALE on every run for a
    # harness whose hooks were never installed, and suggested the import just run
    env, _transcript = _world(tmp_path)
    out = run_json(["import", "all"], home, **env)[1]
    assert out["imported"] >= 1 and out["failed"] == 0, out
    for _ in range(2):
        _, st = run_json(["stats"], home, **env)
        assert st["hooks"]["claude-code"]["last_activity"] and not st["hooks"]["claude-code"]["stale"]
        plain = run(["stats"], home, **env)
        assert plain.returncode == 0 and "STALE" not in plain.stdout and "stopped firing" not in plain.stderr
    _, report = run_json(["doctor", "--harness", "claude-code"], home, **env)
    assert report["harnesses"]["claude-code"]["status"] == "missing"
    assert not report["harnesses"]["claude-code"]["capture"]["stale"]
    # installed, and the harness active since without a capture: that is stale
    assert run(["install", "claude-code"], home, **env).returncode == 0
    _, st = run_json(["stats"], home, **env)
    assert st["hooks"]["claude-code"]["stale"]
