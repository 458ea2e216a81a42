"""Capture through real `chrollo hook` processes: fixture payloads → session files, exactly once."""
from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hookkit import FIXTURES, hook, needs_fixtures, needs_shared, ok, payload, snapshot, vault_files

from chrollo.session import read_session

pytestmark = needs_fixtures
SHELL = {"Bash", "bash", "shell", "exec_command"}


def turns_of(path: Path) -> list:
    return [(t.role, t.text, [_tool_name(x) for x in t.tools]) for t in read_session(path).turns]


def _tool_name(line: str) -> str:
    return line[len("<tool>"):].split(" ", 1)[0].removesuffix("</tool>")


def assert_expected(path: Path, expected_file: Path, active_only: bool = False) -> None:
    expected = json.loads(expected_file.read_text("utf-8"))
    if active_only:
        expected = [e for e in expected if e.get("on_active_branch", True)]
    got = turns_of(path)
    assert [g[0] for g in got] == [e["role"] for e in expected]
    for (role, text, tools), e in zip(got, expected):
        want = " ".join(e["text_first_80_chars"].split())
        assert " ".join(text[:80].split()).startswith(want) or want.startswith(" ".join(text[:80].split())), (text, e)
        assert tools == ["$" if t in SHELL else t for t in e["tool_calls"]]


def session_file(home: Path, sid: str) -> Path:
    found = [p for p in vault_files(home) if read_session(p).meta.get("session_id") == sid]
    assert len(found) == 1, [p.name for p in vault_files(home)]
    return found[0]


# ----------------------------------------------------------------------------- expected turns

@needs_shared
def test_claude_stop_matches_expected_turns_and_replay_writes_nothing(home, tmp_path):
    sid = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
    stop = payload("claude-code", "SessionStart.startup", tmp_path, hook_event_name="Stop")
    ok(hook(home, "claude-code", "Stop", stop))
    path = session_file(home, sid)
    assert_expected(path, FIXTURES / "expected/claude-code" / f"{sid}.turns.json")
    meta = read_session(path).meta
    assert meta["harness"] == "claude-code" and meta["cwd"] == stop["cwd"]
    before = snapshot(home)
    for event in ("Stop", "PreCompact", "SessionEnd", "SessionStart"):
        ok(hook(home, "claude-code", event, dict(stop, hook_event_name=event)))
    assert snapshot(home) == before


@needs_shared
def test_claude_sidechain_session_and_subagent_file(home, tmp_path):
    sid = "609efeca-2f51-4118-b077-e91c9fe63f73"
    ok(hook(home, "claude-code", "Stop", payload("claude-code", "Stop", tmp_path)))
    main = session_file(home, sid)
    assert_expected(main, FIXTURES / "expected/claude-code" / f"{sid}.turns.json")
    assert "Hey there! Just checking in" not in main.read_text()  # the sidechain is not the main talk
    sub = payload("claude-code", "SubagentStop", tmp_path)
    ok(hook(home, "claude-code", "SubagentStop", sub))
    subfile = session_file(home, f"{sid}:sidechain")  # inline (pre-2.0.42) subagents: one file
    s = read_session(subfile)
    assert s.meta["parent_session"] == sid
    assert [t.role for t in s.turns] == ["user", "agent"]
    assert s.turns[0].text.startswith("Hey there! Just checking in")
    assert s.turns[1].text.startswith("Hello! I'm doing well")
    before = snapshot(home)
    ok(hook(home, "claude-code", "SubagentStop", sub))
    assert snapshot(home) == before


@needs_shared
def test_claude_subagent_file_with_meta_records(home, tmp_path):
    rel = ("transcripts/claude-code/projects/-home-user-projects-spotter-worktrees-spotter-gqc/"
           "258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl")
    body = payload("claude-code", "SubagentStop", tmp_path, agent_id="acompact-fffbd0",
                   session_id="258c7280-ae70-4798-800f-63464d01a85d", last_assistant_message=None)
    body["agent_transcript_path"] = str(tmp_path / "sub.jsonl")
    (tmp_path / "sub.jsonl").write_bytes((FIXTURES / rel).read_bytes())
    ok(hook(home, "claude-code", "SubagentStop", body))
    s = read_session(session_file(home, "258c7280-ae70-4798-800f-63464d01a85d:acompact-fffbd0"))
    assert [t.role for t in s.turns] == ["user", "agent"]  # the isMeta hook context is not a turn
    assert s.turns[0].text.startswith("Your task is to create a detailed summary")
    assert "PostToolUse:Edit hook additional context" not in s.path.read_text()


