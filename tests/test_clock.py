"""#29/#33: one clock. ``CHROLLO_NOW`` in every ISO 8601 form (``Z``, an offset, naive) on
search, recall (the hook injects) and capture; a naive one means what it always meant."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from hookkit import hook, ok, payload

from conftest import ROOT, run

# (CHROLLO_NOW, the wall-clock time a turn captured "now" is stamped with, under TZ=UTC)
FORMS = [("2026-11-25T10:00:00+02:00", "2026-11-25 08:00:00"),
         ("2026-11-25T10:00:00Z", "2026-11-25 10:00:00"),
         ("2026-11-25T10:00:00", "2026-11-25 10:00:00")]
NOWS = [f for f, _ in FORMS]


@pytest.mark.parametrize("now", NOWS)
def test_search_takes_every_form_of_the_clock(home, now):
    demo = ROOT / "chrollo" / "data" / "demo"
    p = run(["search", "redis", "--dir", demo, "--json"], home, CHROLLO_NOW=now, TZ="UTC")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert json.loads(p.stdout)["hits"]


def test_an_aware_clock_ranks_as_the_same_instant_naive(home):
    demo = ROOT / "chrollo" / "data" / "demo"
    got = [json.loads(run(["search", "redis", "deploy", "--dir", demo, "--json"], home,
                          CHROLLO_NOW=now, TZ="UTC").stdout)["hits"]
           for now in ("2026-11-25T12:00:00+02:00", "2026-11-25T10:00:00Z", "2026-11-25T10:00:00")]
    assert got[0] == got[1] == got[2] and got[0]


@pytest.mark.parametrize("now", NOWS)
def test_recall_injects_under_every_form_of_the_clock(home, make_session, now):
    v = home / "memories"
    make_session(v, "past0001-1111-4111-8111-111111111111", "2026-09-01T10:00:00", [
        ("user", "10:00:00", "the billing service websocket reconnect test is flaky again"),
        ("agent", "10:01:00", ["The reconnect test raced the heartbeat timer; I made the "
                               "websocket client wait for the reconnect event instead of sleeping."]),
    ])
    for i in range(4):
        make_session(v, f"fill{i:04d}-3333-4333-8333-333333333333", f"2026-07-0{i + 1}T10:00:00", [
            ("user", "10:00:00", f"update the changelog for release {i}"),
            ("agent", "10:01:00", ["Done, the changelog lists the new flags."]),
        ])
    body = {"session_id": "live0000-aaaa-4bbb-8ccc-dddddddddddd", "transcript_path": None,
            "cwd": "/nonexistent/x", "hook_event_name": "UserPromptSubmit",
            "prompt": "how did we fix the flaky websocket reconnect test in the billing service?"}
    p = hook(home, "claude-code", "UserPromptSubmit", body, CHROLLO_NOW=now, TZ="UTC")
    ok(p)
    assert "raced the heartbeat timer" in json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
    assert not (home / "logs" / "hooks.log").exists()


@pytest.mark.parametrize("now,stamp", FORMS)
def test_capture_stamps_turns_with_every_form_of_the_clock(home, tmp_path, now, stamp):
    ups = payload("codex", "UserPromptSubmit", tmp_path, transcript_path=None)
    stop = payload("codex", "Stop", tmp_path, transcript_path=None)
    ok(hook(home, "codex", "UserPromptSubmit", ups, CHROLLO_NOW=now, TZ="UTC"))
    ok(hook(home, "codex", "Stop", stop, CHROLLO_NOW=now, TZ="UTC"))
    assert not (home / "logs" / "hooks.log").exists()
    [f] = (home / "memories").glob("*.md")
    text = f.read_text("utf-8")
    assert f"[User] {stamp}" in text or f"{stamp}" in text, text[:600]


@pytest.mark.parametrize("now", NOWS)
def test_the_one_clock_is_aware_and_the_same_instant(monkeypatch, now):
    from chrollo.clock import now as clock_now

    monkeypatch.setenv("CHROLLO_NOW", now)
    monkeypatch.setenv("TZ", "UTC")
    import time

    time.tzset()
    try:
        got = clock_now()
        assert got.tzinfo is not None
        want = dt.datetime.fromisoformat(now.replace("Z", "+00:00"))
        want = want if want.tzinfo else want.astimezone()
        assert got == want
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_bad_clock_is_a_usage_error(home):
    p = run(["search", "x", "--json"], home, CHROLLO_NOW="yesterday")
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["kind"] == "bad_clock"
