"""Codex runs hooks.json hooks only once trusted (issue 18, item 7): doctor detects untrusted
hooks and says what to do; install says it too."""
from __future__ import annotations

import json
import tomllib

from conftest import run, run_json
from recorded import RECORDED

from chrollo.harness import codex_hook_trust as codex_trust


def test_trust_hash_is_the_one_codex_accepted():
    """The recorded Codex 0.169.0 run trusted its hooks with these hashes, and codex ran them
    (the run's hooks.jsonl is what they recorded)."""
    home = RECORDED / "codex-0.169.0" / "codex-home"
    hooks = json.loads((home / "hooks.json").read_text())["hooks"]
    state = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    assert len(state) == 2
    for key, entry in state.items():
        event = {"user_prompt_submit": "UserPromptSubmit", "stop": "Stop"}[key.split(":")[-3]]
        group = hooks[event][0]
        assert codex_trust.hook_hash(event, group, group["hooks"][0]) == entry["trusted_hash"]
    ran = {json.loads(ln)["event"] for ln in (RECORDED / "codex-0.169.0" / "hooks.jsonl").read_text().splitlines()}
    assert ran == {"UserPromptSubmit", "Stop"}


def _env(tmp_path):
    fake = tmp_path / "h"
    fake.mkdir(exist_ok=True)
    return {"HOME": fake, "CODEX_HOME": tmp_path / "codex"}


def test_doctor_and_install_say_when_codex_will_skip_the_hooks(home, tmp_path):
    env = _env(tmp_path)
    p = run(["install", "codex"], home, **env)
    assert p.returncode == 0
    assert "will not run these hooks until you trust them" in p.stderr and "Hooks need review" in p.stderr
    p = run(["doctor", "--harness", "codex", "--json"], home, **env)
    assert p.returncode == 1  # untrusted hooks capture nothing: not ok
    r = json.loads(p.stdout)["harnesses"]["codex"]
    assert r["status"] == "untrusted"
    assert [(t["event"], t["status"]) for t in r["trust"]] == [("UserPromptSubmit", "untrusted"), ("Stop", "untrusted")]
    assert "Hooks need review" in r["fix"] and "--dangerously-bypass-hook-trust" in r["fix"]
    human = run(["doctor", "--harness", "codex"], home, **env)
    assert human.returncode == 1 and "NOT TRUSTED" in human.stdout
    # what the fix says to add is what codex's TUI writes: with it, the hooks are trusted
    config = tmp_path / "codex" / "config.toml"
    lines = r["fix"].split("\n", 1)[1]
    config.write_text((config.read_text() if config.exists() else "") + "\n" + lines + "\n")
    p, report = run_json(["doctor", "--harness", "codex"], home, **env)
    assert p.returncode == 0 and report["harnesses"]["codex"]["status"] == "ok"
    assert {t["status"] for t in report["harnesses"]["codex"]["trust"]} == {"trusted"}
    again = run(["install", "codex", "--json"], home, **env)
    assert not any("note" in c for c in json.loads(again.stdout)["changes"])
    # a hook changed since it was trusted is "modified" (codex asks again)
    hooks_file = tmp_path / "codex" / "hooks.json"
    data = json.loads(hooks_file.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 31
    hooks_file.write_text(json.dumps(data))
    _, report = run_json(["doctor", "--harness", "codex"], home, **env)
    trust = {t["event"]: t["status"] for t in report["harnesses"]["codex"]["trust"]}
    assert trust == {"UserPromptSubmit": "trusted", "Stop": "modified"}
    assert report["harnesses"]["codex"]["status"] == "untrusted"
