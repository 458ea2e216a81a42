"""Install, uninstall and doctor against the real harnesses' config files."""
from __future__ import annotations

import json

import pytest

from .conftest import HARNESSES

pytestmark = pytest.mark.e2e


def snapshot(files: list) -> dict:
    return {str(p): p.read_bytes() if p.exists() else None for p in files}


@pytest.mark.parametrize("harness", HARNESSES)
def test_uninstall_restores_the_config_byte_for_byte(make, world, harness):
    drv = make(harness, install=False)
    before = snapshot(drv.config_files())
    drv.install()
    assert snapshot(drv.config_files()) != before
    drv.install()                                  # idempotent
    drv.uninstall()
    assert snapshot(drv.config_files()) == before


@pytest.mark.parametrize("harness", HARNESSES)
def test_uninstall_after_the_harness_ran_leaves_no_trace_and_stops_capture(make, world, harness):
    drv = make(harness)
    assert drv.run("say: captured while installed").ok
    drv.uninstall()
    for path, data in snapshot(drv.config_files()).items():
        assert data is None or b"chrollo hook" not in data and b'"chrollo"' not in data, path
    before = world.vault_files()
    assert drv.run("say: not captured after uninstall").ok
    assert world.vault_files() == before


@pytest.mark.parametrize("harness", HARNESSES)
def test_doctor_says_ok_and_the_harness_really_captures(make, world, harness):
    drv = make(harness)
    kw = {}
    if harness == "codex":      # approved as in the TUI: then no bypass flag is needed
        drv.trust()
        kw = {"bypass_trust": False}
    report = json.loads(world.chrollo("doctor", "--json", check=False).stdout)
    assert report["harnesses"][harness]["status"] == "ok", report["harnesses"][harness]
    assert drv.run("say: doctor was right about this harness", **kw).ok
    assert "doctor was right" in world.vault_text()


def test_codex_untrusted_hooks_do_not_run_and_doctor_says_so(make, world):
    """Without trust (no ``trusted_hash`` written by the TUI, no bypass flag) ``codex exec``
    skips chrollo's hooks silently: nothing is captured. The suite therefore runs Codex with
    ``--dangerously-bypass-hook-trust``, as a CI user would."""
    drv = make("codex")
    report = json.loads(world.chrollo("doctor", "--json", "--harness", "codex", check=False).stdout)["harnesses"]["codex"]
    assert report["status"] == "untrusted" and "trusted_hash" in report["fix"], report
    assert drv.run("say: an untrusted codex turn", bypass_trust=False).ok
    assert world.vault_files() == {}


def test_doctor_warns_when_a_harness_stopped_capturing(make, world):
    """Claude Code keeps writing sessions, but chrollo's hooks have not captured for long
    (e.g. a harness update stopped firing them): doctor must say so."""
    import os
    import time

    drv = make("claude-code")
    assert drv.run("say: the last captured turn").ok
    old = time.time() - 30 * 86400
    for f in world.vault.glob("*.md"):
        os.utime(f, (old, old))
    drv.uninstall()                          # hooks gone: the harness goes on without chrollo
    assert drv.run("say: an uncaptured turn").ok
    drv.install()
    report = json.loads(world.chrollo("doctor", "--json", "--harness", "claude-code", check=False).stdout)
    text = json.dumps(report["harnesses"]["claude-code"]).lower()
    assert "last captured" in text or "stale" in text, report


# (the harnesses chrollo ships a package for run this scenario on their packages: test_packages.py)
@pytest.mark.parametrize("harness", ["qwen-code", "copilot"])
def test_hooks_whose_chrollo_is_gone_never_break_a_prompt(make, world, harness):
    """`chrollo install`'s hooks and server name chrollo by absolute path; that chrollo is gone
    (uninstalled, its virtualenv deleted): the harness still answers, and nothing is written."""
    import sys
    from pathlib import Path

    drv = make(harness)
    gone = str(world.tmp / "gone" / "chrollo")
    script = str(Path(sys.executable).with_name("chrollo"))
    for f in drv.config_files():
        if f.exists():
            text = f.read_text("utf-8")
            f.write_text(text.replace(json.dumps(script)[1:-1], gone).replace(json.dumps(sys.executable)[1:-1], gone),
                         "utf-8")
            assert gone in f.read_text("utf-8"), f
    r = drv.run("say: answered with chrollo gone")
    assert r.ok, r.proc.stderr
    assert "answered with chrollo gone" in r.proc.stdout
    assert world.vault_files() == {}


def test_opencode_without_the_cli_the_prompt_goes_on(make, world):
    """chrollo was installed for OpenCode, then removed (the plugin's and the MCP server's
    chrollo path is gone): the model answers, nothing is written, the run says once how to
    install chrollo, and no traceback. (test_packages.py runs it on OpenCode's package too.)"""
    from chrollo.install import chrollo_command
    from chrollo.packages import HOW_TO_INSTALL

    drv = make("opencode")
    gone = "/nonexistent/venv/bin/chrollo"
    for path in drv.config_files():
        path.write_text(path.read_text("utf-8").replace(chrollo_command()[0], gone), "utf-8")
    r = drv.run("say: answered without chrollo")
    assert r.ok, r.proc.stderr
    assert r.text == "answered without chrollo"
    assert world.vault_files() == {} and "Traceback" not in r.proc.stderr
    assert r.proc.stderr.count(HOW_TO_INSTALL) == 1, r.proc.stderr
