"""Capture through real `chrollo hook` processes: fixture payloads → session files, exactly once."""
from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hookkit import SHARED_FIXTURES, hook, ok, payload, sets, settled, snapshot, vault_files
from recorded import calls, materialise, replay

from chrollo.session import read_session

CLAUDE_RUN = "claude-code-2.1.330"  # tests/fixtures/recorded: a background subagent, /compact
SHELL = {"Bash", "bash", "shell", "exec_command", "shell_command", "run_shell_command"}


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
# Each test runs on the project's own fixtures (recorded from the real harnesses, expected turns
# from the fake model's script: tests/e2e/record.py); with ../shared beside the checkout, also on
# its sessions of older versions.

def expected(src: Path, harness: str, sid: str) -> Path:
    return src / "expected" / harness / f"{sid}.turns.json"


@pytest.mark.parametrize("src,name", sets(("Stop",), ("SessionStart.startup",)))
def test_claude_stop_matches_expected_turns_and_replay_writes_nothing(home, tmp_path, src, name):
    stop = payload("claude-code", name, tmp_path, src, hook_event_name="Stop")
    ok(hook(home, "claude-code", "Stop", stop))
    path = session_file(home, stop["session_id"])
    assert_expected(path, expected(src, "claude-code", stop["session_id"]))
    meta = read_session(path).meta
    assert meta["harness"] == "claude-code" and meta["cwd"] == stop["cwd"]
    before = snapshot(home)
    for event in ("Stop", "PreCompact", "SessionEnd", "SessionStart"):
        ok(hook(home, "claude-code", event, dict(stop, hook_event_name=event)))
    assert snapshot(home) == before


def _own_subagent(home, tmp):
    """Claude Code 2.1.330's background subagent (tests/fixtures/recorded): the turns up to its SubagentStop."""
    replay(CLAUDE_RUN, tmp, home, upto=5)
    stop = calls(CLAUDE_RUN)[4]
    assert stop["event"] == "SubagentStop"
    sub = tmp / stop["payload"]["agent_transcript_path"]
    first = json.loads(sub.read_text("utf-8").splitlines()[0])["message"]["content"]
    return (lambda: replay(CLAUDE_RUN, tmp, home, start=4, upto=5)), stop["payload"]["session_id"], \
        stop["payload"]["agent_id"], first, stop["payload"]["last_assistant_message"]


def _shared_subagent(home, tmp):
    """Claude Code 2.0.13's inline sidechain (../shared): one ``:sidechain`` file."""
    ok(hook(home, "claude-code", "Stop", payload("claude-code", "Stop", tmp, SHARED_FIXTURES)))
    sub = payload("claude-code", "SubagentStop", tmp, SHARED_FIXTURES)
    again = lambda: ok(hook(home, "claude-code", "SubagentStop", sub))  # noqa: E731
    again()
    return again, sub["session_id"], "sidechain", "Hey there! Just checking in", "Hello! I'm doing well"


@pytest.mark.parametrize("src,setup", sets((_own_subagent,), (_shared_subagent,)))
def test_claude_subagent_gets_its_own_file(home, tmp_path, src, setup):
    again, sid, agent, task, answer = setup(home, tmp_path)
    if (exp := expected(src, "claude-code", sid)).is_file():
        assert_expected(session_file(home, sid), exp)
    main = session_file(home, sid).read_text()
    assert task not in main and answer not in main  # the subagent's talk is not the main one's
    s = read_session(session_file(home, f"{sid}:{agent}"))
    assert s.meta["parent_session"] == sid
    assert [t.role for t in s.turns] == ["user", "agent"]
    assert s.turns[0].text.startswith(task) and s.turns[1].text.startswith(answer)
    assert "<system-reminder>" not in s.path.read_text()  # attachments and meta records are no turns
    before = snapshot(home)
    again()
    assert snapshot(home) == before


def _own_meta_subagent(tmp):
    """2.1.330's subagent transcript opens with attachments rendered as <system-reminder>s."""
    (sub,) = materialise(CLAUDE_RUN, tmp / "run", tmp / "work").rglob("agent-*.jsonl")
    body = dict(calls(CLAUDE_RUN)[4]["payload"])
    return sub.read_bytes(), body, "check the module and report", "The following deferred tools"


def _shared_meta_subagent(tmp):
    """2.1.39's compaction agent's file: isMeta records carrying hook context come first (taken
    as an ordinary subagent's: the compaction agent itself is left out, #33 item 13)."""
    rel = ("transcripts/claude-code/projects/-home-user-projects-spotter-worktrees-spotter-gqc/"
           "258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl")
    body = payload("claude-code", "SubagentStop", tmp, SHARED_FIXTURES, agent_id="fffbd0",
                   session_id="258c7280-ae70-4798-800f-63464d01a85d")
    return ((SHARED_FIXTURES / rel).read_bytes().replace(b"acompact-fffbd0", b"fffbd0"), body,
            "Your task is to create a detailed summary",
            "PostToolUse:Edit hook additional context")


