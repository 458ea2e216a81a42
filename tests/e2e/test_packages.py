"""chrollo as each harness's own package (issues 31, 46): the Claude Code plugin, the Codex
plugin, the Gemini CLI and Qwen Code extensions, the pi package, the Copilot CLI plugin and the
OpenCode plugin, installed from this checkout with the harness's own command — no ``chrollo
install`` — pass the same scenarios as ``chrollo install``."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from chrollo.packages import HOW_TO_INSTALL

from .conftest import HARNESSES
from .drivers import DRIVERS
from .kit.world import ROOT

# the scenarios, collected here again with this module's `make` (the package, not `chrollo install`)
from .test_capture import test_plain_turn, turns  # noqa: F401
from .test_install import snapshot
from .test_mcp_tool_search import test_claude_code_tool_search_finds_read_memory_first  # noqa: F401
from .test_recall import (test_model_calls_read_memory_and_the_hit_reaches_its_next_request,  # noqa: F401
                          agent_requests, test_new_session_request_carries_the_recall_block)

pytestmark = pytest.mark.e2e
PACKAGED = [h for h in HARNESSES if DRIVERS[h].has_package]


@pytest.fixture
def make(world):
    def _make(name: str, install: bool = True, mcp: bool = True):
        assert DRIVERS[name].has_package, name   # (the others are deselected: conftest.py)
        drv = DRIVERS[name](world)
        if install:
            drv.install_package()
        return drv
    return _make


def _doctor(world, harness) -> dict:
    return json.loads(world.chrollo("doctor", "--json", "--harness", harness, check=False).stdout)["harnesses"][harness]


@pytest.mark.parametrize("harness", PACKAGED)
def test_doctor_checks_the_package_and_it_really_captures(make, world, harness):
    drv = make(harness)
    kw = {}
    if harness == "codex":     # plugin hooks wait for trust like any other; doctor says so, and how
        report = _doctor(world, "codex")
        assert report["status"] == "untrusted" and '"chrollo@chrollo:hooks/hooks.json:' in report["fix"], report
        drv.trust()            # the lines doctor prints, as the TUI writes them
        kw = {"bypass_trust": False}
    report = _doctor(world, harness)
    assert report["status"] == "ok", report
    assert report["package"]["version"] == report["package"]["cli_version"]
    assert [f["event"] for f in report["fired"]] and all(f["ok"] for f in report["fired"]), report
    assert report["mcp"]["registered"] and report["mcp"]["ok"], report
    mark = world.server.mark()
    assert drv.run("say: doctor was right about this package", **kw).ok
    assert "doctor was right" in world.vault_text()
    first = agent_requests(world, mark)[0]     # read_memory offered in the first request, once
    offered = [n for n in first.get("tools", []) + first.get("deferred", []) if n.endswith("read_memory")]
    assert len(offered) == 1, first.get("tools", []) + first.get("deferred", [])


def _mentions_chrollo(home: Path) -> list:
    """Files under HOME (not chrollo's own folder) that still name chrollo or this checkout, and
    folders named so.
    Claude Code's uninstall marks the plugin's cached copy ``.orphaned_at`` and deletes it
    later itself: such a copy is no longer installed, and is not counted."""
    orphans = [p.parent for p in home.rglob(".orphaned_at")]
    out = []
    for p in home.rglob("*"):
        if p.is_relative_to(home / ".chrollo") or p.is_symlink() or any(p.is_relative_to(o) for o in orphans):
            continue
        if any(o.is_relative_to(p) for o in orphans):   # a folder that only holds the orphan
            continue
        if p.is_dir() and not any(p.iterdir()):      # (an empty folder a harness left holds nothing)
            continue
        # pi records a local package's path relative to its settings file ("../../../../ci" for a
        # clone at /tmp/ci): the checkout is named either way
        # (the word, not a part of one: Copilot CLI's own runtime.node says "mismatchrollover")
        names = re.compile(b"|".join(re.escape(w) for w in (str(ROOT).encode(), os.path.relpath(ROOT, p.parent).encode()))
                           + rb"|(?<![A-Za-z])chrollo(?![A-Za-z])")
        if "chrollo" in p.name or p.is_file() and names.search(p.read_bytes()):
            out.append(str(p.relative_to(home)))
    return out


@pytest.mark.parametrize("harness", PACKAGED)
def test_the_harness_uninstall_removes_everything(make, world, harness):
    drv = make(harness, install=False)
    before = _mentions_chrollo(world.home)       # (the suite's fake model is "chrollo e2e")
    drv.install_package()
    assert _mentions_chrollo(world.home) != before
    drv.uninstall_package()
    # Gemini CLI 0.61 keeps the hash of every extension it ever installed in its signed integrity
    # store, and the folder the user said to trust stays trusted: its own records, loading nothing
    kept = {".gemini/extension_integrity.json", ".gemini/trustedFolders.json",
            # Qwen Code 0.24 keeps its extension store's previous state (a backup it never loads)
            ".qwen/extension-store/state.previous.json"}
    # Claude Code 2.1.332 lists an uninstalled plugin under ~/.claude.json's "declinedPlugins"
    # (so it does not offer it again): also its own record, and the only mention left there
    # Copilot CLI 1.0.102 uninstalls a plugin of a local marketplace by disabling it (it was
    # loaded live from the checkout, never copied): settings.json keeps "chrollo@chrollo": false
    copilot_settings = world.home / ".copilot" / "settings.json"
    if copilot_settings.is_file():
        left = {k: v for k, v in json.loads(copilot_settings.read_text("utf-8")).items() if "chrollo" in json.dumps(v)}
        if left == {"enabledPlugins": {"chrollo@chrollo": False}}:
            kept.add(".copilot/settings.json")
    claude_json = world.home / ".claude.json"
    if ".claude.json" not in before and claude_json.is_file():
        left = {k: v for k, v in json.loads(claude_json.read_text("utf-8")).items() if "chrollo" in json.dumps(v)}
        if left == {"declinedPlugins": ["chrollo@chrollo"]}:
            kept.add(".claude.json")
    assert [p for p in _mentions_chrollo(world.home) if p not in kept] == before
    assert drv.run("say: not captured after the package is gone").ok
    assert world.vault_files() == {}


@pytest.mark.parametrize("harness", PACKAGED)
def test_without_the_cli_the_prompt_goes_on(make, world, harness):
    """chrollo is not installed where the package looks (no CHROLLO_BIN, not on PATH, no
    ~/.local/bin/chrollo): the harness answers, nothing breaks, nothing is written."""
    drv = make(harness)
    node = os.path.dirname(shutil.which("node"))
    path = os.pathsep.join(dict.fromkeys([str(world.bin_dir), node, "/usr/bin", "/bin"]))
    told = world.tmp / "tmp" / f"chrollo-notice-{os.getuid()}"    # the shim's record of telling a session
    args = {"args": ("--output-format", "stream-json", "--verbose")} if harness == "claude-code" else {}
    r = drv.run("say: answered without chrollo", PATH=path, **args)
    assert r.ok, r.proc.stderr
    assert "answered without chrollo" in r.proc.stdout
    assert world.vault_files() == {} and "Traceback" not in r.proc.stderr
    if harness in ("codex", "qwen-code", "copilot"):   # `codex exec`, `qwen -p`, `copilot -p` show no hook's message: the shim told this session
        assert len(list(told.iterdir())) == 1
    else:
        assert _notices(harness, r) == 1, r.proc.stdout + r.proc.stderr
    if harness != "pi":      # a second prompt of the same session is not told again (pi: once per process)
        (sid,) = [p.name for p in told.iterdir()]
        again = drv.run("say: still without chrollo", resume=sid, PATH=path, **args)
        assert again.ok and "still without chrollo" in again.proc.stdout, again.proc.stderr
        assert _notices(harness, again) == 0 and [p.name for p in told.iterdir()] == [sid]


def _notices(harness: str, r) -> int:
    """How often the run showed the user how to install chrollo: Claude Code's stream-json
    carries a hook's systemMessage as an informational system message, Gemini CLI and pi print
    it on stderr."""
    if harness != "claude-code":
        return r.proc.stderr.count(HOW_TO_INSTALL)
    events = [json.loads(line) for line in r.proc.stdout.splitlines() if line.startswith("{")]
    return sum(1 for e in events if e.get("subtype") == "informational" and HOW_TO_INSTALL in str(e.get("content")))


@pytest.mark.parametrize("harness", PACKAGED)
def test_package_and_chrollo_install_together_capture_and_inject_once(make, world, harness):
    drv = make(harness)
    drv.install()                                        # `chrollo install` on top of the package
    if harness == "codex":
        drv.trust()
    assert drv.run("say: the staging reverse proxy listens on port 8443 behind nginx").ok
    (text,) = world.vault_files().values()
    assert turns(text) == [("User", "say: the staging reverse proxy listens on port 8443 behind nginx"),
                           ("Agent", "> the staging reverse proxy listens on port 8443 behind nginx")]
    mark = world.server.mark()
    assert drv.run("which port does the staging reverse proxy listen on?").ok
    request = agent_requests(world, mark)[0]
    first = json.dumps(request["body"])
    assert first.count("[chrollo-recall]") == 1, first[:3000]
    offered = [n for n in request.get("tools", []) + request.get("deferred", []) if n.endswith("read_memory")]
    assert len(offered) == 1, offered    # the package's server lists none (pi: its extension loads once)
    report = _doctor(world, harness)
    assert report["status"] == "duplicate" and f"chrollo uninstall {harness}" in report["fix"], report
    uninstall = DRIVERS[harness].package_commands(drv)[1]
    # the harness's own command, as the README says (OpenCode has none: deleting the config's entry)
    remove = " ".join(map(str, uninstall[0][:3])) if uninstall else 'from the "plugin" list'
    assert remove in report["fix"], report
    # what runs: chrollo install's hooks (the package's stand down); pi loads one of the two copies
    assert ("loads chrollo's extension once" if harness == "pi" else "the package's stand down") in report["fix"]


@pytest.mark.parametrize("harness", PACKAGED)
def test_chrollo_uninstall_beside_the_package_leaves_its_configs_as_they_were(make, world, harness):
    """Both ways, then `chrollo uninstall`: the files it edited are byte for byte what the
    package left, and the package, no longer standing down, captures the next turn once."""
    drv = make(harness)
    kw = {}
    if harness == "codex":
        drv.trust()
        kw = {"bypass_trust": False}
    before = snapshot(drv.config_files())
    drv.install()
    assert snapshot(drv.config_files()) != before
    drv.uninstall()
    assert snapshot(drv.config_files()) == before
    assert drv.run("say: the package alone again", **kw).ok
    (text,) = world.vault_files().values()
    assert turns(text) == [("User", "say: the package alone again"), ("Agent", "> the package alone again")]
    assert _doctor(world, harness)["status"] == "ok"


def test_codex_plugin_hooks_untrusted_do_not_run_and_doctor_says_so(make, world):
    drv = make("codex")
    report = _doctor(world, "codex")
    assert report["status"] == "untrusted" and "trusted_hash" in report["fix"], report
    assert drv.run("say: an untrusted plugin turn", bypass_trust=False).ok
    assert world.vault_files() == {}


def test_gemini_linked_extension_captures_and_doctor_finds_it(make, world):
    """`gemini extensions link` (a checkout you edit) instead of a copy: the same extension."""
    drv = make("gemini", install=False)
    drv._cli(["gemini", "extensions", "link", ROOT / "hooks" / "gemini", "--consent"], input="y\n")
    assert drv.run("say: captured through the linked extension").ok
    assert "captured through the linked extension" in world.vault_text()
    report = _doctor(world, "gemini")
    assert report["status"] == "ok" and report["config"] == str(ROOT / "hooks" / "gemini"), report
    drv.uninstall_package()
    assert _doctor(world, "gemini")["status"] == "missing"
