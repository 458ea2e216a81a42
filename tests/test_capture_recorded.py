"""Capture bugs the real harnesses showed (issue 18, items 1-6, 8 and 10), replayed from runs
recorded at the pinned versions: live capture must write the right turns, and
`chrollo import` over the same transcripts must write the same bytes."""
from __future__ import annotations

import json
from pathlib import Path

from hookkit import hook, ok, vault_files
from recorded import calls, import_into, materialise, replay, vault_bytes

from chrollo.harness import adapter
from chrollo.session import read_session

CLAUDE = "claude-code-2.1.330"
CODEX = "codex-0.169.0"
GEMINI = "gemini-0.61.0"
PI = "pi-0.73.1"


def turns(path) -> list:
    return [(t.role, t.text, t.tools) for t in read_session(path).turns]


def by_session(home) -> dict:
    return {read_session(p).meta["session_id"]: p for p in vault_files(home)}


def assert_import_equals_live(live_home, tmp_path, harness: str, name: str) -> dict:
    live = vault_bytes(live_home / "memories")
    src = materialise(name, tmp_path, tmp_path / "work")
    imported_home = tmp_path / "imported"
    out = import_into(imported_home, harness, src)
    assert out["failed"] == 0 and out["skipped"] == 0, out
    assert vault_bytes(imported_home / "memories") == live
    again = import_into(imported_home, harness, src)
    assert again["turns"] == 0
    return live


# ----------------------------------------------------------------------------- Codex 0.169 (item 3)

def test_codex_0169_import_has_the_prompts_and_equals_live(home, tmp_path):
    replay(CODEX, tmp_path, home)
    (f,) = vault_files(home)
    assert turns(f) == [("user", "create the notes file", []), ("agent", "Done.", []),
                        ("user", "now add a heading to it", []), ("agent", "Done.", []),
                        ("user", "and commit it", []), ("agent", "Done.", [])]
    assert "environment_context" not in f.read_text()
    assert_import_equals_live(home, tmp_path, "codex", CODEX)


def test_codex_0169_adapter_reads_prompts_once_without_injected_context(tmp_path):
    src = materialise(CODEX, tmp_path, tmp_path / "work")
    (rollout,) = src.rglob("rollout-*.jsonl")
    tr = adapter("codex").read_transcript(str(rollout), 0)
    assert [(u.role, u.text) for u in tr.units if u.role == "user"] == [
        ("user", "create the notes file"), ("user", "now add a heading to it"), ("user", "and commit it")]
    # the older event (user_message) beside the new one (item_completed) is still one prompt
    lines = rollout.read_text().splitlines(keepends=True)
    i = next(n for n, ln in enumerate(lines) if '"UserMessage"' in ln)
    old = json.loads(lines[i])
    old["payload"] = {"type": "user_message", "message": "create the notes file", "images": []}
    rollout.write_text("".join(lines[:i] + [json.dumps(old) + "\n"] + lines[i:]))
    tr = adapter("codex").read_transcript(str(rollout), 0)
    assert [u.text for u in tr.units if u.role == "user"].count("create the notes file") == 1


# ----------------------------------------------------------------------------- identical replies (item 10)

def test_identical_replies_without_a_transcript_are_all_kept(home, tmp_path):
    """Codex hooks without a transcript (transcript_path null): three prompts, three "Done."."""
    replay(CODEX, tmp_path, home, change=lambda b: dict(b, transcript_path=None))
    (f,) = vault_files(home)
    assert [t[:2] for t in turns(f)] == [("user", "create the notes file"), ("agent", "Done."),
                                         ("user", "now add a heading to it"), ("agent", "Done."),
                                         ("user", "and commit it"), ("agent", "Done.")]
    before = f.read_bytes()
    # a replayed Stop (the same turn reported twice) still writes nothing
    last_stop = [c for c in calls(CODEX) if c["event"] == "Stop"][-1]["payload"]
    ok(hook(home, "codex", "Stop", dict(last_stop, transcript_path=None, cwd=str(tmp_path / "work"))))
    assert f.read_bytes() == before


