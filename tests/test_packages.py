"""The harnesses' own packages (issue 31): the Claude Code plugin, the Codex plugin, the Gemini
CLI extension and the pi package all run the same ``chrollo hook``/``chrollo mcp``; their shim
(``bin/chrollo-hook``) never breaks a prompt when chrollo is missing. The real harnesses install
and run them in tests/e2e/test_packages.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

from chrollo import __version__
from chrollo.harness import adapter
from chrollo.packages import HOW_TO_INSTALL

PACKAGES = {"claude-code": ("hooks/claude-code", '"${CLAUDE_PLUGIN_ROOT}/bin/chrollo-hook"'),
            "codex": ("hooks/codex", '"$PLUGIN_ROOT/bin/chrollo-hook"'),
            "gemini": ("hooks/gemini", '"${extensionPath}/bin/chrollo-hook"'),
            "qwen-code": ("hooks/qwen-code", '"${CLAUDE_PLUGIN_ROOT}/bin/chrollo-hook"'),
            "copilot": ("hooks/copilot", '"$PLUGIN_ROOT/bin/chrollo-hook"')}
SHIM = ROOT / "hooks" / "claude-code" / "bin" / "chrollo-hook"


@pytest.mark.parametrize("harness", list(PACKAGES))
def test_package_hooks_are_the_events_chrollo_install_writes(harness):
    folder, shim = PACKAGES[harness]
    hooks = json.loads((ROOT / folder / "hooks" / "hooks.json").read_text())["hooks"]
    got = {e: [(h["command"], h["timeout"]) for g in groups for h in g["hooks"]] for e, groups in hooks.items()}
    assert got == {e: [(f"{shim} {harness} {e}", t)] for e, t in adapter(harness).EVENTS}


@pytest.mark.parametrize("harness", list(PACKAGES))
def test_every_package_carries_the_same_shim(harness):
    shim = ROOT / PACKAGES[harness][0] / "bin" / "chrollo-hook"
    assert shim.read_bytes() == SHIM.read_bytes() and os.access(shim, os.X_OK)


def test_every_manifest_has_the_cli_version():
    """doctor compares the installed package's version with the CLI's: one number everywhere."""
    versions = [json.loads((ROOT / p).read_text())["version"] for p in (
        "hooks/claude-code/.claude-plugin/plugin.json", "hooks/codex/.codex-plugin/plugin.json",
        "hooks/gemini/gemini-extension.json", "hooks/qwen-code/qwen-extension.json", "hooks/copilot/.plugin/plugin.json",
        "hooks/opencode/package.json", "package.json")]
    market = json.loads((ROOT / ".claude-plugin/marketplace.json").read_text())
    copilot = json.loads((ROOT / ".github/plugin/marketplace.json").read_text())
    versions += [p["version"] for p in market["plugins"] + copilot["plugins"]]
    assert versions == [__version__] * len(versions)
    assert market["plugins"][0]["source"] == "./hooks/claude-code"
    assert copilot["plugins"][0]["source"] == "./hooks/copilot"
    codex = json.loads((ROOT / ".agents/plugins/marketplace.json").read_text())
    assert codex["plugins"][0]["source"] == {"source": "local", "path": "./hooks/codex"}
    assert json.loads((ROOT / "package.json").read_text())["pi"]["extensions"] == ["./chrollo/data/pi-extension.ts"]


def _shim(args, payload: str, tmp_path, **env):
    base = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)}
    return subprocess.run(["sh", str(SHIM), *args], input=payload, capture_output=True, text=True,
                          env={**base, **env}, timeout=30)


def test_shim_without_chrollo_says_once_per_session_how_to_install_it_and_exits_0(tmp_path):
    one = json.dumps({"session_id": "sess-1", "prompt": "hello"})
    first = _shim(["claude-code", "UserPromptSubmit"], one, tmp_path)
    assert first.returncode == 0 and first.stderr == ""
    notice = json.loads(first.stdout)["systemMessage"]
    assert HOW_TO_INSTALL in notice
    again = _shim(["claude-code", "UserPromptSubmit"], one, tmp_path)
    assert again.returncode == 0 and again.stdout == ""          # once per session
    other = _shim(["gemini", "BeforeAgent"], json.dumps({"session_id": "sess-2"}), tmp_path)
    assert json.loads(other.stdout)["systemMessage"] == notice    # a new session is told again
    for event in ("Stop", "AfterAgent", "SessionEnd"):            # capture events: silent
        p = _shim(["codex", event], json.dumps({"session_id": "sess-3"}), tmp_path)
        assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    camel = json.dumps({"sessionId": "sess-4", "prompt": "hello"})     # Copilot CLI's payload
    told = _shim(["copilot", "userPromptSubmitted"], camel, tmp_path)
    assert json.loads(told.stdout)["systemMessage"] == notice
    assert _shim(["copilot", "userPromptSubmitted"], camel, tmp_path).stdout == ""   # once per session
    mcp = _shim(["codex", "mcp"], "", tmp_path)
    assert mcp.returncode == 1 and HOW_TO_INSTALL in mcp.stderr and mcp.stdout == ""


def test_shim_runs_the_chrollo_it_finds(tmp_path):
    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "chrollo"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$CHROLLO_VIA $CHROLLO_HARNESS $*" >> {calls}\ncat >> {calls}\n')
    fake.chmod(0o755)
    assert _shim(["codex", "Stop"], "{\"x\": 1}\n", tmp_path, CHROLLO_BIN=str(fake)).returncode == 0
    assert _shim(["gemini", "BeforeAgent"], "{}\n", tmp_path, PATH=f"{fake.parent}:/usr/bin:/bin").returncode == 0
    local = tmp_path / "home" / ".local" / "bin"   # where uv tool / pipx put it, off PATH
    local.mkdir(parents=True)
    shutil.copy(fake, local / "chrollo")
    assert _shim(["claude-code", "mcp"], "", tmp_path).returncode == 0
    assert calls.read_text().splitlines() == ["package codex hook Stop --harness codex", '{"x": 1}',
                                              "package gemini hook BeforeAgent --harness gemini", "{}",
                                              "package claude-code mcp"]


# ----------------------------------------------------------------------------- doctor and hook

def _claude_plugin(tmp_path, version: str):
    """Claude Code's records of chrollo's plugin, as `claude plugin install` leaves them."""
    cfg = tmp_path / "claude"
    root = cfg / "plugins" / "cache" / "chrollo" / "chrollo" / version
    shutil.copytree(ROOT / "hooks" / "claude-code", root)
    manifest = root / ".claude-plugin" / "plugin.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "version": version}))
    (cfg / "plugins" / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "chrollo@chrollo": [{"scope": "user", "installPath": str(root), "version": version}]}}))
    (cfg / "settings.json").write_text(json.dumps({"enabledPlugins": {"chrollo@chrollo": True}}))
    return cfg


def _doctor(home, cfg, **env):
    from conftest import run

    p = run(["doctor", "--json", "--harness", "claude-code"], home, CLAUDE_CONFIG_DIR=cfg,
            CHROLLO_BIN=shutil.which("chrollo") or os.path.join(os.path.dirname(os.sys.executable), "chrollo"), **env)
    return json.loads(p.stdout)["harnesses"]["claude-code"]


def test_doctor_fires_the_plugin_s_own_hooks_and_reports_a_version_mismatch(home, tmp_path):
    report = _doctor(home, _claude_plugin(tmp_path, __version__))
    assert report["status"] == "ok", report
    assert {f["event"] for f in report["fired"]} == {e for e, _ in adapter("claude-code").EVENTS}
    assert report["mcp"]["ok"] and report["package"]["id"] == "chrollo@chrollo"
    old = _doctor(home, _claude_plugin(tmp_path / "old", "0.0.9"))
    assert old["status"] == "mismatch" and "0.0.9" in old["fix"] and __version__ in old["fix"], old


def test_doctor_says_how_to_install_chrollo_when_the_package_cannot_find_it(home, tmp_path):
    """Not at $CHROLLO_BIN, not on PATH, not in ~/.local/bin: what the package's shim looks for."""
    from conftest import run

    cfg = _claude_plugin(tmp_path, __version__)
    p = run(["doctor", "--json", "--harness", "claude-code"], home, CLAUDE_CONFIG_DIR=cfg, CHROLLO_BIN="",
            HOME=tmp_path / "nobody", PATH="/usr/bin:/bin")
    report = json.loads(p.stdout)["harnesses"]["claude-code"]
    assert p.returncode == 1 and report["status"] == "broken", report
    assert "cannot find chrollo" in report["fix"] and "CHROLLO_BIN" in report["fix"], report
    assert HOW_TO_INSTALL in report["fix"], report


