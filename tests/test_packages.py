"""The harnesses' own packages (issue 31): the Claude Code plugin, the Codex plugin, the Gemini
CLI extension and the pi package all run the same ``chrollo hook``/``chrollo mcp``; their shim
(``bin/chrollo-hook``) never breaks a prompt when chrollo is missing. The real harnesses install
and run them in tests/e2e/test_packages.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import ROOT

from chrollo import __version__
from chrollo.install import HOOK_EVENTS

PACKAGES = {"claude-code": ("hooks/claude-code", '"${CLAUDE_PLUGIN_ROOT}/bin/chrollo-hook"'),
            "codex": ("hooks/codex", '"$PLUGIN_ROOT/bin/chrollo-hook"'),
            "gemini": ("hooks/gemini", '"${extensionPath}/bin/chrollo-hook"')}
SHIM = ROOT / "hooks" / "claude-code" / "bin" / "chrollo-hook"


@pytest.mark.parametrize("harness", list(PACKAGES))
def test_package_hooks_are_the_events_chrollo_install_writes(harness):
    folder, shim = PACKAGES[harness]
    hooks = json.loads((ROOT / folder / "hooks" / "hooks.json").read_text())["hooks"]
    got = {e: [(h["command"], h["timeout"]) for g in groups for h in g["hooks"]] for e, groups in hooks.items()}
    assert got == {e: [(f"{shim} {harness} {e}", t)] for e, t in HOOK_EVENTS[harness]}


@pytest.mark.parametrize("harness", list(PACKAGES))
def test_every_package_carries_the_same_shim(harness):
    shim = ROOT / PACKAGES[harness][0] / "bin" / "chrollo-hook"
    assert shim.read_bytes() == SHIM.read_bytes() and os.access(shim, os.X_OK)


def test_every_manifest_has_the_cli_version():
    """doctor compares the installed package's version with the CLI's: one number everywhere."""
    versions = [json.loads((ROOT / p).read_text())["version"] for p in (
        "hooks/claude-code/.claude-plugin/plugin.json", "hooks/codex/.codex-plugin/plugin.json",
        "hooks/gemini/gemini-extension.json", "package.json")]
    market = json.loads((ROOT / ".claude-plugin/marketplace.json").read_text())
    versions += [p["version"] for p in market["plugins"]]
    assert versions == [__version__] * len(versions)
    assert market["plugins"][0]["source"] == "./hooks/claude-code"
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
    for how in ("uv tool install chrollo", "pipx install chrollo", "pip install chrollo"):
        assert how in notice
    again = _shim(["claude-code", "UserPromptSubmit"], one, tmp_path)
    assert again.returncode == 0 and again.stdout == ""          # once per session
    other = _shim(["gemini", "BeforeAgent"], json.dumps({"session_id": "sess-2"}), tmp_path)
    assert json.loads(other.stdout)["systemMessage"] == notice    # a new session is told again
    for event in ("Stop", "AfterAgent", "SessionEnd"):            # capture events: silent
        p = _shim(["codex", event], json.dumps({"session_id": "sess-3"}), tmp_path)
        assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    mcp = _shim(["mcp"], "", tmp_path)
    assert mcp.returncode == 1 and "uv tool install chrollo" in mcp.stderr and mcp.stdout == ""


def test_shim_runs_the_chrollo_it_finds(tmp_path):
    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "chrollo"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$CHROLLO_VIA $*" >> {calls}\ncat >> {calls}\n')
    fake.chmod(0o755)
    assert _shim(["codex", "Stop"], "{\"x\": 1}\n", tmp_path, CHROLLO_BIN=str(fake)).returncode == 0
    assert _shim(["gemini", "BeforeAgent"], "{}\n", tmp_path, PATH=f"{fake.parent}:/usr/bin:/bin").returncode == 0
    local = tmp_path / "home" / ".local" / "bin"   # where uv tool / pipx put it, off PATH
    local.mkdir(parents=True)
    shutil.copy(fake, local / "chrollo")
    assert _shim(["mcp"], "", tmp_path).returncode == 0
    assert calls.read_text().splitlines() == ["package hook Stop --harness codex", '{"x": 1}',
                                              "package hook BeforeAgent --harness gemini", "{}", "package mcp"]