@pytest.mark.parametrize("src,case", sets((_own_meta_subagent,), (_shared_meta_subagent,)))
def test_claude_subagent_file_with_meta_records(home, tmp_path, src, case):
    data, body, task, context = case(tmp_path)
    assert context.encode() in data  # the fixture does carry it
    (tmp_path / "sub.jsonl").write_bytes(data)
    body.update(agent_transcript_path=str(tmp_path / "sub.jsonl"), last_assistant_message=None,
                cwd=str(tmp_path), transcript_path=None)
    ok(hook(home, "claude-code", "SubagentStop", body))
    s = read_session(session_file(home, f"{body['session_id']}:{body['agent_id']}"))
    assert [t.role for t in s.turns] == ["user", "agent"]  # the meta records are not turns
    assert s.turns[0].text.startswith(task)
    assert context not in s.path.read_text()


@pytest.mark.parametrize("src,sid", sets(("01a20a38-b19b-7399-8f8c-b83a933d3059",),
                                         ("a9642bdf-2c10-4503-abb2-081990e56318",)))
def test_pi_events_match_expected_turns(home, tmp_path, src, sid):
    for event in ("before_agent_start", "agent_end", "session_shutdown"):
        ok(hook(home, "pi", event, payload("pi", event, tmp_path, src)))
    path = session_file(home, sid)
    assert_expected(path, expected(src, "pi", sid))  # every branch, file order
    before = snapshot(home)
    for event in ("before_agent_start", "agent_end", "session_shutdown"):
        ok(hook(home, "pi", event, payload("pi", event, tmp_path, src)))
    assert snapshot(home) == before


def _own_codex_gemini(home, tmp):
    return {}


def _shared_codex_gemini(home, tmp):
    """Older Codex (a notify program besides hooks) and Gemini (injected "Please continue.")."""
    before = snapshot(home)
    ok(hook(home, "codex", "notify", b"", json.dumps(json.loads(
        (SHARED_FIXTURES / "hooks/codex/notify.agent-turn-complete.argv.json").read_text()))))
    assert snapshot(home) == before
    return {"codex": (["why does the claude code label break here on the /team dashboard? [Image #1]",
                       "lets increase the width", "commit"], 3, ["apply_patch"]),
            "gemini": (["You are an AI agent that brings the power of Gemini", "幫我做一個小修改"], 1,
                       ["update_topic", "read_file"])}