def test_doctor_says_which_to_remove_when_both_are_installed(home, tmp_path):
    from conftest import run

    cfg = _claude_plugin(tmp_path, __version__)
    assert run(["install", "claude-code", "--no-mcp"], home, CLAUDE_CONFIG_DIR=cfg).returncode == 0
    report = _doctor(home, cfg)
    assert report["status"] == "duplicate", report
    assert "chrollo uninstall claude-code" in report["fix"] and "claude plugin uninstall chrollo@chrollo" in report["fix"]


def test_the_package_s_hooks_stand_down_where_chrollo_install_s_run(home, tmp_path):
    """Both installed: Claude Code runs both hooks; the package's (CHROLLO_VIA=package, set by
    its shim) does nothing, so the turn is captured and recalled once."""
    from conftest import run

    cfg = tmp_path / "claude"
    payload = json.dumps({"session_id": "both-0001", "cwd": str(tmp_path), "hook_event_name": "Stop",
                          "last_assistant_message": "the answer"})
    for installed in (False, True):
        if installed:
            assert run(["install", "claude-code", "--no-mcp"], home, CLAUDE_CONFIG_DIR=cfg).returncode == 0
        p = run(["hook", "Stop", "--harness", "claude-code"], home, input=payload, CLAUDE_CONFIG_DIR=cfg,
                CHROLLO_VIA="package")
        assert (p.returncode, p.stdout) == (0, "")
        log = (home / "logs" / "hooks.log").read_text() if (home / "logs" / "hooks.log").exists() else ""
        assert ("stand down" in log) is installed, log


