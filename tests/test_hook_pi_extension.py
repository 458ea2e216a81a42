"""The pi extension, run by the machine's real `node` against a small fake of pi's extension API."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, cli_env, run

from chrollo.packages import HOW_TO_INSTALL

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

FAKE_PI = r"""
import ext from "./ext.mjs";
const handlers = {}, tools = {};
const pi = { on: (ev, fn) => { (handlers[ev] ||= []).push(fn); },
             registerTool: (t) => { tools[t.name] = t; } };
await ext(pi);
const session = process.env.SESSION_FILE;
const ctx = { cwd: "/nonexistent/project",
              sessionManager: { getSessionId: () => "pi-fake-0001", getSessionFile: () => session } };
const out = { events: Object.keys(handlers).sort(), tools: Object.keys(tools) };
out.recall = await handlers.before_agent_start[0](
  { prompt: "how do we rotate the signing keys for the release pipeline?", images: [], systemPrompt: "x" }, ctx);
out.end = await handlers.agent_end[0]({ messages: [
  { role: "user", content: [{ type: "text", text: "how do we rotate the signing keys for the release pipeline?" }], timestamp: 1700000000000 },
  { role: "assistant", content: [{ type: "text", text: "Run make rotate-keys, then update the CI secret." },
                                  { type: "toolCall", id: "t1", name: "bash", arguments: { command: "make rotate-keys" } }],
    timestamp: 1700000001000 } ] }, ctx);
out.shutdown = await handlers.session_shutdown[0]({}, ctx);
const t = tools.read_memory;
out.schema = t.parameters;
out.tool = await t.execute("call-1", { query: "signing keys rotate", limit: 3 }, undefined, undefined, ctx);
out.descriptions = { read_memory: t.description, read_memory_file: tools.read_memory_file.description };
const hit = /^--- (.+):(\d+) ---$/m.exec(out.tool.content[0].text);
out.file = await tools.read_memory_file.execute("call-2", hit ? { path: hit[1], line: Number(hit[2]), after: 5 } : { path: "x", line: 1 });
console.log(JSON.stringify(out));
"""


def test_pi_extension_fires_hooks_and_serves_read_memory(home, tmp_path, make_session):
    from chrollo.harness import adapter
    from chrollo.install import chrollo_command

    make_session(home / "memories", "old00000-9999-4999-8999-999999999999", "2026-10-01T10:00:00", [
        ("user", "10:00:00", "rotate the signing keys used by the release pipeline"),
        ("agent", "10:01:00", ["Signing keys rotate with `make rotate-keys`; the release pipeline reads them from CI."]),
    ])
    calls = tmp_path / "calls.log"
    wrapper = tmp_path / "chrollo-wrapper"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {calls}\nexec {sys.executable} -m chrollo "$@"\n')
    wrapper.chmod(0o755)
    text = adapter("pi").extension_text(chrollo_command())
    ext = text.split("\nconst CHROLLO = ", 1)
    (tmp_path / "ext.mjs").write_text(ext[0] + f"\nconst CHROLLO = {json.dumps([str(wrapper)])};" +
                                      ext[1].split(";", 1)[1])
    (tmp_path / "fake.mjs").write_text(FAKE_PI)
    env = cli_env(home, SESSION_FILE=str(tmp_path / "no-such-session.jsonl"))
    p = subprocess.run(["node", "fake.mjs"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["events"] == ["agent_end", "before_agent_start", "session_shutdown"]
    assert out["tools"] == ["read_memory", "read_memory_file"]
    msg = out["recall"]["message"]
    assert msg["customType"] == "chrollo-recall" and msg["display"] is False
    assert msg["content"].startswith("[chrollo-recall]") and "make rotate-keys" in msg["content"]
    # the exec calls, observed
    assert calls.read_text().splitlines()[:3] == [
        "hook before_agent_start --harness pi", "hook agent_end --harness pi", "hook session_shutdown --harness pi"]
    assert calls.read_text().splitlines()[3] == "search --compact --limit 3 -- signing keys rotate"
    # agent_end captured the turn
    (f,) = [f for f in (home / "memories").glob("*.md") if "pi-fake-" in f.read_text()]
    body = f.read_text()
    assert "how do we rotate the signing keys" in body and "> <tool>$ make rotate-keys</tool>" in body
    # read_memory is `chrollo search --compact`: the same text as `chrollo mcp`'s read_memory
    text = out["tool"]["content"][0]["text"]
    assert text == run(["search", "--compact", "--limit", "3", "--", "signing", "keys", "rotate"], home).stdout
    assert text.startswith("--- ") and "old00000" in text.splitlines()[0] and "make rotate-keys" in text
    assert out["schema"]["required"] == ["query"]
    # read_memory_file reads around the hit: numbered lines
    window = out["file"]["content"][0]["text"]
    assert window.startswith("--- ") and "→" in window and "make rotate-keys" in window
    from chrollo.mcp_server import TOOLS
    assert out["descriptions"] == {t["name"]: t["description"] for t in TOOLS}


def test_pi_extension_survives_a_missing_chrollo(tmp_path, home):
    from chrollo.harness import adapter
    from chrollo.install import chrollo_command

    text = adapter("pi").extension_text(chrollo_command()).split("\nconst CHROLLO = ", 1)
    (tmp_path / "ext.mjs").write_text(text[0] + '\nconst CHROLLO = ["/nonexistent/chrollo"];' + text[1].split(";", 1)[1])
    (tmp_path / "fake.mjs").write_text(FAKE_PI)
    p = subprocess.run(["node", "fake.mjs"], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, SESSION_FILE=""), timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert "recall" not in out or out["recall"] is None  # nothing injected, nothing thrown
    assert out["tool"]["content"][0]["text"].startswith("chrollo failed: ")


def test_root_pi_shim_is_a_link_to_the_packaged_file():
    assert (ROOT / "hooks" / "pi" / "chrollo.ts").resolve() == (ROOT / "chrollo" / "data" / "pi-extension.ts").resolve()


def test_pi_package_without_chrollo_says_once_how_to_install_it(tmp_path):
    """The shipped file (as `pi install` loads it) finds no chrollo: the prompt goes on, the user
    is told once per session, and a second copy of the extension (the package and `chrollo
    install pi` both) registers nothing twice."""
    (tmp_path / "ext.mjs").write_text((ROOT / "chrollo" / "data" / "pi-extension.ts").read_text())
    (tmp_path / "again.mjs").write_text((ROOT / "chrollo" / "data" / "pi-extension.ts").read_text())
    (tmp_path / "fake.mjs").write_text(r"""
import ext from "./ext.mjs";
import again from "./again.mjs";
const handlers = {}, tools = [];
const pi = { on: (ev, fn) => { (handlers[ev] ||= []).push(fn); }, registerTool: (t) => tools.push(t.name) };
await ext(pi);
await again(pi);
const ctx = { cwd: "/x", hasUI: false, sessionManager: { getSessionId: () => "s1", getSessionFile: () => null } };
const out = [];
for (let i = 0; i < 2; i++) out.push(await handlers.before_agent_start[0]({ prompt: "hi", images: [] }, ctx));
console.log(JSON.stringify({ out, tools, n: handlers.before_agent_start.length }));
""")
    p = subprocess.run(["node", "fake.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env={"PATH": os.path.dirname(shutil.which("node")), "HOME": str(tmp_path)})
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"out": [None, None], "tools": ["read_memory", "read_memory_file"], "n": 1}
    assert p.stderr.count("chrollo is not installed") == 1 and HOW_TO_INSTALL in p.stderr
