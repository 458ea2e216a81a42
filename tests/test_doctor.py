"""`chrollo doctor`: fires each installed hook for real and reports what works."""
from __future__ import annotations

import json
import sys

from conftest import run


def trust_codex_hooks(codex_home) -> None:
    """What Codex's "Hooks need review" prompt writes when the user approves chrollo's hooks."""
    from chrollo.harness import codex_hook_trust as codex_trust
    from chrollo.install import _is_ours

    hooks, config = codex_home / "hooks.json", codex_home / "config.toml"
    entries = codex_trust.status(str(hooks), str(config), lambda c: _is_ours(c, "codex"))
    config.write_text((config.read_text() if config.exists() else "") + "\n" + codex_trust.toml_lines(entries) + "\n")


def _env(tmp_path):
    fake = tmp_path / "h"
    fake.mkdir(exist_ok=True)
    return {"HOME": fake, "CLAUDE_CONFIG_DIR": tmp_path / "claude", "CODEX_HOME": tmp_path / "codex",
            "XDG_CONFIG_HOME": fake / ".config", "XDG_DATA_HOME": fake / ".local" / "share"}


def test_nothing_installed_is_reported_not_failed(home, tmp_path):
    p = run(["doctor", "--json"], home, **_env(tmp_path))
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert {h: r["status"] for h, r in report["harnesses"].items()} == {
        "claude-code": "missing", "codex": "missing", "copilot": "missing", "gemini": "missing", "opencode": "missing",
        "pi": "missing", "qwen-code": "missing"}
    assert report["harnesses"]["codex"]["fix"] == "chrollo install codex"
    assert {"ripgrep", "vault", "hook log", "privacy"} <= {c["name"] for c in report["checks"]}


def test_installed_hooks_are_fired_and_the_real_vault_is_untouched(home, tmp_path):
    env = _env(tmp_path)
    for h in ("claude-code", "codex", "gemini", "opencode", "pi", "qwen-code", "copilot"):
        assert run(["install", h], home, **env).returncode == 0
    trust_codex_hooks(tmp_path / "codex")
    p = run(["doctor", "--json"], home, **env)
    report = json.loads(p.stdout)
    assert p.returncode == 0 and report["ok"], json.dumps(report, indent=1)
    fired = {h: [(f["event"], f["ok"]) for f in r["fired"]] for h, r in report["harnesses"].items()}
    assert fired["claude-code"][:2] == [("UserPromptSubmit", True), ("Stop", True)]
    assert fired["gemini"][0] == ("BeforeAgent", True) and fired["pi"][0] == ("before_agent_start", True)
    assert fired["opencode"] == [("chat.message", True), ("session.idle", True)]
    assert not list((home / "memories").rglob("*.md"))  # samples go to a throwaway home (install made it empty)
    tools = {h: r["mcp"] for h, r in report["harnesses"].items()}
    assert all(t["registered"] and t["ok"] for t in tools.values()), tools
    assert tools["claude-code"]["config"] == str(tmp_path / "claude" / ".claude.json")
    assert {r["status"] for r in report["harnesses"].values()} == {"ok"}
    human = run(["doctor"], home, **env)
    assert human.returncode == 0 and "all installed hooks work" in human.stdout
    assert human.stdout.count("read_memory tool: ok in") == 7
    assert fired["qwen-code"][:2] == [("UserPromptSubmit", True), ("Stop", True)]
    assert fired["copilot"][:2] == [("userPromptSubmitted", True), ("agentStop", True)]