def test_the_opencode_package_s_hooks_stand_down_where_chrollo_install_s_plugin_runs(home, tmp_path):
    """OpenCode loads both plugins, the package's and the file `chrollo install opencode` wrote:
    that file is JavaScript, whose code holds no "--harness opencode" to find (only a comment
    did), so the package's hooks ask for chrollo's plugin mark instead."""
    from conftest import run

    env = {"XDG_CONFIG_HOME": tmp_path / "config", "XDG_DATA_HOME": tmp_path / "data"}
    payload = json.dumps({"shim": "chrollo-opencode", "harness": "opencode", "session_id": "ses_both0001",
                          "cwd": str(tmp_path), "hook_event_name": "session.idle"})
    for installed in (False, True):
        if installed:
            assert run(["install", "opencode", "--no-mcp"], home, **env).returncode == 0
            plugin = tmp_path / "config" / "opencode" / "plugin" / "chrollo.js"   # (its code, not its comments)
            plugin.write_text("".join(ln for ln in plugin.read_text().splitlines(True) if not ln.startswith("//")))
        p = run(["hook", "session.idle", "--harness", "opencode"], home, input=payload, CHROLLO_VIA="package",
                CHROLLO_HARNESS="opencode", **env)
        assert (p.returncode, p.stdout) == (0, "")
        log = (home / "logs" / "hooks.log").read_text() if (home / "logs" / "hooks.log").exists() else ""
        assert ("stand down" in log) is installed, log
    # the shipped file copied there unchanged is the package's own code (it finds chrollo
    # itself): never chrollo install's, so the package does not stand down for it
    plugin.write_text((ROOT / "chrollo" / "data" / "opencode-plugin.js").read_text())
    (home / "logs" / "hooks.log").unlink()
    p = run(["hook", "session.idle", "--harness", "opencode"], home, input=payload, CHROLLO_VIA="package",
            CHROLLO_HARNESS="opencode", **env)
    log = home / "logs" / "hooks.log"
    assert p.returncode == 0 and not (log.exists() and "stand down" in log.read_text())


