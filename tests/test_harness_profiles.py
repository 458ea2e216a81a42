"""#29: each harness is one adapter (chrollo/harness/<name>.py) that owns everything about it;
hook, install, doctor, import and the CLI iterate over the registry and name no harness."""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys

from conftest import ROOT, cli_env, docstring_ids

from chrollo.harness import adapter, canonical, import_only, names, profiles


def harness_literals(package) -> list:
    """Every string constant (docstrings aside) equal to a harness's name or alias, outside
    the package's harness/ folder."""
    spelled = {m.NAME for m in profiles()} | {a for m in profiles() for a in m.ALIASES}
    spelled |= set(import_only()) - {"continue"}  # (import-only tools too; "continue" is also a word)
    bad = []
    for p in sorted(package.rglob("*.py")):
        if "harness" in p.relative_to(package).parts[:1]:
            continue
        tree = ast.parse(p.read_text("utf-8"))
        docs = docstring_ids(tree)
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs \
                    and n.value.strip().lower() in spelled:
                bad.append(f"{p.relative_to(package.parent)}:{n.lineno}: {n.value!r}")
    return bad


def test_the_registry_finds_every_harness():
    assert names() == ("claude-code", "codex", "copilot", "gemini", "opencode", "pi", "qwen-code")
    assert canonical("claude") == "claude-code" and canonical("Gemini-CLI") == "gemini" and canonical("qwen") == "qwen-code"
    assert canonical("copilot-cli") == "copilot"
    assert canonical("common") is None and canonical("jsonl") is None and canonical("../x") is None
    assert canonical("cursor") is None and "cursor" in import_only()  # (import-only: no hooks of its own)


def test_no_harness_is_named_outside_its_adapter():
    assert harness_literals(ROOT / "chrollo") == []


def test_the_check_sees_a_harness_named_by_hand(tmp_path):
    pkg = tmp_path / "chrollo"
    pkg.mkdir()
    (pkg / "x.py").write_text('"""codex in a docstring is fine."""\nif h == "codex":\n    pass\n')
    assert harness_literals(pkg) == ["chrollo/x.py:2: 'codex'"]


def test_every_adapter_has_a_whole_profile(tmp_path):
    for m in profiles():
        assert m.EVENTS and m.HOOKS in ("json", "extension") and m.MCP in ("json", "toml", None)
        assert os.path.isabs(m.home_dir()) and os.path.isabs(m.hooks_config())
        assert m.MCP is None or os.path.isabs(m.mcp_config())
        folder, patterns = m.TRANSCRIPTS
        assert patterns and m.HELP and m.IMPORT_HELP
        for event, _timeout in m.EVENTS:
            payload = m.sample_payload(event, "s1", str(tmp_path), "a prompt", "an answer")
            ev = m.event_of(payload, event)
            assert ev.harness == m.NAME and ev.session == "s1" and ev.cwd == str(tmp_path)
            assert ev.action in ("recall", "capture", "subagent", "catchup")
            if ev.action == "recall":
                assert ev.prompt == "a prompt"
                assert m.recall_text(m.reply("memory")) == "memory"
            if ev.action == "capture":
                # (Copilot CLI's agentStop carries no answer: its transcript does)
                read = m.read_transcript(ev.transcript, 0).units if ev.transcript else []
                assert ev.reply == "an answer" or any("an answer" in str(u.parts) for u in ev.extra_units + read)