@pytest.mark.parametrize("src,extra", sets((_own_codex_gemini,), (_shared_codex_gemini,)))
def test_codex_and_gemini_fixture_events(home, tmp_path, src, extra):
    order = {"codex": ("SessionStart", "UserPromptSubmit", "Stop"),
             "gemini": ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd")}
    for harness, events in order.items():
        bodies = [payload(harness, e, tmp_path, src) for e in events if (src / "hooks" / harness / f"{e}.json").is_file()]
        for body in bodies:
            ok(hook(home, harness, body["hook_event_name"], body))
        path = session_file(home, bodies[-1]["session_id"])
        assert "System: Please continue." not in path.read_text()
        if (exp := expected(src, harness, bodies[-1]["session_id"])).is_file():
            assert_expected(path, exp)
    for harness, (prompts, at, tools) in extra(home, tmp_path).items():
        got = turns_of(session_file(home, payload(harness, order[harness][-1], tmp_path, src)["session_id"]))
        assert [t[1][:len(p)] for t, p in zip([t for t in got if t[0] == "user"], prompts)] == prompts
        assert got[at][2][:len(tools)] == tools
    before = snapshot(home)
    ok(hook(home, "gemini", "AfterAgent", payload("gemini", "AfterAgent", tmp_path, src)))
    assert snapshot(home) == before


# ----------------------------------------------------------------------------- catch-up and lag

def prompt_lines(lines: list) -> list:
    """Indexes of the Claude Code records that are typed prompts (string content, not meta)."""
    out = []
    for i, ln in enumerate(lines):
        r = json.loads(ln)
        if r.get("type") == "user" and not r.get("isMeta") and not r.get("isSidechain") and \
                isinstance(r.get("message", {}).get("content"), str) and \
                not r["message"]["content"].startswith(("<command-", "<local-command", "Caveat:")):
            out.append(i)
    return out


@pytest.mark.parametrize("src,name", sets(("Stop",), ("SessionStart.startup",)))
def test_skipped_stop_is_caught_up_by_the_next_prompt(home, tmp_path, src, name):
    base = payload("claude-code", name, tmp_path, src, hook_event_name="UserPromptSubmit")
    tr = Path(base["transcript_path"])
    lines = tr.read_bytes().splitlines(keepends=True)
    first, second = prompt_lines(lines)[:2]
    prompt1 = json.loads(lines[first])["message"]["content"]
    tr.write_bytes(b"".join(lines[:first + 1]))  # up to the first prompt
    ok(hook(home, "claude-code", "UserPromptSubmit", dict(base, prompt=prompt1)))
    assert vault_files(home) == []  # the turn is not finished yet
    tr.write_bytes(b"".join(lines[:second + 1]))  # turn 1 answered, Stop never ran; prompt 2 recorded
    ok(hook(home, "claude-code", "UserPromptSubmit", dict(base, prompt=json.loads(lines[second])["message"]["content"])))
    got = turns_of(session_file(home, base["session_id"]))
    assert [g[0] for g in got] == ["user", "agent"] and got[0][1] == prompt1.strip()
    tr.write_bytes(b"".join(lines))
    ok(hook(home, "claude-code", "Stop", dict(base, hook_event_name="Stop")))
    assert_expected(session_file(home, base["session_id"]), expected(src, "claude-code", base["session_id"]))
    state = next((home / "state" / "capture").glob("*.json"))
    (offset,) = [v["offset"] for v in json.loads(state.read_text())["vaults"].values()]
    assert offset == sum(len(x) for x in lines[:prompt_lines(lines)[-1]])  # next read starts at the last prompt


@pytest.mark.parametrize("src", sets((), ()))
def test_lagging_transcript_uses_last_assistant_message_once(home, tmp_path, src):
    stop = payload("claude-code", "Stop", tmp_path, src)
    final = stop["last_assistant_message"]
    tr = Path(stop["transcript_path"])
    lines = tr.read_bytes().splitlines(keepends=True)
    quoted = json.dumps(final[:40], ensure_ascii=False)[1:-1].encode()
    cut = max(i for i, ln in enumerate(lines) if quoted in ln and b'"assistant"' in ln)
    tr.write_bytes(b"".join(lines[:cut]))  # the final message is not flushed yet
    ok(hook(home, "claude-code", "Stop", stop))
    settled(home)  # (the pass the hook left behind waited for it, then wrote the payload's copy)
    path = session_file(home, stop["session_id"])
    tail = final.strip().splitlines()[-1]

    def answers():
        return [t for t in turns_of(path) if t[0] == "agent" and tail in t[1]]
    assert len(answers()) == 1
    tr.write_bytes(b"".join(lines))  # it lands later
    ok(hook(home, "claude-code", "SessionEnd", dict(stop, hook_event_name="SessionEnd")))
    assert len(answers()) == 1
    roles = [t[0] for t in turns_of(path)]
    assert roles == ["user", "agent"] * (len(roles) // 2) and roles


@pytest.mark.parametrize("src", sets((), ()))
def test_payload_only_capture_without_transcript(home, tmp_path, src):
    ups = payload("codex", "UserPromptSubmit", tmp_path, src, transcript_path=None)
    stop = payload("codex", "Stop", tmp_path, src, transcript_path=None)
    ok(hook(home, "codex", "UserPromptSubmit", ups))
    ok(hook(home, "codex", "Stop", stop))
    got = turns_of(session_file(home, ups["session_id"]))
    assert got[0][:2] == ("user", ups["prompt"].strip())
    assert got[1][0] == "agent" and got[1][1] == stop["last_assistant_message"].strip()
    before = snapshot(home)
    ok(hook(home, "codex", "Stop", stop))
    assert snapshot(home) == before


def _own_pi_abort(tmp):
    end = payload("pi", "agent_end", tmp, transcript_path=None)
    aborted = dict(end, messages=[{"role": "assistant", "content": [], "stopReason": "aborted",
                                   "errorMessage": "Request was aborted", "timestamp": 1795467843000}])
    return aborted, dict(end, messages=[m for m in end["messages"] if m["role"] != "user"])


def _shared_pi_abort(tmp):
    aborted = json.loads((SHARED_FIXTURES / "hooks/bad/pi-agent_end-aborted-empty.json").read_text())
    return aborted, payload("pi", "agent_end.no-user-message", tmp, SHARED_FIXTURES)


@pytest.mark.parametrize("src,case", sets((_own_pi_abort,), (_shared_pi_abort,)))
def test_pi_aborted_turn_keeps_prompt_for_retry(home, tmp_path, src, case):
    start = payload("pi", "before_agent_start", tmp_path, src, transcript_path=None)
    ok(hook(home, "pi", "before_agent_start", start))
    aborted, retry = case(tmp_path)
    ok(hook(home, "pi", "agent_end", dict(aborted, transcript_path=None)))
    assert vault_files(home) == []
    ok(hook(home, "pi", "agent_end", dict(retry, transcript_path=None)))
    got = turns_of(session_file(home, start["session_id"]))
    assert [g[0] for g in got] == ["user", "agent"]
    assert got[0][1] == start["prompt"].strip()
    said = [c for m in retry["messages"] if m["role"] == "assistant" for c in m["content"] if c.get("type") == "text"]
    called = [c["name"] for m in retry["messages"] if m["role"] == "assistant" for c in m["content"]
              if c.get("type") == "toolCall"]
    assert said and said[-1]["text"].strip()[:40] in got[1][1]
    assert got[1][2] == ["$" if t in SHELL else t for t in called]


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


@pytest.mark.parametrize("src,name", sets(("Stop",), ("SessionStart.startup",)))
def test_capture_reads_only_the_last_turn(home, tmp_path, src, name):
    """The watermark: a second capture parses from the last prompt, not from the top."""
    stop = payload("claude-code", name, tmp_path, src, hook_event_name="Stop")
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