def test_the_opencode_package_is_the_shipped_plugin_itself():
    """One file: hooks/opencode/index.js re-exports chrollo/data/opencode-plugin.js, the file
    `chrollo install opencode` writes (a copy would drift; OpenCode 1.18.33 silently loads
    nothing from a main that is a link out of the folder), and its package.json names it as
    OpenCode loads a folder (an ES module, ``main``)."""
    package = (ROOT / "hooks" / "opencode" / "index.js").read_text("utf-8")
    code = [ln for ln in package.splitlines() if ln and not ln.startswith("//")]
    assert code == ['export { ChrolloPlugin } from "../../chrollo/data/opencode-plugin.js";']
    assert "export const ChrolloPlugin = " in (ROOT / "chrollo" / "data" / "opencode-plugin.js").read_text("utf-8")
    manifest = json.loads((ROOT / "hooks" / "opencode" / "package.json").read_text("utf-8"))
    assert (manifest["name"], manifest["type"], manifest["main"]) == ("chrollo", "module", "index.js")
    assert adapter("opencode").EXTENSION_MARK in package     # (doctor reads the package's file as chrollo's)


# ----------------------------------------------------------------------------- one command per machine

def test_install_all_sets_up_every_harness_found_and_skips_one_with_its_package(home, tmp_path):
    from conftest import run

    fake = tmp_path / "h"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for b in ("codex", "gemini"):                 # on PATH: found
        (bindir / b).write_text("#!/bin/sh\n")
        (bindir / b).chmod(0o755)
    cfg = _claude_plugin(tmp_path, __version__)   # Claude Code: its folder, with chrollo's plugin in it
    env = {"HOME": fake, "CLAUDE_CONFIG_DIR": cfg, "CODEX_HOME": tmp_path / "codex",
           "PATH": f"{bindir}:/usr/bin:/bin", "PI_CODING_AGENT_DIR": tmp_path / "no-pi"}
    p = run(["install", "--all", "--json"], home, **env)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)["harnesses"]
    assert set(out) == {"claude-code", "codex", "gemini"}          # pi: neither on PATH nor its folder
    assert "chrollo@chrollo" in out["claude-code"]["skipped"]
    assert {c["part"] for c in out["codex"]["changes"]} == {"hooks", "mcp"}
    assert (fake / ".gemini" / "settings.json").exists() and (tmp_path / "codex" / "hooks.json").exists()
    p = run(["uninstall", "--all", "--json"], home, **env)
    assert p.returncode == 0, p.stderr
    assert not (fake / ".gemini" / "settings.json").exists() and not (tmp_path / "codex" / "hooks.json").exists()
    assert run(["install", "codex", "--all"], home, **env).returncode == 2