@needs_shared
def test_pi_events_match_expected_turns(home, tmp_path):
    sid = "a9642bdf-2c10-4503-abb2-081990e56318"
    for event in ("before_agent_start", "agent_end", "session_shutdown"):
        ok(hook(home, "pi", event, payload("pi", event, tmp_path)))
    path = session_file(home, sid)
    assert_expected(path, FIXTURES / "expected/pi" / f"{sid}.turns.json")  # every branch, file order
    before = snapshot(home)
    for event in ("before_agent_start", "agent_end", "session_shutdown"):
        ok(hook(home, "pi", event, payload("pi", event, tmp_path)))
    assert snapshot(home) == before


@needs_shared
def test_codex_and_gemini_fixture_events(home, tmp_path):
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        ok(hook(home, "codex", event, payload("codex", event, tmp_path)))
    codex = turns_of(session_file(home, "019c16bd-a0fc-7293-855d-2948ce5dc471"))
    assert [t[1] for t in codex if t[0] == "user"] == [
        "why does the claude code label break here on the /team dashboard? [Image #1]",
        "lets increase the width", "commit"]
    assert codex[3][2] == ["apply_patch"] and codex[3][1].startswith("Increased the Agent Usage")
    for event in ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"):
        ok(hook(home, "gemini", event, payload("gemini", event, tmp_path)))
    gem = turns_of(session_file(home, "0ab84937-9fe7-4284-986a-33c832af0b6a"))
    assert [t[0] for t in gem] == ["user", "agent", "user", "agent"]
    assert gem[2][1].startswith("幫我做一個小修改")
    assert "System: Please continue." not in "".join(t[1] for t in gem)
    assert gem[1][2][:2] == ["update_topic", "read_file"]
    before = snapshot(home)
    ok(hook(home, "codex", "notify", b"", json.dumps(json.loads(
        (FIXTURES / "hooks/codex/notify.agent-turn-complete.argv.json").read_text()))))
    ok(hook(home, "gemini", "AfterAgent", payload("gemini", "AfterAgent", tmp_path)))
    assert snapshot(home) == before


# ----------------------------------------------------------------------------- catch-up and lag

def _claude_lines():
    rel = "transcripts/claude-code/projects/-home-user-projects-spotter/d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl"
    return (FIXTURES / rel).read_bytes().splitlines(keepends=True)


@needs_shared
def test_skipped_stop_is_caught_up_by_the_next_prompt(home, tmp_path):
    lines = _claude_lines()
    tr = tmp_path / "t.jsonl"
    base = payload("claude-code", "UserPromptSubmit", tmp_path)
    base["transcript_path"] = str(tr)
    tr.write_bytes(b"".join(lines[:4]))  # up to the first prompt
    ok(hook(home, "claude-code", "UserPromptSubmit", dict(base, prompt="start phoenix in background")))
    assert vault_files(home) == []  # the turn is not finished yet
    tr.write_bytes(b"".join(lines[:26]))  # turn 1 answered, Stop never ran; prompt 2 recorded
    ok(hook(home, "claude-code", "UserPromptSubmit", base))
    got = turns_of(session_file(home, base["session_id"]))
    assert [g[0] for g in got] == ["user", "agent"] and got[0][1] == "start phoenix in background"
    tr.write_bytes(b"".join(lines))
    ok(hook(home, "claude-code", "Stop", dict(base, hook_event_name="Stop")))
    assert_expected(session_file(home, base["session_id"]),
                    FIXTURES / "expected/claude-code/d6e0bada-1959-4eec-a9d2-0bfade768d8f.turns.json")
    state = next((home / "state" / "capture").glob("*.json"))
    (offset,) = [v["offset"] for v in json.loads(state.read_text())["vaults"].values()]
    assert offset == sum(len(x) for x in lines[:25])  # next read starts at the last prompt


