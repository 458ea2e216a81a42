"""Codex 0.171 (#46): it skips command hooks marked ``"async": true`` (doctor says so), will not
start while ``CODEX_HOME`` names a missing folder (install makes it), and asks "Trust this
folder?" before "Hooks need review" (what install and doctor tell the user to answer)."""
from __future__ import annotations

import json

from conftest import ROOT, run, run_json

from chrollo.harness import codex_hook_trust as codex_trust


def _env(tmp_path):
    fake = tmp_path / "h"
    fake.mkdir(exist_ok=True)
    return {"HOME": fake, "CODEX_HOME": tmp_path / "codex"}


def test_doctor_says_codex_skips_chrollos_hooks_marked_async(home, tmp_path):
    env = _env(tmp_path)
    assert run(["install", "codex"], home, **env).returncode == 0
    hooks = tmp_path / "codex" / "hooks.json"
    data = json.loads(hooks.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["async"] = True
    hooks.write_text(json.dumps(data, indent=2))
    _p, out = run_json(["doctor", "--harness", "codex", "--json"], home, **env)
    r = out["harnesses"]["codex"]
    assert r["status"] == "broken", r
    assert '"async": true' in r["fix"] and "Stop" in r["fix"] and str(hooks) in r["fix"]


def test_install_makes_a_missing_codex_home_which_codex_needs_to_start(home, tmp_path):
    env = _env(tmp_path)
    assert not (tmp_path / "codex").exists()
    assert run(["install", "codex"], home, **env).returncode == 0
    assert (tmp_path / "codex" / "hooks.json").is_file() and (tmp_path / "codex" / "config.toml").is_file()


def test_chrollos_codex_hooks_are_plain_sync_hooks_and_nothing_else(home, tmp_path):
    """No top-level key but ``hooks`` and no ``async`` handler, installed or packaged."""
    env = _env(tmp_path)
    assert run(["install", "codex"], home, **env).returncode == 0
    for path in (tmp_path / "codex" / "hooks.json", ROOT / "hooks" / "codex" / "hooks" / "hooks.json"):
        data = json.loads(path.read_text())
        assert list(data) == ["hooks"], path
        handlers = [h for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
        assert handlers and not any("async" in h for h in handlers), path


def test_install_and_doctor_name_the_prompts_codex_0171_shows(home, tmp_path):
    env = _env(tmp_path)
    p = run(["install", "codex"], home, **env)
    for said in (p.stderr, codex_trust.HOW_TO_TRUST):
        assert "Trust this folder?" in said and "Trust all and continue" in said and "Hooks need review" in said