def test_the_package_s_mcp_server_lists_no_tools_where_chrollo_install_s_is_registered(home, tmp_path):
    from conftest import run

    cfg = tmp_path / "claude"
    calls = "".join(json.dumps(c) + "\n" for c in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
         "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])

    def tools():
        p = run(["mcp"], home, input=calls, CLAUDE_CONFIG_DIR=cfg, CHROLLO_VIA="package", CHROLLO_HARNESS="claude-code")
        replies = [json.loads(line) for line in p.stdout.splitlines()]
        return [t["name"] for t in replies[-1]["result"]["tools"]]

    assert tools() == ["read_memory", "read_memory_file"]
    assert run(["install", "claude-code", "--mcp"], home, CLAUDE_CONFIG_DIR=cfg).returncode == 0
    assert tools() == []      # chrollo install's server offers them: the model sees them once


def test_copilot_plugin_is_found_in_a_local_marketplace_or_as_a_copy(tmp_path, monkeypatch):
    """Copilot CLI keeps a plugin of a local marketplace in settings.json (loaded live from the
    marketplace's folder), any other in config.json's installedPlugins (a copy; JSON with
    comments): doctor finds chrollo's either way, and never a folder outside the marketplace."""
    from chrollo.harness import copilot

    home = tmp_path / "copilot"
    home.mkdir()
    monkeypatch.setenv("COPILOT_HOME", str(home))
    assert copilot.package() is None
    market = {"extraKnownMarketplaces": {"chrollo": {"source": {"source": "directory", "path": str(ROOT)}}},
              "enabledPlugins": {"chrollo@chrollo": True}}
    (home / "settings.json").write_text(json.dumps(market))
    pkg = copilot.package()
    assert (pkg["id"], pkg["root"], pkg["version"], pkg["enabled"]) == \
        ("chrollo@chrollo", str(ROOT / "hooks" / "copilot"), __version__, True)
    assert pkg["remove"] == "copilot plugin uninstall chrollo@chrollo"
    from chrollo.packages import hook_commands, mcp_command
    assert hook_commands(pkg)["userPromptSubmitted"] == f'"{pkg["root"]}/bin/chrollo-hook" copilot userPromptSubmitted'
    assert mcp_command(pkg) == [f'{pkg["root"]}/bin/chrollo-hook', "copilot", "mcp"]
    (home / "settings.json").write_text(json.dumps({**market, "enabledPlugins": {"chrollo@chrollo": False}}))
    assert copilot.package()["enabled"] is False          # (what `copilot plugin uninstall` leaves)
    evil = tmp_path / "evil"
    (evil / ".github" / "plugin").mkdir(parents=True)
    (evil / ".github" / "plugin" / "marketplace.json").write_text(json.dumps(
        {"name": "chrollo", "plugins": [{"name": "chrollo", "source": "../../.."}]}))
    (home / "settings.json").write_text(json.dumps({**market, "extraKnownMarketplaces": {
        "chrollo": {"source": {"source": "directory", "path": str(evil)}}}}))
    assert copilot.package() is None
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "hooks" / "copilot", copy)
    (home / "config.json").write_text("// managed automatically\n" + json.dumps({"installedPlugins": [
        {"name": "chrollo", "marketplace": "", "version": __version__, "cache_path": str(copy), "enabled": True}]}))
    pkg = copilot.package()
    assert (pkg["id"], pkg["root"], pkg["enabled"], pkg["remove"]) == ("chrollo", str(copy), True, "copilot plugin uninstall chrollo")