@needs_shared
def test_lagging_transcript_uses_last_assistant_message_once(home, tmp_path):
    rel = "transcripts/claude-code/projects/-home-user-dev-studio/609efeca-2f51-4118-b077-e91c9fe63f73.jsonl"
    lines = (FIXTURES / rel).read_bytes().splitlines(keepends=True)
    stop = payload("claude-code", "Stop", tmp_path)
    tr = Path(stop["transcript_path"])
    tr.write_bytes(b"".join(lines[:9]))  # the final message is not flushed yet
    ok(hook(home, "claude-code", "Stop", stop))
    path = session_file(home, stop["session_id"])
    assert "Pretty friendly agent!" in path.read_text()
    tr.write_bytes(b"".join(lines))  # it lands later
    ok(hook(home, "claude-code", "SessionEnd", dict(stop, hook_event_name="SessionEnd")))
    text = path.read_text()
    assert text.count("Pretty friendly agent!") == 1
    assert [t[0] for t in turns_of(path)] == ["user", "agent"]


@needs_shared
def test_payload_only_capture_without_transcript(home, tmp_path):
    ups = payload("codex", "UserPromptSubmit", tmp_path, transcript_path=None)
    stop = payload("codex", "Stop", tmp_path, transcript_path=None)
    ok(hook(home, "codex", "UserPromptSubmit", ups))
    ok(hook(home, "codex", "Stop", stop))
    got = turns_of(session_file(home, ups["session_id"]))
    assert got[0][:2] == ("user", "lets increase the width")
    assert got[1][0] == "agent" and got[1][1].startswith("Increased the Agent Usage")
    before = snapshot(home)
    ok(hook(home, "codex", "Stop", stop))
    assert snapshot(home) == before


@needs_shared
def test_pi_aborted_turn_keeps_prompt_for_retry(home, tmp_path):
    start = payload("pi", "before_agent_start", tmp_path, transcript_path=None)
    ok(hook(home, "pi", "before_agent_start", start))
    aborted = json.loads((FIXTURES / "hooks/bad/pi-agent_end-aborted-empty.json").read_text())
    aborted["transcript_path"] = None
    ok(hook(home, "pi", "agent_end", aborted))
    assert vault_files(home) == []
    retry = payload("pi", "agent_end.no-user-message", tmp_path, transcript_path=None)
    ok(hook(home, "pi", "agent_end", retry))
    got = turns_of(session_file(home, start["session_id"]))
    assert [g[0] for g in got] == ["user", "agent"]
    assert got[0][1] == "instead write a limerick to limerick.txt"
    assert got[1][2] == ["write"] and "limerick" in got[1][1]


def test_short_prompts_are_not_stored(home, tmp_path):
    ups = payload("codex", "UserPromptSubmit", tmp_path, transcript_path=None, prompt="ok")
    ok(hook(home, "codex", "UserPromptSubmit", ups))
    ok(hook(home, "codex", "Stop", payload("codex", "Stop", tmp_path, transcript_path=None)))
    assert [g[0] for g in turns_of(session_file(home, ups["session_id"]))] == ["agent"]


def test_deleted_memory_file_is_recreated_and_turn_goes_on(home, tmp_path):
    ok(hook(home, "codex", "UserPromptSubmit", payload("codex", "UserPromptSubmit", tmp_path, transcript_path=None)))
    ok(hook(home, "codex", "Stop", payload("codex", "Stop", tmp_path, transcript_path=None)))
    (f,) = vault_files(home)
    f.unlink()
    ups = payload("codex", "UserPromptSubmit", tmp_path, transcript_path=None, prompt="and make the chart taller")
    ok(hook(home, "codex", "UserPromptSubmit", ups))
    ok(hook(home, "codex", "Stop", dict(payload("codex", "Stop", tmp_path, transcript_path=None),
                                        last_assistant_message="Made it 320px tall.")))
    (g,) = vault_files(home)
    assert "make the chart taller" in g.read_text() and "320px" in g.read_text()