# ----------------------------------------------------------------------------- Claude Code 2.1.330 (items 4-6)

def test_claude_2_1_330_background_subagent_compact_and_resume(home, tmp_path):
    replay(CLAUDE, tmp_path, home)
    files = by_session(home)
    sid = "ec4e8646-6fa2-482c-a8c1-9455d7b32d84"
    # item 4: /compact's SubagentStop (agent_type "", no transcript) writes no sidechain file
    assert set(files) == {sid, f"{sid}:a5c94e535a9c4460d"}
    main = turns(files[sid])
    # item 5: the task notification is no [User] turn; a one-line marker opens the agent's block
    assert [t[0] for t in main] == ["user", "agent", "user", "agent", "agent", "user", "agent"]
    assert all("task-notification" not in t[1] for t in main if t[0] == "user")
    assert main[4][2] == ['<tool>task-notification Agent "check module" finished</tool>']
    text = files[sid].read_text()
    assert "<output-file>" not in text and "<result>" not in text
    assert main[5][1] == "ping again after compact"
    # the subagent's own file keeps its turns
    assert turns(files[f"{sid}:a5c94e535a9c4460d"]) == [
        ("user", "check the module and report", []), ("agent", "subagent result: the module is fine", [])]
    # item 6 + all of the above: import writes the same bytes
    assert_import_equals_live(home, tmp_path, "claude-code", CLAUDE)


def test_claude_records_of_unknown_types_are_skipped(home, tmp_path):
    """Record types chrollo does not know (2.1.330 added many) never become turns, wherever
    they appear and whatever they carry; the API request copies are not even parsed."""
    src = materialise(CLAUDE, tmp_path, tmp_path / "work")
    main = next(p for p in src.rglob("*.jsonl") if "subagents" not in p.parts)
    kinds = {json.loads(ln).get("type") for ln in main.read_text().splitlines()}
    assert {"atis-latch", "api-request", "api-request-shape", "api-request-blob", "cost-state",
            "tools-used", "attachment", "system", "last-prompt"} <= kinds
    hostile = [
        {"type": "api-request-blob", "sessionId": "x", "message": {"role": "user", "content": "INJECTED blob"}},
        {"type": "brand-new-record", "uuid": "n1", "message": {"role": "user", "content": "INJECTED new"}},
        {"type": "attachment", "attachment": {"type": "prompt_snapshot", "prompt": "INJECTED snapshot"},
         "message": {"role": "assistant", "content": [{"type": "text", "text": "INJECTED attachment"}]}},
        {"type": "system", "subtype": "stop_hook_summary", "content": "INJECTED system"},
        {"type": "api-request", "params": {"messages": [{"role": "user", "content": "x"}]}, "x": [[[[[[[[1]]]]]]]]},
    ]
    lines = main.read_text().splitlines(keepends=True)
    main.write_text("".join(lines[:5] + [json.dumps(h) + "\n" for h in hostile] + lines[5:]))
    tr = adapter("claude-code").read_transcript(str(main), 0)
    assert tr.skipped == 0
    assert not [u for u in tr.units if "INJECTED" in u.text]
    assert [u.text for u in tr.units if u.role == "user"] == [
        "ping please", "please spawn a background check of the module", "ping again after compact"]


# ----------------------------------------------------------------------------- Gemini 0.61 (items 1, 8)

def test_gemini_streamed_reply_is_stored_once_and_clean(home, tmp_path):
    """AfterAgent's prompt_response is the whole reply, a space, then the later stream chunks
    again ("pong from the fake model m the fa ke model"); the chat file holds the reply."""
    garbled = [c["payload"]["prompt_response"] for c in calls(GEMINI) if c["event"] == "AfterAgent"]
    assert garbled[0].startswith("pong from the fake model ") and len(garbled[0]) > 30  # the recording shows it
    cwd = replay(GEMINI, tmp_path, home)
    (f,) = vault_files(home)
    assert [t[:2] for t in turns(f)] == [
        ("user", "first question please\nchunks: 3"), ("agent", "pong from the fake model"),
        ("user", "second question\nsay: the second answer is here\nchunks: 4"), ("agent", "the second answer is here")]
    assert read_session(f).meta["cwd"] == str(cwd)
    # item 8: import takes the project's folder from ~/.gemini/tmp/<project>/.project_root
    assert_import_equals_live(home, tmp_path, "gemini", GEMINI)