def test_copilot_plugin_s_mcp_server_keeps_its_tools_beside_chrollo_install_s(home, tmp_path):
    """Copilot CLI loads a plugin's MCP server instead of the user's of the same name: were the
    plugin's to stand down as the other harnesses' do, the model would be offered no read_memory."""
    from conftest import run

    cp = tmp_path / "copilot"
    calls = "".join(json.dumps(c) + "\n" for c in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
         "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
    assert run(["install", "copilot", "--mcp"], home, COPILOT_HOME=cp).returncode == 0
    p = run(["mcp"], home, input=calls, COPILOT_HOME=cp, CHROLLO_VIA="package", CHROLLO_HARNESS="copilot")
    assert [t["name"] for t in json.loads(p.stdout.splitlines()[-1])["result"]["tools"]] == ["read_memory", "read_memory_file"]


OPENCODE_LOADS = r"""
import * as mod from "%s";
const hooks = await Object.values(mod)[0]({ directory: process.env.PROJECT, worktree: "/", client: {} });
const bare = {}, theirs = { mcp: { chrollo: { type: "local", command: ["/elsewhere/chrollo", "mcp"] } } };
await hooks.config(bare);
await hooks.config(theirs);
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_pkg0001" } } });
console.log(JSON.stringify({ hooks: Object.keys(hooks).sort(), bare, theirs }));
"""


def test_the_opencode_package_adds_the_mcp_server_once_and_runs_chrollo_as_the_package(home, tmp_path):
    """The package's code as OpenCode loads it (a fake of its plugin API, the machine's node):
    its config hook adds chrollo's MCP server — the chrollo it finds, marked as the package's —
    unless the config has a server named chrollo already; its hooks run chrollo with
    CHROLLO_VIA=package and CHROLLO_HARNESS=opencode (what stands_down asks)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    calls = tmp_path / "calls.log"
    wrapper = tmp_path / "chrollo"
    wrapper.write_text(f'#!/bin/sh\necho "$CHROLLO_VIA $CHROLLO_HARNESS $*" >> {calls}\ncat >/dev/null\n')
    wrapper.chmod(0o755)
    (tmp_path / "load.mjs").write_text(OPENCODE_LOADS % (ROOT / "hooks" / "opencode" / "index.js"))
    p = subprocess.run(["node", "load.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CHROLLO_BIN": str(wrapper),
                            "PROJECT": str(tmp_path), "TMPDIR": str(tmp_path)})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["hooks"] == ["chat.message", "config", "event"]
    assert out["bare"] == {"mcp": {"chrollo": {"type": "local", "command": [str(wrapper), "mcp"], "enabled": True,
                                               "environment": {"CHROLLO_VIA": "package", "CHROLLO_HARNESS": "opencode"}}}}
    assert out["theirs"]["mcp"]["chrollo"]["command"] == ["/elsewhere/chrollo", "mcp"]   # (chrollo install's: kept)
    assert calls.read_text().splitlines() == ["package opencode hook session.idle --harness opencode"]


def test_opencode_package_is_found_in_a_global_config_s_plugin_list(tmp_path, monkeypatch):
    """`opencode plugin -g <folder>` adds the folder's path to opencode.json's (or .jsonc's)
    ``plugin`` list: doctor finds chrollo's there (a path, ``file://``, ``[spec, options]``),
    never an npm name or another folder; its MCP server is the one its code adds."""
    from chrollo.harness import opencode
    from chrollo.packages import findable_cli, mcp_command

    cfg = tmp_path / "config" / "opencode"
    cfg.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folder = str(ROOT / "hooks" / "opencode")
    assert opencode.package() is None
    (cfg / "opencode.json").write_text(json.dumps({"plugin": ["opencode-foo@1.2.0", str(ROOT / "hooks" / "copilot")]}))
    assert opencode.package() is None
    (cfg / "opencode.jsonc").write_text('// mine\n{"plugin": ["opencode-foo", "%s"]}' % folder)
    pkg = opencode.package()
    assert (pkg["id"], pkg["root"], pkg["version"], pkg["enabled"]) == (folder, folder, __version__, True)
    assert pkg["extension"] == os.path.join(folder, "index.js")
    assert pkg["remove"] == f'delete "{folder}" from the "plugin" list of {cfg / "opencode.jsonc"}'
    assert pkg["env"] == {"CHROLLO_VIA": "package", "CHROLLO_HARNESS": "opencode"}
    assert mcp_command(pkg) == [findable_cli() or "chrollo", "mcp"]
    (cfg / "opencode.jsonc").unlink()
    (cfg / "opencode.json").write_text(json.dumps({"plugin": [["file://" + folder, {"x": 1}]]}))
    assert opencode.package()["root"] == folder


def test_doctor_checks_the_opencode_package_and_says_which_to_remove_beside_chrollo_install(home, tmp_path):
    """The package alone: its plugin's events fired and the MCP server its code adds answer
    (ok); with `chrollo install opencode` too, doctor says which to remove — the package by
    deleting its entry, as OpenCode has no command for it."""
    from conftest import run

    env = {"XDG_CONFIG_HOME": tmp_path / "config", "XDG_DATA_HOME": tmp_path / "data",
           "CHROLLO_BIN": shutil.which("chrollo") or os.path.join(os.path.dirname(sys.executable), "chrollo")}
    (tmp_path / "config" / "opencode").mkdir(parents=True)
    (tmp_path / "config" / "opencode" / "opencode.json").write_text(json.dumps({"plugin": [str(ROOT / "hooks" / "opencode")]}))

    def doctor():
        p = run(["doctor", "--json", "--harness", "opencode"], home, **env)
        return json.loads(p.stdout)["harnesses"]["opencode"]

    report = doctor()
    assert report["status"] == "ok", report
    assert {f["event"] for f in report["fired"]} == {e for e, _ in adapter("opencode").EVENTS} and report["mcp"]["ok"]
    assert report["config"] == str(ROOT / "hooks" / "opencode")
    assert run(["install", "opencode"], home, **env).returncode == 0
    report = doctor()
    assert report["status"] == "duplicate", report
    assert "chrollo uninstall opencode" in report["fix"] and 'from the "plugin" list of' in report["fix"], report
    assert "the package's stand down" in report["fix"], report


# ----------------------------------------------------------------------------- the README

BINARY_OF = {"claude": "claude-code", "codex": "codex", "gemini": "gemini", "pi": "pi", "qwen": "qwen-code",
             "copilot": "copilot", "opencode": "opencode"}
# what the end-to-end suite adds to a user's command line: Codex's plugin feature (the suite's
# config turns it off: its catalogue sync reaches out) and Gemini's --consent (no terminal)
SUITE_ONLY = (("--enable", "plugins"), ("--consent",))


def readme_package_commands() -> dict:
    """{harness: ([install commands], [uninstall commands])} as docs/install.md's *Install* section
    types them (a block's lines after ``# remove:`` uninstall; a comment there is an edit, no
    command), the checkout for its placeholders."""
    import re
    import shlex

    text = (ROOT / "docs" / "install.md").read_text("utf-8")
    section = text[text.index("\n## Install\n"):text.index("\n## Hooking up a harness\n")]
    out = {}
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        lines = [re.sub(r"<clone path[^>]*>", str(ROOT), line) for line in block.splitlines()]
        if lines[0].split()[0] not in BINARY_OF:
            continue
        cut = lines.index("# remove:")
        out[BINARY_OF[lines[0].split()[0]]] = tuple([shlex.split(c) for c in part if not c.startswith("#")]
                                                    for part in (lines[:cut], lines[cut + 1:]))
    return out


def _as_user_types(cmd: list) -> list:
    cmd = [str(a) for a in cmd]
    for flags in SUITE_ONLY:
        for i in range(len(cmd) - len(flags) + 1):
            if tuple(cmd[i:i + len(flags)]) == flags:
                del cmd[i:i + len(flags)]
                break
    return cmd


def test_readme_install_commands_are_the_ones_the_e2e_suite_runs():
    """Each harness's install and uninstall lines in docs/install.md are, word for word, what
    tests/e2e/test_packages.py runs with the real harness (less the suite's own flags)."""
    from e2e.drivers import DRIVERS

    readme = readme_package_commands()
    packaged = {h: cls for h, cls in DRIVERS.items() if cls.has_package}
    assert set(readme) == set(packaged)
    for harness, cls in packaged.items():
        drv = cls.__new__(cls)       # (no world: the commands are facts of the driver)
        install, uninstall = drv.package_commands()
        assert readme[harness] == ([_as_user_types(c) for c in install], [_as_user_types(c) for c in uninstall]), harness


# every text that tells a user how to get the CLI (chrollo is not on PyPI: `uv tool install
# chrollo` would find nothing, or whatever someone else publishes under the name)
TELLS_HOW = ("hooks/claude-code/bin/chrollo-hook", "chrollo/data/pi-extension.ts", "chrollo/data/opencode-plugin.js",
             "chrollo/packages.py",
             "chrollo/doctor.py", "hooks/claude-code/.claude-plugin/plugin.json", "hooks/codex/.codex-plugin/plugin.json",
             "hooks/gemini/gemini-extension.json", "hooks/copilot/.plugin/plugin.json", "package.json", "README.md",
             "hooks/README.md", "docs/install.md")


def test_every_install_hint_installs_from_chrollo_s_repository_and_says_it_alike():
    import re

    for path in TELLS_HOW:
        text = (ROOT / path).read_text("utf-8")
        assert not re.search(r"\b(?:uv tool install|pipx install|pip install(?: -U)?|uv tool upgrade|pipx upgrade) chrollo\b",
                             text), path
    for how in ("uv tool install .", "pipx install .", "pip install .", "uv tool install git+"):
        assert how in HOW_TO_INSTALL
    for path in TELLS_HOW[:2]:         # the shim's notice and pi's: word for word the CLI's
        assert HOW_TO_INSTALL in (ROOT / path).read_text("utf-8"), path


def test_a_package_s_recall_hook_loads_nothing_more_than_chrollo_install_s(home, tmp_path):
    """The package's hook asks whether to stand down on every prompt: that question costs no
    import (chrollo.install brought vault, session, hashlib, inspect…: ~50 ms a prompt)."""
    from test_dependencies import _loaded

    cfg = _claude_plugin(tmp_path, __version__)     # settings.json names chrollo (enabledPlugins)
    prompt = json.dumps({"session_id": "s1", "prompt": "which port does the staging proxy use?",
                         "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit"})
    args = ["hook", "UserPromptSubmit", "--harness", "claude-code"]
    installs = _loaded(args, home, prompt, CLAUDE_CONFIG_DIR=cfg)
    package = _loaded(args, tmp_path / "other-home", prompt, CLAUDE_CONFIG_DIR=cfg, CHROLLO_VIA="package",
                      CHROLLO_HARNESS="claude-code")     # (a home of its own: the same first prompt)
    assert "chrollo.recall" in package
    assert package - installs == set()


def test_an_empty_or_relative_path_entry_never_runs_the_current_folder_s_chrollo(tmp_path):
    """``PATH=:$PATH`` (or ``.``, ``bin``) names the current folder: a repository the agent
    works in could hold its own ``./chrollo``. The shim, the CLI's own look-ups (the
    packages' chrollo for doctor, rg) take absolute PATH entries only."""
    repo = tmp_path / "repo"
    (repo / "bin").mkdir(parents=True)
    ran = tmp_path / "ran"
    for p in (repo / "chrollo", repo / "bin" / "chrollo", repo / "rg"):
        p.write_text(f"#!/bin/sh\necho pwned >> {ran}\n")
        p.chmod(0o755)
    for path in (":/usr/bin:/bin", "/usr/bin::/bin", "/usr/bin:/bin:", ".:/usr/bin", "bin:/usr/bin:/bin"):
        base = {"PATH": path, "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)}
        p = subprocess.run(["sh", str(SHIM), "claude-code", "Stop"], input="{}", capture_output=True, text=True,
                           env=base, cwd=repo, timeout=30)
        assert p.returncode == 0 and not ran.exists(), path
        code = ("import sys; from chrollo import packages, rg\n"
                "print(packages.findable_cli())\n"
                "try:\n    print(rg.rg_path())\nexcept Exception as e:\n    print(type(e).__name__)\n")
        # (a Python with no rg beside it: the system's, as a CLI installed without the wheel)
        py = subprocess.run(["/usr/bin/python3", "-S", "-c", code], capture_output=True, text=True, cwd=repo,
                            env={**base, "PYTHONPATH": str(ROOT)}, timeout=30)
        assert py.returncode == 0, py.stderr
        for line in py.stdout.split():
            assert line in ("None", "ChrolloError") or (line.startswith("/") and str(repo) not in line), (path, line)
