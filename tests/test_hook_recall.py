"""Recall through real `chrollo hook` processes: gates, channel, budget, dedup, live session."""
from __future__ import annotations

import json

import pytest

from hookkit import hook, ok

from chrollo.fileformat import RECALL_HEADER

SID = "live0000-aaaa-4bbb-8ccc-dddddddddddd"
PROMPT = "how did we fix the flaky websocket reconnect test in the billing service?"


@pytest.fixture
def vault(home, make_session):
    v = home / "memories"
    make_session(v, "past0001-1111-4111-8111-111111111111", "2026-09-01T10:00:00", [
        ("user", "10:00:00", "the billing service websocket reconnect test is flaky again"),
        ("agent", "10:01:00", ["The reconnect test raced the heartbeat timer; I made the "
                               "websocket client wait for the reconnect event instead of sleeping."]),
    ])
    make_session(v, "past0002-2222-4222-8222-222222222222", "2026-08-01T10:00:00", [
        ("user", "10:00:00", "rename the billing service database tables"),
        ("agent", "10:01:00", ["Renamed invoices_v2 to invoices."]),
    ])
    for i in range(6):  # filler, so that idf means something
        make_session(v, f"fill{i:04d}-3333-4333-8333-333333333333", f"2026-07-0{i + 1}T10:00:00", [
            ("user", "10:00:00", f"update the changelog for release {i}"),
            ("agent", "10:01:00", ["Done, the changelog lists the new flags."]),
        ])
    # the live session mentions everything too: it must never be injected into itself
    make_session(v, SID, "2026-11-01T09:00:00", [
        ("user", "09:00:00", "flaky websocket reconnect test in the billing service, how did we fix it"),
    ])
    return v


def ups(prompt=PROMPT, sid=SID, **kw):
    return {"session_id": sid, "transcript_path": None, "cwd": "/nonexistent/x",
            "hook_event_name": "UserPromptSubmit", "prompt": prompt, **kw}


def context_of(p) -> str:
    ok(p)
    out = json.loads(p.stdout)
    assert set(out) == {"hookSpecificOutput"}
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    return out["hookSpecificOutput"]["additionalContext"]


def test_claude_recall_injects_strong_hit_labelled_and_fenced(home, vault):
    text = context_of(hook(home, "claude-code", "UserPromptSubmit", ups()))
    assert text.startswith(RECALL_HEADER + "\n")
    assert "raced the heartbeat timer" in text
    assert "2026-09-01 10:00 · claude-code · 2026-09-01_100000_past0001.md:" in text
    assert "```" in text
    # the strong hit first; a session sharing two of the prompt's words ("billing service") may
    # follow it (tests/test_recall_gate.py holds the gate's rules), the filler never
    assert "past0002" not in text or text.index("past0001") < text.index("past0002")
    assert "fill" not in text and "changelog" not in text
    assert "live0000" not in text        # never the live session's own file
    assert len(text) <= 6000


def test_same_excerpt_is_not_injected_twice_in_a_session(home, vault):
    assert context_of(hook(home, "claude-code", "UserPromptSubmit", ups()))
    p = hook(home, "claude-code", "UserPromptSubmit", ups(prompt=PROMPT + " again please"))
    ok(p)
    assert p.stdout == b""
    # another session gets it
    assert "heartbeat" in context_of(hook(home, "claude-code", "UserPromptSubmit",
                                          ups(sid="other000-1111-4111-8111-111111111111")))


@pytest.mark.parametrize("prompt", ["fix it", "thanks!", "ok", "  continue  ", "the and of to"])
def test_short_trivial_or_termless_prompts_inject_nothing(home, vault, prompt):
    p = hook(home, "claude-code", "UserPromptSubmit", ups(prompt=prompt))
    ok(p)
    assert p.stdout == b""


def test_codex_gemini_pi_channels(home, vault):
    assert "heartbeat" in context_of(hook(home, "codex", "UserPromptSubmit", ups()))
    p = hook(home, "gemini", "BeforeAgent", ups(sid="gem00000-1111", hook_event_name="BeforeAgent"))
    ok(p)
    out = json.loads(p.stdout)  # one JSON object and nothing else
    assert out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert "heartbeat" in out["hookSpecificOutput"]["additionalContext"]
    pi = {"shim": "chrollo-pi", "shim_version": 1, "harness": "pi", "hook_event_name": "before_agent_start",
          "session_id": "pi000000-1111", "transcript_path": None, "cwd": "/nonexistent",
          "prompt": PROMPT, "image_count": 0}
    p = hook(home, "pi", "before-agent-start", pi)
    ok(p)
    assert p.stdout.decode().startswith(RECALL_HEADER)  # plain text for the extension


def test_budget_presets_bound_the_output(home, vault, make_session):
    for i in range(12):
        make_session(vault, f"long{i:04d}-1111-4111-8111-111111111111", f"2026-10-{i + 1:02d}T10:00:00", [
            ("user", "10:00:00", "websocket reconnect flaky test billing service " + "detail " * 150),
            ("agent", "10:01:00", ["websocket reconnect billing service flaky test fixed. " * 20]),
        ])
    sizes = {}
    for preset, cap in (("small", 2000), ("medium", 6000), ("large", 9000)):
        text = context_of(hook(home, "claude-code", "UserPromptSubmit",
                               ups(sid=f"budget{preset}-1"), "--budget", preset))
        assert len(text) <= cap
        sizes[preset] = len(text)
    assert sizes["small"] < sizes["medium"] < sizes["large"]
    text = context_of(hook(home, "claude-code", "UserPromptSubmit", ups(sid="env0000-1"),
                           CHROLLO_RECALL_BUDGET="small"))
    assert len(text) <= 2000


def test_huge_prompt_stays_under_claude_cap(home, vault):
    p = hook(home, "claude-code", "UserPromptSubmit", ups(prompt=PROMPT + " x" * 2_500_000))
    if p.stdout:
        assert len(context_of(p)) < 10_000
    ok(p)


def test_recalled_text_is_never_captured_back(home, vault, tmp_path):
    """A transcript that holds chrollo's injected block (as a user record) stores no trace of it."""
    text = context_of(hook(home, "claude-code", "UserPromptSubmit", ups(sid="cap00000-1111")))
    tr = tmp_path / "t.jsonl"
    recs = [{"type": "user", "uuid": "1", "timestamp": "2026-11-01T10:00:00Z", "message": {"role": "user", "content": text}},
            {"type": "user", "uuid": "2", "timestamp": "2026-11-01T10:00:01Z", "message": {"role": "user", "content": PROMPT}},
            {"type": "assistant", "uuid": "3", "timestamp": "2026-11-01T10:00:02Z",
             "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "Looking at it."}]}}]
    tr.write_text("".join(json.dumps(r) + "\n" for r in recs))
    ok(hook(home, "claude-code", "Stop", {"session_id": "cap00000-1111", "transcript_path": str(tr),
                                          "cwd": "/nonexistent", "hook_event_name": "Stop"}))
    f = next(vault.glob("*cap00000*"))
    assert RECALL_HEADER not in f.read_text() and "Looking at it." in f.read_text()