def test_gemini_reply_the_chat_lacks_still_comes_from_the_payload(home, tmp_path):
    """The prefix rule only trusts a chat that holds the reply: with the reply missing there,
    AfterAgent's prompt_response is written (once)."""
    def no_reply_in_chat(body):
        p = body.get("transcript_path")
        if body["hook_event_name"] == "AfterAgent" and p:
            path = Path(p)
            path.write_text("".join(ln for ln in path.read_text().splitlines(keepends=True)
                                    if '"type":"gemini"' not in ln))
            return dict(body, prompt_response="the whole answer, from the payload only")
        return body
    assert [c["event"] for c in calls(GEMINI)[:2]] == ["BeforeAgent", "AfterAgent"]
    replay(GEMINI, tmp_path, home, change=no_reply_in_chat, upto=2)
    (f,) = vault_files(home)
    assert [t[:2] for t in turns(f)] == [("user", "first question please\nchunks: 3"),
                                         ("agent", "the whole answer, from the payload only")]


# ----------------------------------------------------------------------------- pi 0.73.1 (item 2)

def test_pi_attempt_cut_mid_stream_is_not_an_answer(home, tmp_path):
    cut = calls(PI)[1]["payload"]["messages"][-1]
    assert (cut["stopReason"], cut["errorMessage"]) == ("error", "terminated")  # what pi reported
    replay(PI, tmp_path, home)
    (f,) = vault_files(home)
    assert [t[:2] for t in turns(f)] == [
        ("user", "write me a haiku\ncut once\nchunks: 3\nsay: the real haiku arrives after a retry"),
        ("agent", "the real haiku arrives after a retry"),
        ("user", "and another one please"), ("agent", "pong from the fake model")]
    assert "the real hai\n" not in f.read_text()
    assert_import_equals_live(home, tmp_path, "pi", PI)


def test_pi_aborted_message_is_not_a_turn():
    pi = adapter("pi")
    for reason in ("error", "aborted"):
        assert pi.unit_of({"role": "assistant", "stopReason": reason, "timestamp": 1,
                           "content": [{"type": "text", "text": "half an ans"}]}) is None
    assert pi.unit_of({"role": "assistant", "stopReason": "stop", "timestamp": 1,
                       "content": [{"type": "text", "text": "a whole answer"}]}).text == "a whole answer"


def test_claude_subagent_of_a_first_turn_links_its_parent_as_import_does(home, tmp_path):
    # #33 item 12: a subagent whose SubagentStop comes before its parent's first Stop found no
    # parent file, so its Obsidian `parent` link was missing (parent_session set), though the
    # parent was written right after; import (parents first) linked it: live != import
    sid = "ec4e8646-6fa2-482c-a8c1-9455d7b32d84"
    second = "please spawn a background check of the module"

    def first_turn_only(body):  # the run's second turn, made its session's first
        path = Path(body["transcript_path"])
        lines = path.read_text("utf-8").splitlines(keepends=True)
        start = next(i for i, ln in enumerate(lines) if second in ln)  # (its queue record)
        path.write_text("".join(lines[start:]), "utf-8")
        return body
    replay(CLAUDE, tmp_path, home, change=first_turn_only, start=3, upto=6)
    files = by_session(home)
    assert set(files) == {sid, f"{sid}:a5c94e535a9c4460d"}
    assert turns(files[sid])[0][1] == second
    head = files[f"{sid}:a5c94e535a9c4460d"].read_text().split("\n---\n", 1)[0]
    assert f'parent: "[[{files[sid].stem}]]"' in head and f'parent_session: "{sid}"' in head
    live = vault_bytes(home / "memories")
    other = tmp_path / "imported"
    out = import_into(other, "claude-code", tmp_path / "transcripts")
    assert out["failed"] == 0 and vault_bytes(other / "memories") == live
