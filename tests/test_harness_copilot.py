"""GitHub Copilot CLI (issue 46): its camelCase hook payloads, its events.jsonl and its config
files, as the real binary (1.0.102) writes them — the events below are lines of a real run,
shortened."""
from __future__ import annotations

import json
import os

from conftest import run
from hookkit import hook, ok, vault_files

from chrollo.capture import to_turns
from chrollo.harness import adapter, canonical

SID = "46e081e8-be05-442c-83bc-ddd11f97fff2"
CWD = "/home/user/project"
STOP = 1796192208330   # the agentStop payload's timestamp, which its hook.start record repeats


def events(tmp_path, recall: str = "[chrollo-recall] Excerpts from past sessions") -> str:
    evs = [
        {"type": "session.start", "data": {"sessionId": SID, "version": 1, "producer": "copilot-agent",
                                           "copilotVersion": "1.0.102", "context": {"cwd": CWD}}},
        {"type": "hook.start", "data": {"hookType": "userPromptSubmitted",
                                        "input": {"sessionId": SID, "prompt": "run: echo hi-7\nsay: done it"}}},
        {"type": "hook.end", "data": {"hookType": "userPromptSubmitted", "success": True,
                                      "output": {"additionalContext": recall}}},
        {"type": "user.message", "data": {
            "content": "run: echo hi-7\nsay: done it",
            "transformedContent": "<current_datetime>2026-12-02T06:16:47.716+00:00</current_datetime>\n\n"
                                  f"run: echo hi-7\nsay: done it\n\n<system_reminder>\n{recall}\n</system_reminder>"}},
        {"type": "system.message", "data": {"role": "system", "content": "You are the GitHub Copilot CLI"}},
        {"type": "assistant.message", "data": {"messageId": "m1", "content": "", "toolRequests": [
            {"toolCallId": "call_1", "name": "bash", "arguments": {"command": "echo hi-7"}, "type": "function"}]}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "call_1", "success": True,
                                                     "result": {"content": "hi-7\n<shellId: 0 completed>"}}},
        {"type": "assistant.message", "data": {"messageId": "m2", "content": "done it", "toolRequests": []}},
        {"type": "hook.start", "data": {"hookType": "agentStop", "input": {"sessionId": SID, "timestamp": STOP}}},
    ]
    p = tmp_path / ".copilot" / "session-state" / SID / "events.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps({**e, "id": f"e{i}", "timestamp": f"2026-12-02T06:16:4{min(i, 9)}.000Z"},
                                    separators=(",", ":")) + "\n" for i, e in enumerate(evs)), "utf-8")
    return str(p)


def test_copilot_is_registered_under_its_names():
    assert canonical("copilot-cli") == canonical("GitHub-Copilot") == "copilot"


def test_events_keep_what_the_user_typed_not_the_transformed_prompt(tmp_path):
    tr = adapter("copilot").read_transcript(events(tmp_path, "an injected memory"), 0)
    turns = to_turns(tr.units)
    assert [t.role for t in turns] == ["user", "agent"]
    assert turns[0].parts == ["run: echo hi-7\nsay: done it"]
    assert turns[1].parts[0].name == "$" and turns[1].parts[0].arg == "echo hi-7" and turns[1].parts[1] == "done it"
    text = json.dumps([str(p) for t in turns for p in t.parts])
    assert "an injected memory" not in text and "system_reminder" not in text and "current_datetime" not in text
    assert "completed" not in text and "You are the GitHub Copilot CLI" not in text
    assert tr.session_id == SID and tr.cwd == CWD and tr.skipped == 0


def _until_in_vault(home, text: str, wait: float = 10) -> None:
    """Wait (at most ``wait`` seconds) for the pass a hook left behind to write ``text``."""
    import time

    deadline = time.monotonic() + wait
    while text not in "".join(f.read_text() for f in vault_files(home)) and time.monotonic() < deadline:
        time.sleep(0.1)


def _payload(**kw) -> dict:
    return {"sessionId": SID, "timestamp": 1796192207484, "cwd": CWD, **kw}


def test_the_recall_reply_is_the_additional_context_copilot_reads(home, tmp_path):
    p = hook(home, "copilot", "userPromptSubmitted", _payload(prompt="which port does the proxy use?"))
    ok(p)
    assert p.stdout == b"" or set(json.loads(p.stdout)) == {"additionalContext"}
    assert adapter("copilot").recall_text(adapter("copilot").reply("memory")) == "memory"
    assert adapter("copilot").reply("") == ""


