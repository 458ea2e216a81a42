"""A turn's time is the time its harness recorded for it, live and imported alike.

Live capture runs in hooks that arrive after the harness stamped its records (Claude Code
stamps a prompt before ``UserPromptSubmit`` runs) and, for Claude Code and Codex, possibly
before it flushed them to the transcript. Import has only the transcript. When a second
boundary falls between the two and a hook wrote a turn with its own clock, the turn header,
the session's ``started`` and its file name (and the next session's ``previous`` link) differ
from what import writes — the flaky end-to-end import test (#18).

These replays of the real harness runs (tests/fixtures/recorded/e2e/) make both happen every
time: each hook's clock (``CHROLLO_NOW``) is the first whole second after every record of the
turn it reports, and at each capture hook the transcript has not yet received that turn — it
lands while the hook runs. Live capture must still write what ``chrollo import`` writes.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_env
from hookkit import hook, ok, settled, snapshot
from recorded import E2E, RECORDED, assert_import_equals_live, calls, import_into, transcript_lines, vault_bytes

CAPTURE = {"Stop", "AfterAgent", "agent_end", "SubagentStop"}
STAMP = re.compile(r'"timestamp"\s*:\s*"([^"]+)"')
LANDS_AFTER = 0.75  # seconds a lagging turn takes to reach the transcript while the hook runs


def _clock(lines: list) -> str:
    """The first whole second after every record in ``lines``, as ``CHROLLO_NOW``."""
    latest = max(dt.datetime.fromisoformat(t.replace("Z", "+00:00")) for t in STAMP.findall("".join(lines)))
    return (latest.replace(microsecond=0) + dt.timedelta(seconds=1)).isoformat()


def _hook(home: Path, harness: str, event: str, body: dict, now: str) -> subprocess.Popen:
    """A real ``chrollo hook`` process, started (not awaited) with ``body`` on stdin."""
    payload = home.parent / "payload.json"
    payload.write_text(json.dumps(body), "utf-8")
    with open(payload, "rb") as stdin:
        return subprocess.Popen([sys.executable, "-m", "chrollo", "hook", event, "--harness", harness],
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=cli_env(home, CHROLLO_NOW=now), cwd=str(home.parent))


def replay_lagging(name: str, tmp: Path, home: Path) -> Path:
    """Every recorded hook call, in order, with its hook's clock past its turn's records and
    each capture hook's transcript one turn behind until the hook has been running a while."""
    harness = name.rsplit("-", 1)[0]
    cwd = tmp / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    recorded = calls(f"e2e/{name}")
    shown: dict = {}  # transcript -> how many lines it holds now
    for i, c in enumerate(recorded):
        rel = c["payload"].get("transcript_path")
        rel = rel if isinstance(rel, str) and (RECORDED / "e2e" / name / rel).is_file() else None
        have = c["lines"].get("transcript_path")
        body = dict(c["payload"], cwd=str(cwd))
        now = "2026-11-23T00:00:00+00:00"
        if rel is not None:
            lines = transcript_lines(f"e2e/{name}", rel, cwd)
            # the turn this call is about ends at the next capture call on this transcript
            end = next((d["lines"].get("transcript_path") for d in recorded[i:] if d["event"] in CAPTURE
                        and d["payload"].get("transcript_path") == rel), None) or have or len(lines)
            now = _clock(lines[:end])
            path = tmp / rel
            body["transcript_path"] = str(path)
            if have is not None:  # the file existed then; a capture hook finds it a turn behind
                path.parent.mkdir(parents=True, exist_ok=True)
                lag = c["event"] in CAPTURE
                path.write_text("".join(lines[: max(shown.get(rel, 0), 1)] if lag else lines[:have]), "utf-8")
        p = _hook(home, harness, c["event"], body, now)
        if rel is not None and have is not None:
            try:
                p.wait(timeout=LANDS_AFTER)
            except subprocess.TimeoutExpired:
                pass
            path.write_text("".join(lines[:have]), "utf-8")  # the turn lands
            shown[rel] = have
        out, err = p.communicate(timeout=60)
        ok(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return cwd


@pytest.mark.parametrize("name", E2E)
def test_live_capture_takes_turn_times_from_the_transcript_like_import(name, home, tmp_path):
    replay_lagging(name, tmp_path, home)
    assert_import_equals_live(name, tmp_path, home)


def test_a_prompt_already_in_the_transcript_keeps_its_transcript_time(home, tmp_path):
    """Claude Code may flush the prompt before ``UserPromptSubmit`` runs: the hook sets it aside
    to write with its answer, and writes it at the transcript's second (what import writes), not
    at the hook's — the e2e compact/resume import check failed across a second boundary."""
    from chrollo.capture import Capture
    from chrollo.harness.common import Unit

    asked = dt.datetime(2026, 11, 25, 13, 3, 29, 900000)
    prompt = "say: the schema migration adds a tenants table"
    sid = "5ca1e000-0000-4000-8000-000000000002"
    vault = tmp_path / "vault"
    with Capture(sid, "claude-code", str(tmp_path), vault=str(vault)) as cap:
        assert cap.run([Unit("user", asked, [prompt], "u1")], prompt=prompt,
                       when=asked + dt.timedelta(seconds=0.3)) == []
    with Capture(sid, "claude-code", str(tmp_path), vault=str(vault)) as cap:
        turns = cap.run([], final="the schema migration adds a tenants table",
                        when=asked + dt.timedelta(seconds=1))
    assert [(t.role, t.when.replace(microsecond=0)) for t in turns] == [
        ("user", asked.replace(microsecond=0)), ("agent", dt.datetime(2026, 11, 25, 13, 3, 30))]


CLAUDE = next(n for n in E2E if n.startswith("claude-code-"))


def _first_turn(tmp: Path):
    """The recording's first turn of a new Claude Code session: (its three hook calls —
    UserPromptSubmit, Stop, SessionEnd —, the transcript's path, its lines at SessionEnd,
    the hooks' clock: the first whole second after the turn's records)."""
    ups, stop, end = calls(f"e2e/{CLAUDE}")[:3]
    assert [c["event"] for c in (ups, stop, end)] == ["UserPromptSubmit", "Stop", "SessionEnd"]
    cwd = tmp / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    rel = stop["payload"]["transcript_path"]
    lines = transcript_lines(f"e2e/{CLAUDE}", rel, cwd)[: end["lines"]["transcript_path"]]
    path = tmp / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    calls_ = [dict(c["payload"], cwd=str(cwd), transcript_path=str(path)) for c in (ups, stop, end)]
    return calls_, path, lines, _clock(lines)


def _imported(tmp: Path, home: Path, path: Path, lines: list) -> dict:
    """What ``chrollo import`` writes from the transcript ``lines`` alone."""


    src = tmp / "source"
    dst = src / path.relative_to(tmp / "transcripts")
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("".join(lines), "utf-8")
    other = tmp / "imported"
    assert import_into(other, "claude-code", src)["failed"] == 0
    return vault_bytes(other / "memories")


@pytest.mark.parametrize("session_end", [True, False], ids=["then-SessionEnd", "no-later-hook"])
def test_a_transcript_written_only_after_the_stop_hook_returns_keeps_its_times(session_end, home, tmp_path):
    """``claude -p`` may write a new session's transcript only once its Stop hook has returned
    (CI: the e2e import check differed by a second). The hook must not write the turn at its own
    clock then: it leaves it to whatever sees the transcript next — SessionEnd, or, when no hook
    follows, a pass it left behind that waits for the file — and the turn gets Claude's times."""

    (ups, stop, end), path, lines, now = _first_turn(tmp_path)
    ok(hook(home, "claude-code", "UserPromptSubmit", ups, CHROLLO_NOW=now))
    ok(hook(home, "claude-code", "Stop", stop, CHROLLO_NOW=now))
    path.write_text("".join(lines), "utf-8")  # Claude Code writes it now
    if session_end:
        ok(hook(home, "claude-code", "SessionEnd", end, CHROLLO_NOW=now))
    settled(home)
    live = vault_bytes(home / "memories")
    assert live and live == _imported(tmp_path, home, path, lines)


def test_a_transcript_that_never_comes_leaves_the_payloads_turn_once(home, tmp_path):
    """No transcript ever shows the turn: the pass the Stop hook left behind writes the prompt
    and the payload's answer (at the hooks' times) once the wait is over, and only once."""

    (ups, stop, end), path, lines, now = _first_turn(tmp_path)
    ok(hook(home, "claude-code", "UserPromptSubmit", ups, CHROLLO_NOW=now))
    ok(hook(home, "claude-code", "Stop", stop, CHROLLO_NOW=now))
    settled(home)
    (text,) = snapshot(home).values()
    assert text.count(b"[User]") == 1 and text.count(b"[Agent]") == 1
    assert stop["last_assistant_message"].strip().encode() in text and ups["prompt"].strip().encode() in text
    before = snapshot(home)
    ok(hook(home, "claude-code", "SessionEnd", end, CHROLLO_NOW=now))
    assert snapshot(home) == before
