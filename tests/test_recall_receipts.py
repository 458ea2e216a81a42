"""Recall receipts through real `chrollo hook` processes: what was injected into which prompt,
owner-only, bounded, off with one setting, removed by forget; `recall log` and `recall why`."""
from __future__ import annotations

import json
import os
import stat

import pytest

from hookkit import hook, ok

from conftest import run, run_json

SID = "live0000-aaaa-4bbb-8ccc-dddddddddddd"
PROMPT = "how did we fix the flaky websocket reconnect test in the billing service?"
PAST = "past0001-1111-4111-8111-111111111111"


@pytest.fixture
def vault(home, make_session):
    v = home / "memories"
    make_session(v, PAST, "2026-09-01T10:00:00", [
        ("user", "10:00:00", "the billing service websocket reconnect test is flaky again"),
        ("agent", "10:01:00", ["The reconnect test raced the heartbeat timer; I made the "
                               "websocket client wait for the reconnect event instead of sleeping."])])
    for i in range(6):
        make_session(v, f"fill{i:04d}-3333-4333-8333-333333333333", f"2026-07-0{i + 1}T10:00:00", [
            ("user", "10:00:00", f"update the changelog for release {i}"),
            ("agent", "10:01:00", ["Done, the changelog lists the new flags."])])
    return v


def ask(home, prompt=PROMPT, sid=SID):
    p = hook(home, "claude-code", "UserPromptSubmit", {"session_id": sid, "transcript_path": None,
                                                      "cwd": "/nonexistent/x", "hook_event_name": "UserPromptSubmit",
                                                      "prompt": prompt})
    ok(p)
    return p


def log_file(home):
    return home / "logs" / "recall.jsonl"


def test_every_injection_is_logged_owner_only(home, vault):
    ask(home)
    ask(home, "thanks", sid="other000-1")
    ask(home, "what is the capital of mongolia these days", sid="other000-2")
    lines = [json.loads(x) for x in log_file(home).read_text().splitlines()]
    assert len(lines) == 3  # every prompt seen; only the injection carries the prompt's words
    first = lines[0]
    assert set(first) == {"time", "harness", "session", "prompt", "excerpts", "chars", "signals"}
    assert (first["time"], first["harness"], first["session"]) == ("2026-11-01T12:00:00", "claude-code", SID)
    assert first["prompt"] == "how did we fix the flaky websocket reconnect test in the billing…"
    assert first["excerpts"][0]["path"].endswith("2026-09-01_100000_past0001.md")
    assert set(first["excerpts"][0]) == {"path", "line", "start", "end", "chars"} and first["chars"] > 200
    assert [x["excerpts"] for x in lines[1:]] == [[], []] and lines[1]["prompt"] is None
    assert stat.S_IMODE(log_file(home).stat().st_mode) == 0o600
    assert stat.S_IMODE(log_file(home).parent.stat().st_mode) == 0o700

    r, out = run_json(["recall", "log"], home)
    assert r.returncode == 0 and set(out) == {"log", "enabled", "entries"}
    assert [e["session"] for e in out["entries"]] == [SID]  # injections only
    r, out = run_json(["recall", "log", "--all", "-n", "2"], home)
    assert [e["session"] for e in out["entries"]] == ["other000-2", "other000-1"]  # newest first
    text = run(["recall", "log"], home).stdout
    assert "claude-code · live0000 · 1 excerpt" in text and "2026-09-01_100000_past0001.md:" in text

    r, st = run_json(["stats", "--dir", vault, "--since", "2026-10-26"], home)
    assert {k: st["recall"][k] for k in ("prompts", "injections", "share")} == \
        {"prompts": 3, "injections": 1, "share": 0.333}
    assert [d for d in st["recall"]["series"] if d["prompts"]] == [{"start": "2026-11-01", "prompts": 3, "injections": 1}]


def test_the_receipt_keeps_the_signals_that_decided(home, vault):
    # (issue 43: a user sees why something was or was not injected — numbers, never words)
    ask(home)
    ask(home, "thanks", sid="other000-1")
    ask(home, "what is the capital of mongolia these days", sid="other000-2")
    lines = [json.loads(x) for x in log_file(home).read_text().splitlines()]
    s = lines[0]["signals"]
    assert set(s) == {"coverage", "needed", "tying", "chance", "runner_up", "unknown"} and s["coverage"] >= s["needed"]
    assert s["tying"] == 1 and s["chance"] < 1 and s["unknown"] == 0
    assert "signals" not in lines[1]  # not searched: nothing decided
    assert lines[2]["signals"]["coverage"] < lines[2]["signals"]["needed"]  # why nothing was injected
    ask(home, "how did Joanna fix the flaky websocket reconnect test?", sid="other000-3")
    named = json.loads(log_file(home).read_text().splitlines()[3])
    assert named["signals"]["unknown"] == 1 and named["excerpts"] == [] and named["prompt"] is None  # (a count, not the name)
    text = run(["recall", "log", "--all"], home).stdout
    assert "coverage" in text and "session tying" in text and "by chance" in text
    assert "1 name found nowhere" in text and "Joanna" not in text
    r, out = run_json(["recall", "why", PROMPT], home)
    assert out["signals"] == s
    assert "1 session tying" in run(["recall", "why", PROMPT], home).stdout