def test_agent_stop_captures_the_turn_from_the_transcript(home, tmp_path):
    t = events(tmp_path)
    ok(hook(home, "copilot", "userPromptSubmitted", _payload(prompt="run: echo hi-7\nsay: done it")))
    ok(hook(home, "copilot", "agentStop", _payload(transcriptPath=t, stopReason="end_turn", stop_hook_active=False, timestamp=STOP)))
    (f,) = vault_files(home)
    text = f.read_text()
    assert 'harness: "copilot"' in text and text.count("[User]") == 1 and "> done it" in text
    assert "<tool>$ echo hi-7</tool>" in text and "system_reminder" not in text


def test_a_pascal_case_hook_s_snake_case_payload_is_read_too(home, tmp_path):
    ev = adapter("copilot").event_of({"session_id": SID, "cwd": CWD, "prompt": "hi", "hook_event_name": "UserPromptSubmitted"},
                                     "userPromptSubmitted")
    assert ev.session == SID and ev.prompt == "hi" and ev.action == "recall"


def test_install_writes_its_own_hooks_file_and_the_mcp_server_and_uninstall_removes_both(home, tmp_path):
    cop = tmp_path / "cop"
    (cop).mkdir()
    mcp = cop / "mcp-config.json"
    mcp.write_text('{"mcpServers": {"github": {"type": "http", "url": "https://example.invalid"}}}\n')
    before = mcp.read_bytes()
    assert run(["install", "copilot"], home, COPILOT_HOME=cop).returncode == 0
    hooks = json.loads((cop / "hooks" / "chrollo.json").read_text())["hooks"]
    assert set(hooks) == {"userPromptSubmitted", "agentStop", "preCompact", "sessionEnd"}
    assert hooks["agentStop"][0]["hooks"][0]["command"].endswith("hook agentStop --harness copilot")
    entry = json.loads(mcp.read_text())["mcpServers"]["chrollo"]
    assert entry["type"] == "local" and entry["tools"] == ["*"] and entry["args"][-1] == "mcp"
    assert run(["uninstall", "copilot"], home, COPILOT_HOME=cop).returncode == 0
    assert not (cop / "hooks" / "chrollo.json").exists() and mcp.read_bytes() == before


def test_a_turn_written_after_agent_stop_is_caught_up_when_it_lands(home, tmp_path):
    """Copilot CLI 1.0.102 writes a turn's events only as it exits, after its agentStop (and
    sessionEnd) hooks ran: the capture hook leaves a pass behind that writes the answer once
    the file holds it."""
    import time

    t = events(tmp_path)
    lines = open(t).read().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if '"assistant.message"' in ln)
    open(t, "w").write("".join(lines[:at]))            # what is on disk when agentStop fires
    ok(hook(home, "copilot", "userPromptSubmitted", _payload(prompt="run: echo hi-7\nsay: done it")))
    ok(hook(home, "copilot", "agentStop", _payload(transcriptPath=t, stopReason="end_turn", timestamp=STOP)))
    assert "> done it" not in "".join(f.read_text() for f in vault_files(home))   # (no half turn either)
    time.sleep(0.3)
    with open(t, "a") as fh:                            # Copilot CLI exits: the rest lands
        fh.write("".join(lines[at:]))
    _until_in_vault(home, "> done it")
    (f,) = vault_files(home)
    text = f.read_text()
    assert text.count("[User]") == 1 and text.count("> done it") == 1 and "<tool>$ echo hi-7</tool>" in text