TOY = '''"""A toy harness: the whole of what chrollo knows about it."""
import json
import os

from .common import Transcript, Unit, context_of, context_reply, home_from, hook_event, parse_time, read_jsonl
from .common import sample_payload as sample

NAME = "toy"
ALIASES = ("toy-cli",)
EVENTS = [("Prompt", 5), ("Done", 5)]
HOOKS, MCP = "json", "json"
MCP_ENTRY = {}
TRANSCRIPTS = ("logs", ["*.jsonl"])
HELP = "hooks and tool: ~/.toy/config.json ($TOY_HOME)"
IMPORT_HELP = "~/.toy/logs ($TOY_HOME)"


def home_dir():
    return home_from("TOY_HOME", ".toy")


def hooks_config():
    return os.path.join(home_dir(), "config.json")


mcp_config = hooks_config


def expected_events():
    return {"prompt": "recall", "done": "capture"}


def read_transcript(path, offset=0, agent_id=None):
    tr = Transcript([], offset)
    for off, rec in read_jsonl(path, offset):
        if isinstance(rec, dict) and rec.get("who") in ("me", "bot") and isinstance(rec.get("said"), str):
            tr.session_id = tr.session_id or rec.get("chat")
            role = "user" if rec["who"] == "me" else "agent"
            tr.add(Unit(role, parse_time(rec.get("at")), [rec["said"]], f"toy:{off}"), off)
    return tr


def session_of(path):
    return {"session_id": os.path.basename(path)[:-len(".jsonl")]}


def event_of(payload, event=None):
    return hook_event(NAME, expected_events(), payload, event)


def reply(text):
    return context_reply("Prompt", text)


recall_text = context_of


def sample_payload(event, session, cwd, prompt, answer):
    return sample(expected_events(), event, session, cwd, prompt, answer)
'''


def test_a_fifth_harness_is_one_adapter_and_install_doctor_hook_import_handle_it(tmp_path):
    """A copy of the package plus harness/toy.py (and nothing else) serves a fifth harness."""
    pkg = tmp_path / "src" / "chrollo"
    shutil.copytree(ROOT / "chrollo", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "harness" / "toy.py").write_text(TOY)
    assert harness_literals(pkg) == []  # (toy is named in its adapter only)
    home, toy = tmp_path / "home", tmp_path / "toyhome"
    env = cli_env(home, TOY_HOME=toy, PYTHONPATH=tmp_path / "src", HOME=tmp_path)

    def chrollo(*args, stdin=None):
        p = subprocess.run([sys.executable, "-m", "chrollo", *map(str, args)], capture_output=True,
                           text=True, env=env, cwd=tmp_path, input=stdin, timeout=120)
        assert "Traceback" not in p.stderr, p.stderr
        return p

    p = chrollo("install", "toy", "--json")
    assert p.returncode == 0, p.stderr
    cfg = json.loads((toy / "config.json").read_text())
    assert set(cfg["hooks"]) == {"Prompt", "Done"} and "chrollo" in cfg["mcpServers"]
    assert cfg["hooks"]["Prompt"][0]["hooks"][0]["timeout"] == 5

    p = chrollo("doctor", "--harness", "toy", "--json")
    report = json.loads(p.stdout)["harnesses"]["toy"]
    assert report["status"] == "ok", report
    assert sorted(f["event"] for f in report["fired"] if f["ok"]) == ["Done", "Prompt"]
    assert report["mcp"]["ok"]

    said = {"session_id": "toy00001", "cwd": str(tmp_path), "hook_event_name": "Prompt",
            "prompt": "which port does the staging proxy use?"}
    assert chrollo("hook", "Prompt", "--harness", "toy-cli", stdin=json.dumps(said)).returncode == 0
    done = dict(said, hook_event_name="Done", last_assistant_message="Port 8443, behind nginx.")
    assert chrollo("hook", "Done", "--harness", "toy", stdin=json.dumps(done)).returncode == 0
    [f] = (home / "memories").glob("*.md")
    text = f.read_text()
    assert 'harness: "toy"' in text and "Port 8443, behind nginx." in text
    p = chrollo("hook", "Prompt", "--harness", "toy", stdin=json.dumps(dict(said, session_id="toy00002")))
    assert "8443" in json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]

    (toy / "logs").mkdir()
    (toy / "logs" / "chat9.jsonl").write_text(
        json.dumps({"chat": "chat9", "who": "me", "said": "rename the billing tables please", "at": "2026-10-01T10:00:00Z"}) + "\n"
        + json.dumps({"chat": "chat9", "who": "bot", "said": "Renamed invoices_v2 to invoices.", "at": "2026-10-01T10:00:05Z"}) + "\n")
    p = chrollo("import", "toy", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["turns"] == 2, p.stdout
    assert "toy" in chrollo("import", "--help").stdout and "toy" in chrollo("install", "--help").stdout