# ----------------------------------------------------------------------------- concurrency

def test_parallel_subagents_and_replays_lose_and_duplicate_nothing(home, tmp_path):
    sid = "11111111-2222-4333-8444-555555555555"
    main = tmp_path / "main.jsonl"
    recs = []

    def rec(**kw):
        recs.append(json.dumps(dict(sessionId=sid, cwd=str(tmp_path), timestamp="2026-10-01T10:00:00Z", **kw)))

    rec(type="user", uuid="u0", message={"role": "user", "content": "run eight reviewers in parallel"})
    rec(type="assistant", uuid="a0", message={"id": "m0", "role": "assistant",
                                              "content": [{"type": "text", "text": "Starting eight reviewers."}]})
    main.write_text("\n".join(recs) + "\n")
    jobs = []
    for i in range(8):
        sub = tmp_path / f"agent-r{i}.jsonl"
        sub.write_text("\n".join(json.dumps(dict(
            sessionId=sid, isSidechain=True, agentId=f"r{i}", type=t, uuid=f"s{i}{t}",
            timestamp="2026-10-01T10:00:05Z", message=m)) for t, m in (
            ("user", {"role": "user", "content": f"review module number {i}"}),
            ("assistant", {"id": f"ms{i}", "role": "assistant",
                           "content": [{"type": "text", "text": f"module {i} looks fine"}]}))) + "\n")
        jobs.append(("SubagentStop", {"session_id": sid, "transcript_path": str(main), "cwd": str(tmp_path),
                                      "hook_event_name": "SubagentStop", "agent_id": f"r{i}",
                                      "agent_transcript_path": str(sub),
                                      "last_assistant_message": f"module {i} looks fine"}))
        jobs.append(("Stop", {"session_id": sid, "transcript_path": str(main), "cwd": str(tmp_path),
                              "hook_event_name": "Stop", "last_assistant_message": "Starting eight reviewers."}))
    with ThreadPoolExecutor(8) as ex:
        for p in ex.map(lambda j: hook(home, "claude-code", j[0], j[1]), jobs):
            ok(p)
    assert turns_of(session_file(home, sid)) == [
        ("user", "run eight reviewers in parallel", []), ("agent", "Starting eight reviewers.", [])]
    for i in range(8):
        assert turns_of(session_file(home, f"{sid}:r{i}")) == [
            ("user", f"review module number {i}", []), ("agent", f"module {i} looks fine", [])]


@needs_shared
def test_capture_reads_only_the_last_turn(home, tmp_path):
    """The watermark: a second capture parses from the last prompt, not from the top."""
    stop = payload("claude-code", "SessionStart.startup", tmp_path, hook_event_name="Stop")
    ok(hook(home, "claude-code", "Stop", stop))
    tr = Path(stop["transcript_path"])
    # Garbage before the watermark would break a reader that starts at byte 0.
    data = tr.read_bytes()
    (state,) = json.loads(next((home / "state" / "capture").glob("*.json")).read_text())["vaults"].values()
    cut = state["offset"]
    assert 0 < cut < len(data)
    tr.write_bytes(b"\x00" * cut + data[cut:])
    before = snapshot(home)
    ok(hook(home, "claude-code", "Stop", stop))
    assert snapshot(home) == before
    assert subprocess.run([sys.executable, "-c", "print(1)"]).returncode == 0


def test_everything_a_hook_creates_is_owner_only(home, tmp_path):
    ok(hook(home, "codex", "UserPromptSubmit", payload("codex", "UserPromptSubmit", tmp_path)))
    ok(hook(home, "codex", "Stop", payload("codex", "Stop", tmp_path)))
    ok(hook(home, "codex", "Stop", b"not json"))  # and the log
    made = [home, *home.rglob("*")]
    assert len(made) > 8 and (home / "logs" / "hooks.log").exists()
    for p in made:
        assert p.stat().st_mode & 0o077 == 0, p
