"""pi 1.x session files (#46), on transcripts the real pi 1.6.0 wrote (tests/fixtures/pi-1.6.0/):
a run an extension started with a message is stored labelled with what started it, never as
more of the previous answer; ``role: "system"`` messages and ``context_edit`` entries are no
turns; live capture (``agent_end``) and import write the same bytes."""
from __future__ import annotations

import json
import shutil

import pytest

from hookkit import hook, ok
from recorded import import_into, vault_bytes

from chrollo.harness import adapter
from chrollo.session import read_session

from conftest import ROOT

FIX = ROOT / "tests" / "fixtures" / "pi-1.6.0"
pi = adapter("pi")


def entries(name: str) -> list:
    return [json.loads(line) for line in (FIX / name).read_text("utf-8").splitlines()]


def test_a_run_started_by_an_extensions_message_is_labelled_with_what_started_it():
    units = pi.read_transcript(str(FIX / "custom-run.jsonl")).units
    assert [(u.role, u.text, [t.render() for t in u.parts if not isinstance(t, str)]) for u in units] == [
        ("user", "say: the nightly build broke on the arm64 runner", []),
        ("agent", "the nightly build broke on the arm64 runner", []),
        ("agent", "", ["<tool>custom_message ci-watch: say: the nightly build is green again</tool>"]),
        ("agent", "the nightly build is green again", [])]
    assert units[2].new_turn   # its own agent block, not more of the first answer


def test_system_messages_and_context_edits_are_no_turns():
    recs = entries("context-edit.jsonl")
    assert {r["message"]["role"] for r in recs if r["type"] == "message"} >= {"system", "user", "assistant"}
    assert any(r["type"] == "context_edit" and r["replacement"] is None for r in recs)
    units = pi.read_transcript(str(FIX / "context-edit.jsonl")).units
    texts = [u.text for u in units]
    # the answer the edit left out of later requests still happened: it is kept, verbatim
    assert texts == ["say: watching the nightly build", "watching the nightly build", "",
                     "the second answer replaces the first"]
    assert units[2].parts[0].render() == ("<tool>custom_message replacement-instruction: "
                                          "say: the second answer replaces the first</tool>")
    assert not any("coding assistant running inside pi" in t for t in texts)   # the system prompt


def test_chrollos_own_recall_message_never_starts_a_turn(tmp_path):
    recs = entries("custom-run.jsonl")
    for r in recs:
        if r["type"] == "custom_message":
            r["customType"] = "chrollo-recall"
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    assert not any(u.new_turn for u in pi.read_transcript(str(path)).units)


def test_a_custom_message_no_run_followed_is_no_turn(tmp_path):
    recs = [r for r in entries("custom-run.jsonl")]
    last = max(i for i, r in enumerate(recs) if r["type"] == "message")
    del recs[last]   # the message was only recorded (triggerTurn false): nothing answered it
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    assert [u.role for u in pi.read_transcript(str(path)).units] == ["user", "agent"]


def test_live_capture_at_agent_end_equals_import(home, tmp_path):
    src = tmp_path / "sessions" / "--proj--"
    src.mkdir(parents=True)
    shutil.copyfile(FIX / "custom-run.jsonl", src / "custom-run.jsonl")
    recs = entries("custom-run.jsonl")
    sid, cwd = recs[0]["id"], recs[0]["cwd"]
    msgs = [r["message"] for r in recs if r["type"] == "message"]
    base = {"shim": "chrollo-pi", "shim_version": 1, "harness": "pi", "session_id": sid,
            "transcript_path": str(src / "custom-run.jsonl"), "cwd": cwd}
    # the two runs' agent_end (the second carries the custom message and its answer)
    ok(hook(home, "pi", "agent_end", dict(base, hook_event_name="agent_end", messages=msgs[1:3])))
    ok(hook(home, "pi", "agent_end", dict(base, hook_event_name="agent_end",
                                          messages=[{"role": "custom", "customType": "ci-watch",
                                                     "content": "say: the nightly build is green again",
                                                     "display": True, "timestamp": msgs[3]["timestamp"] - 1},
                                                    msgs[3]])))
    live = vault_bytes(home / "memories")
    (f,) = (home / "memories").glob("*.md")
    assert [(t.role, t.tools) for t in read_session(f).turns] == [
        ("user", []), ("agent", []),
        ("agent", ["<tool>custom_message ci-watch: say: the nightly build is green again</tool>"])]
    other = tmp_path / "imported"
    assert import_into(other, "pi", tmp_path / "sessions")["turns"] > 0
    assert vault_bytes(other / "memories") == live