def test_a_broken_hook_is_named_with_a_fix(home, tmp_path):
    env = _env(tmp_path)
    run(["install", "codex"], home, **env)
    cfg = tmp_path / "codex" / "hooks.json"
    data = json.loads(cfg.read_text())
    for g in data["hooks"]["UserPromptSubmit"]:
        for h in g["hooks"]:
            h["command"] = "/nonexistent/chrollo hook UserPromptSubmit --harness codex"
    cfg.write_text(json.dumps(data))
    p = run(["doctor", "--harness", "codex", "--json"], home, **env)
    assert p.returncode == 1
    r = json.loads(p.stdout)["harnesses"]["codex"]
    assert r["status"] == "broken" and r["fix"].startswith("chrollo install codex")
    assert [f["ok"] for f in r["fired"]] == [False, True]
    human = run(["doctor", "--harness", "codex"], home, **env)
    assert human.returncode == 1 and "BROKEN" in human.stdout and "fix: chrollo install codex" in human.stdout


def test_the_tool_is_checked_by_starting_the_registered_server(home, tmp_path):
    env = _env(tmp_path)
    run(["install", "claude-code", "--no-mcp"], home, **env)
    r = json.loads(run(["doctor", "--harness", "claude-code", "--json"], home, **env).stdout)["harnesses"]["claude-code"]
    assert r["status"] == "partial" and not r["mcp"]["registered"] and "read_memory tool" in r["fix"]
    run(["install", "claude-code", "--mcp"], home, **env)
    cfg = tmp_path / "claude" / ".claude.json"
    data = json.loads(cfg.read_text())
    data["mcpServers"]["chrollo"]["args"] = ["-c", "import sys; sys.stdin.read()"]  # starts, never answers
    data["mcpServers"]["chrollo"]["command"] = sys.executable
    cfg.write_text(json.dumps(data))
    p = run(["doctor", "--harness", "claude-code", "--json"], home, **env)
    r = json.loads(p.stdout)["harnesses"]["claude-code"]
    assert p.returncode == 1 and r["status"] == "broken"
    assert r["mcp"]["detail"].startswith("no answer to initialize") and "re-registers the tool" in r["fix"]


def test_a_chrollo_home_that_is_a_file_fails_the_check(home, tmp_path):
    """#44: CHROLLO_HOME naming a file: nothing can be captured, so doctor fails (exit 1) and
    says why — it said all was well."""
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("not a folder")
    p = run(["doctor", "--json"], home, **_env(tmp_path))
    report = json.loads(p.stdout)
    assert p.returncode == 1 and not report["ok"], p.stdout
    failed = [c for c in report["checks"] if c["status"] == "failed"]
    assert any(str(home) in c["detail"] and "not a folder" in c["detail"] for c in failed), failed
    human = run(["doctor"], home, **_env(tmp_path))
    assert human.returncode == 1 and "all installed hooks work" not in human.stdout


def test_hooks_installed_with_config_are_checked_too(home, tmp_path):
    """#44: `install claude-code --config FILE` writes hooks doctor never looked at; it fires
    them (a broken one fails doctor) and names the file."""
    env = _env(tmp_path)
    cfg = tmp_path / "elsewhere" / "settings.json"
    cfg.parent.mkdir()
    assert run(["install", "claude-code", "--config", cfg], home, **env).returncode == 0
    p = run(["doctor", "--json"], home, **env)
    report = json.loads(p.stdout)
    extra = [r for r in report.get("configs", []) if r["config"] == str(cfg)]
    # (partial: --config names the hooks' file; Claude Code keeps the tool in another)
    assert extra and extra[0]["harness"] == "claude-code" and extra[0]["status"] == "partial", report.get("configs")
    assert extra[0]["fired"] and all(f["ok"] for f in extra[0]["fired"]) and report["ok"]
    assert str(cfg) in run(["doctor"], home, **env).stdout
    data = json.loads(cfg.read_text())
    for g in data["hooks"]["UserPromptSubmit"]:
        for h in g["hooks"]:
            h["command"] = "/nonexistent/chrollo hook UserPromptSubmit --harness claude-code"
    cfg.write_text(json.dumps(data))
    p = run(["doctor", "--json"], home, **env)
    report = json.loads(p.stdout)
    assert p.returncode == 1 and not report["ok"]
    assert [r["status"] for r in report["configs"] if r["config"] == str(cfg)] == ["broken"]
