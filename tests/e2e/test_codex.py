"""Codex only (0.171.0, #46): what it does with hooks marked async, a CODEX_HOME that does not
exist, and a hooks.json with a top-level description."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e


def _hooks(world):
    return world.home / ".codex" / "hooks.json"


def test_hooks_marked_async_are_not_waited_for_and_doctor_says_so(make, world):
    """Codex 0.171 does not wait for a hook marked async: whether its turn is written depends
    on the machine's load (lost at load 15, written on a quiet machine) — doctor calls that
    broken whatever this run did."""
    drv = make("codex")
    data = json.loads(_hooks(world).read_text("utf-8"))
    for groups in data["hooks"].values():
        for g in groups:
            for h in g["hooks"]:
                h["async"] = True
    _hooks(world).write_text(json.dumps(data, indent=2), "utf-8")
    assert drv.run("say: an async hook turn").ok
    report = json.loads(world.chrollo("doctor", "--json", "--harness", "codex", check=False).stdout)["harnesses"]["codex"]
    assert report["status"] == "broken" and '"async": true' in report["fix"], report


def test_a_missing_codex_home_stops_codex_and_install_makes_it(make, world):
    drv = make("codex", install=False)
    fresh = world.tmp / "codex-home"
    r = drv.run("say: codex with no home yet", CODEX_HOME=fresh)
    assert not r.ok and "CODEX_HOME" in r.proc.stderr
    world.chrollo("install", "codex", CODEX_HOME=fresh)
    assert fresh.is_dir()
    # the suite's model provider beside what install wrote
    cfg = fresh / "config.toml"
    cfg.write_text((world.home / ".codex" / "config.toml").read_text("utf-8") + "\n" + cfg.read_text("utf-8"), "utf-8")
    r = drv.run("say: codex with the home install made", CODEX_HOME=fresh)
    assert r.ok, r.proc.stderr
    assert "codex with the home install made" in world.vault_text()


def test_a_top_level_description_in_hooks_json_still_runs_chrollos_hooks(make, world):
    """Reported for 0.171 (#46): Codex refuses such a file. Not so for codex exec 0.171.0 here,
    bypassing trust or trusted: the hooks run (chrollo never writes the key)."""
    drv = make("codex")
    data = json.loads(_hooks(world).read_text("utf-8"))
    _hooks(world).write_text(json.dumps({"description": "my hooks", **data}, indent=2), "utf-8")
    assert drv.run("say: a turn beside a described hooks file").ok
    assert "a turn beside a described hooks file" in world.vault_text()
