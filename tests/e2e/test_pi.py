"""pi only (1.6.0, #46): runs an extension starts with a message, context edits, the project
trust a project-local package needs, pi's own MCP client beside chrollo's extension, and
pi's agent-level retry of a dropped stream."""
from __future__ import annotations

import json
import sys

import pytest

from .kit.world import ROOT
from .test_capture import CHUNKED, only_file, turns

pytestmark = pytest.mark.e2e

# another extension, as a user might have: after the first run it starts one more with a message
TRIGGER = """export default function (pi) {
  let sent = false;
  pi.on("agent_end", async () => {
    if (sent) return;
    sent = true;
    pi.sendMessage({ customType: "ci-watch", content: "say: the nightly build is green again", display: true },
                   { triggerTurn: true });
  });
}
"""
# pi's own docs example: turn_end leaves the answer out of later requests and asks again
REPLACE = """export default function (pi) {
  let replaced = false;
  pi.on("turn_end", async (event) => {
    if (replaced || event.outcome !== "completed" || event.toolResults.length > 0) return;
    replaced = true;
    return { entries: [...event.entries,
      { type: "context_edit", targetId: event.messageEntryId, replacement: null },
      { type: "custom_message", customType: "replacement-instruction",
        content: "say: the second answer replaces the first", display: false }], continue: true };
  });
}
"""


def _import_equals_live(world) -> None:
    live = world.vault_files()
    other = world.tmp / "import-home"
    world.chrollo("import", "pi", CHROLLO_HOME=other)
    assert world.vault_files(other / "memories") == live


def _extension(world, name: str, text: str) -> None:
    (world.home / ".pi" / "agent" / "extensions" / name).write_text(text, "utf-8")


def test_a_run_an_extension_started_with_a_message_is_labelled(make, world):
    drv = make("pi")
    _extension(world, "trigger.ts", TRIGGER)
    r = drv.run("say: watching the nightly build")
    assert r.ok, r.proc.stderr
    assert [q["reply"]["text"] for q in world.server.model_requests()] == [
        "watching the nightly build", "the nightly build is green again"]
    assert turns(only_file(world)) == [
        ("User", "say: watching the nightly build"), ("Agent", "> watching the nightly build"),
        ("Agent", "> <tool>custom_message ci-watch: say: the nightly build is green again</tool>\n"
                  "> the nightly build is green again")]
    _import_equals_live(world)


def test_an_answer_a_context_edit_left_out_is_kept_and_the_next_is_labelled(make, world):
    drv = make("pi")
    _extension(world, "replace.ts", REPLACE)
    r = drv.run("say: the first answer")
    assert r.ok, r.proc.stderr
    (session,) = drv.transcripts()
    kinds = [json.loads(line) for line in session.read_text("utf-8").splitlines()]
    assert any(e["type"] == "context_edit" for e in kinds)
    assert any(e["type"] == "message" and e["message"]["role"] == "system" for e in kinds)
    assert turns(only_file(world)) == [
        ("User", "say: the first answer"), ("Agent", "> the first answer"),
        ("Agent", "> <tool>custom_message replacement-instruction: say: the second answer replaces the first</tool>\n"
                  "> the second answer replaces the first")]
    _import_equals_live(world)


def test_a_project_local_package_runs_only_in_a_trusted_project(make, world):
    """`pi install -l` writes the project's .pi/settings.json; `pi -p` has no trust prompt and
    silently skips project packages unless told (`--approve`) or the project was trusted."""
    drv = make("pi", install=False)
    drv._cli(["pi", "install", "-l", ROOT])
    assert drv.run("say: a turn in an untrusted project").ok
    assert world.vault_files() == {}
    assert drv.run("say: a turn with approve", args=("--approve",)).ok
    assert "a turn with approve" in world.vault_text()


def _first_request_tools(world, since: int = 0) -> list:
    first = [q for q in world.requests_since(since) if q.get("wire") and not q.get("aux")][0]
    return [n for n in first["tools"] if "read_memory" in n]


def test_read_memory_is_offered_once_and_doctor_flags_a_second_copy_over_mcp(make, world):
    drv = make("pi")
    assert drv.run("say: which tools are there").ok
    assert _first_request_tools(world) == ["read_memory", "read_memory_file"]
    report = json.loads(world.chrollo("doctor", "--json", "--harness", "pi", check=False).stdout)["harnesses"]["pi"]
    assert report["status"] == "ok", report
    # the same server through pi's own MCP client (0.99+), shown to the model directly
    (world.home / ".pi" / "agent" / "mcp.json").write_text(json.dumps({"mcpServers": {"chrollo": {
        "command": sys.executable, "args": ["-m", "chrollo", "mcp"], "exposure": "direct",
        "env": {"PYTHONPATH": str(ROOT), "CHROLLO_HOME": str(world.chrollo_home)}}}}), "utf-8")
    mark = world.server.mark()
    assert drv.run("say: which tools are there now").ok
    assert _first_request_tools(world, mark) == ["read_memory", "read_memory_file",
                                           "mcp__chrollo__read_memory", "mcp__chrollo__read_memory_file"]
    report = json.loads(world.chrollo("doctor", "--json", "--harness", "pi", check=False).stdout)["harnesses"]["pi"]
    assert report["status"] == "duplicate" and "pi mcp remove chrollo" in report["fix"], report


def test_a_cut_stream_is_retried_by_pis_agent_not_its_sdk(make, world):
    """pi 0.76 turned the model SDK's retries off (retry.provider.maxRetries 0): the retry is
    pi's agent-level one, which keeps the failed attempt in the session (stopReason "error")."""
    drv = make("pi")
    prompt = f"say: {CHUNKED}\nchunks: 3\ncut once"
    r = drv.run(prompt)
    assert r.ok, r.proc.stderr
    assert [q["reply"]["cut"] for q in world.server.model_requests()] == [True, False]
    (session,) = drv.transcripts()
    answers = [e["message"] for e in map(json.loads, session.read_text("utf-8").splitlines())
               if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert [m.get("stopReason") for m in answers] == ["error", "stop"]
    assert turns(only_file(world)) == [("User", prompt), ("Agent", f"> {CHUNKED}")]