def test_off_with_one_setting(home, vault):
    ask(home)
    assert log_file(home).exists()
    r = run(["config", "recall-log", "off"], home)
    assert r.returncode == 0 and not log_file(home).exists()
    ask(home, sid="other000-3")
    assert not log_file(home).exists()
    assert run_json(["recall", "log"], home)[1]["enabled"] is False
    run(["config", "recall-log", "on"], home)
    ask(home, sid="other000-4")
    assert len(log_file(home).read_text().splitlines()) == 1


def test_bounded_by_size_and_age(home, vault):
    r, out = run_json(["config", "recall-log-max-mb", "0.01"], home)  # 10 kB
    assert out == {"recall-log-max-mb": 0.01}
    for i in range(40):
        ask(home, sid=f"size{i:04d}-x")
    size = log_file(home).stat().st_size
    assert 0 < size <= 10_000
    kept = [json.loads(x)["session"] for x in log_file(home).read_text().splitlines()]
    assert kept[-1] == "size0039-x" and "size0000-x" not in kept  # the oldest went
    run(["config", "recall-log-days", "30"], home)
    log_file(home).write_text(json.dumps({"time": "2026-09-01T00:00:00", "harness": "codex", "session": "old",
                                          "prompt": "old", "excerpts": [], "chars": 0}) + "\n")
    ask(home, sid="fresh000-x")
    assert [json.loads(x)["session"] for x in log_file(home).read_text().splitlines()] == ["fresh000-x"]
    assert run(["config", "recall-log-days", "-3"], home).returncode == 2


def test_forget_removes_what_cites_the_forgotten(home, vault):
    ask(home)
    ask(home, "thanks", sid="keep0000-x")
    assert PAST[:8] in log_file(home).read_text()
    r, out = run_json(["forget", PAST, "--yes"], home)
    assert r.returncode == 0 and out["receipts_removed"] == 1
    sessions = [json.loads(x)["session"] for x in log_file(home).read_text().splitlines()]
    assert sessions == ["keep0000-x"] and "past0001" not in log_file(home).read_text()
    # the prompting session made private: its receipts go too, and it gets no more
    ask(home, "#chrollo-private from here on, please", sid="keep0000-x")
    assert log_file(home).read_text() == ""


def test_why_explains_and_writes_nothing(home, vault):
    before = sorted(str(p.relative_to(home)) for p in home.rglob("*") if "listing" not in p.parts)
    r, out = run_json(["recall", "why", PROMPT], home)
    assert r.returncode == 0
    assert {"query", "terms", "hits", "decision", "excerpts", "block", "needed", "best"} <= set(out)
    assert out["terms"]["fix"] > out["terms"]["websocket"] > 0  # a word found nowhere weighs most
    assert out["decision"].startswith("injected 1 excerpt") and "raced the heartbeat" in out["block"]
    verdicts = {h["verdict"] for h in out["hits"]}
    assert "injected" in verdicts
    after = sorted(str(p.relative_to(home)) for p in home.rglob("*") if "listing" not in p.parts)
    assert after == before  # no receipt, no dedup state
    r, out = run_json(["recall", "why", "what is the capital of mongolia these days"], home)
    assert out["decision"].startswith("nothing injected") and out["block"] == ""
    text = run(["recall", "why", PROMPT], home).stdout
    assert "websocket" in text and "decision: injected 1 excerpt" in text and "→ injected" in text


def test_a_receipt_dated_a_year_ahead_never_turns_age_pruning_off(home):
    """#42: only the log's first line was read for its age; one receipt written by a clock set a
    year ahead, at the head, kept every old receipt forever. Now the next receipt prunes the
    old ones (and the one from the future, which no age bound holds)."""
    from chrollo import receipts

    from pathlib import Path

    log = Path(receipts.log_path())
    log.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"time": "2027-11-01T12:00:00", "harness": "claude-code", "session": "future",
                         "prompt": "from the future", "excerpts": [], "chars": 0})]
    lines += [json.dumps({"time": f"2025-0{m}-01T12:00:00", "harness": "claude-code", "session": f"old{m}",
                          "prompt": "long ago", "excerpts": [], "chars": 0}) for m in range(1, 9)]
    log.write_text("".join(x + "\n" for x in lines))
    receipts.record("claude-code", "now0", "a prompt of today", {"hits": [], "decision": "nothing"})
    kept = [json.loads(x)["session"] for x in log.read_text().splitlines()]
    assert kept == ["now0"], kept