CUSTOM_RUN = r"""
import ext from "./ext.mjs";
const handlers = {};
await ext({ on: (ev, fn) => { (handlers[ev] ||= []).push(fn); }, registerTool: () => {} });
const ctx = { cwd: "/nonexistent/project", sessionManager: { getSessionId: () => "pi-fake-0002", getSessionFile: () => null } };
const custom = await handlers.before_agent_start[0](
  { messageType: "custom", message: { role: "custom", customType: "ci-watch", content: "the build is green", display: true } }, ctx);
const user = await handlers.before_agent_start[0]({ messageType: "user", prompt: "what broke the build?", images: [] }, ctx);
console.log(JSON.stringify({ custom: custom ?? null, user: user ?? null }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_extension_calls_no_hook_for_a_run_a_message_started(home, tmp_path):
    """pi >= 1.2 fires before_agent_start for such a run, with no prompt: nothing to recall for,
    so the extension spends no chrollo process on it (a user's prompt still gets its call)."""
    import subprocess
    import sys

    from conftest import cli_env

    calls = tmp_path / "calls.log"
    wrapper = tmp_path / "chrollo-wrapper"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {calls}\nexec {sys.executable} -m chrollo "$@"\n')
    wrapper.chmod(0o755)
    (tmp_path / "ext.mjs").write_text(pi.extension_text([str(wrapper)]), "utf-8")
    (tmp_path / "run.mjs").write_text(CUSTOM_RUN, "utf-8")
    p = subprocess.run(["node", "run.mjs"], cwd=tmp_path, capture_output=True, text=True,
                       env=cli_env(home), timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["custom"] is None
    assert calls.read_text().splitlines() == ["hook before_agent_start --harness pi"]   # the user's only


def _pi_home(tmp_path, servers: dict):
    agent = tmp_path / "pi-agent"
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}), "utf-8")
    return {"PI_CODING_AGENT_DIR": agent, "HOME": tmp_path}


def test_doctor_says_read_memory_is_offered_twice_when_pis_mcp_client_runs_chrollo_too(home, tmp_path):
    """pi 1.6.0, seen: the extension's read_memory plus a `chrollo mcp` server with exposure
    "direct" in ~/.pi/agent/mcp.json → the first request offers read_memory and
    mcp__chrollo__read_memory (tests/e2e/test_pi.py)."""
    from conftest import run, run_json

    env = _pi_home(tmp_path, {"memory": {"command": "/usr/local/bin/chrollo", "args": ["mcp"], "exposure": "direct"},
                              "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}})
    assert run(["install", "pi"], home, **env).returncode == 0
    _p, out = run_json(["doctor", "--harness", "pi", "--json"], home, **env)
    r = out["harnesses"]["pi"]
    assert r["status"] == "duplicate", r
    assert "pi mcp remove memory" in r["fix"] and "files" not in r["fix"]


def test_doctor_is_ok_with_other_mcp_servers_in_pi(home, tmp_path):
    from conftest import run, run_json

    env = _pi_home(tmp_path, {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
                              "py": {"command": "python3", "args": ["-m", "chrollo_other", "serve"]}})
    assert run(["install", "pi"], home, **env).returncode == 0
    _p, out = run_json(["doctor", "--harness", "pi", "--json"], home, **env)
    assert out["harnesses"]["pi"]["status"] == "ok", out["harnesses"]["pi"]