def test_session_end_over_a_half_written_turn_waits_for_the_rest(home, tmp_path):
    """Copilot CLI writes events.jsonl in pieces as it exits: its sessionEnd hook can find the
    prompt and the tool call there but not the answer. That hook's catch-up waits for the turn
    as agentStop's does (seen in the e2e suite: it wrote the tool call, the pass left behind
    then the answer, as two [Agent] blocks where import writes one)."""
    import time

    t = events(tmp_path)
    lines = open(t).read().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if '"messageId":"m2"' in ln)
    end = {"type": "hook.start", "data": {"hookType": "sessionEnd", "input": {"sessionId": SID, "timestamp": STOP + 50}}}
    lines.append(json.dumps({**end, "id": "e-end", "timestamp": "2026-12-02T06:16:49.500Z"}, separators=(",", ":")) + "\n")
    open(t, "w").write("".join(lines[:at]))            # the prompt and the tool call, not the answer
    ok(hook(home, "copilot", "userPromptSubmitted", _payload(prompt="run: echo hi-7\nsay: done it")))
    ok(hook(home, "copilot", "agentStop", _payload(transcriptPath=t, stopReason="end_turn", timestamp=STOP)))
    ok(hook(home, "copilot", "sessionEnd", _payload(reason="complete", timestamp=STOP + 50),
            COPILOT_HOME=tmp_path / ".copilot"))   # (its payload names no file: the session id does)
    assert "echo hi-7" not in "".join(f.read_text() for f in vault_files(home))   # no half turn
    time.sleep(0.3)
    with open(t, "a") as fh:                            # the rest lands
        fh.write("".join(lines[at:]))
    _until_in_vault(home, "> done it")
    time.sleep(0.5)   # (both passes left behind have run)
    (f,) = vault_files(home)
    text = f.read_text()
    assert text.count("[User]") == 1 and text.count("[Agent]") == 1, text
    assert "<tool>$ echo hi-7</tool>\n> done it" in text, text


def test_a_first_turn_whose_events_file_does_not_exist_yet_is_caught_up_when_it_lands(home, tmp_path):
    """A new session's events.jsonl may not exist yet when agentStop fires (Copilot CLI writes
    it as it exits): the hook waits for it as for a file not yet holding the turn (seen in the
    e2e suite: the turn was lost, the hook having read a missing file as nothing to wait for)."""
    import time

    t = events(tmp_path)
    whole = open(t).read()
    os.remove(t)
    ok(hook(home, "copilot", "userPromptSubmitted", _payload(prompt="run: echo hi-7\nsay: done it")))
    ok(hook(home, "copilot", "agentStop", _payload(transcriptPath=t, stopReason="end_turn", timestamp=STOP)))
    time.sleep(0.3)
    with open(t, "w") as fh:                            # Copilot CLI exits: the file lands
        fh.write(whole)
    _until_in_vault(home, "> done it")
    (f,) = vault_files(home)
    text = f.read_text()
    assert text.count("[User]") == 1 and text.count("> done it") == 1, text


def test_the_next_prompt_catches_up_the_answer_before_its_own_prompt(home, tmp_path):
    """``userPromptSubmitted`` names no transcript; chrollo finds it by the session id, so a
    resumed session's earlier answer is written (before the new prompt) at the next prompt."""
    cop = tmp_path / ".copilot"
    t = events(tmp_path)
    ok(hook(home, "copilot", "userPromptSubmitted", _payload(prompt="run: echo hi-7\nsay: done it"),
            COPILOT_HOME=cop))
    ok(hook(home, "copilot", "userPromptSubmitted", _payload(prompt="and a second question"), COPILOT_HOME=cop))
    (f,) = vault_files(home)
    text = f.read_text()
    assert t.startswith(str(cop)) and text.count("> done it") == 1 and "<tool>$ echo hi-7</tool>" in text, text


def test_a_resumed_session_waits_for_its_own_agent_stop_not_the_last_run_s(home, tmp_path):
    """A resumed session's events.jsonl already holds the agentStop of its earlier run: the
    new turn is written once the record of this run's agentStop (its payload's timestamp) lands."""
    import time

    t = events(tmp_path)
    ok(hook(home, "copilot", "agentStop", _payload(transcriptPath=t, stopReason="end_turn", timestamp=STOP)))
    (f,) = vault_files(home)
    assert "> done it" in f.read_text()
    later = [{"type": "user.message", "data": {"content": "a resumed question about the disk"}},
             {"type": "assistant.message", "data": {"messageId": "m3", "content": "the disk has room", "toolRequests": []}},
             {"type": "hook.start", "data": {"hookType": "agentStop", "input": {"sessionId": SID, "timestamp": STOP + 9000}}}]
    ok(hook(home, "copilot", "userPromptSubmitted", _payload(prompt="a resumed question about the disk")))
    ok(hook(home, "copilot", "agentStop", _payload(transcriptPath=t, stopReason="end_turn", timestamp=STOP + 9000)))
    time.sleep(0.3)
    with open(t, "a") as fh:                            # this run exits: its events land
        fh.write("".join(json.dumps({**e, "id": f"r{i}", "timestamp": "2026-12-02T06:20:00.000Z"},
                                    separators=(",", ":")) + "\n" for i, e in enumerate(later)))
    _until_in_vault(home, "> the disk has room")
    text = f.read_text()
    assert text.count("[User]") == 2 and text.count("> the disk has room") == 1, text
