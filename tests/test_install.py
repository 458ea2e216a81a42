"""`chrollo install/uninstall <harness> --mcp`: idempotent, preserving, exactly reversible."""
from __future__ import annotations

import json

import pytest

from conftest import run

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

ORIGINAL_JSON = '{\n    "theme": "dark",\n  "mcpServers": {"other": {"command": "x"}},\n  "numStartups": 7\n}\n'
ORIGINAL_TOML = 'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "x"\n'


def _cli(home, *args, **env):
    return run(list(args), home, **env)


@pytest.mark.parametrize("harness", ["claude-code", "gemini"])
def test_json_install_is_idempotent_and_uninstall_restores_bytes(home, tmp_path, harness):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(ORIGINAL_JSON)
    p = _cli(home, "install", harness, "--mcp", "--config", cfg, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["action"] == "installed"
    data = json.loads(cfg.read_text())
    assert data["theme"] == "dark" and data["numStartups"] == 7 and data["mcpServers"]["other"] == {"command": "x"}
    entry = data["mcpServers"]["chrollo"]
    assert entry["args"][-1] == "mcp" and entry["command"]
    assert ("type" in entry) == (harness == "claude-code")
    once = cfg.read_bytes()
    again = _cli(home, "install", harness, "--mcp", "--config", cfg, "--json")
    assert json.loads(again.stdout)["action"] == "unchanged" and cfg.read_bytes() == once
    out = _cli(home, "uninstall", harness, "--mcp", "--config", cfg, "--json")
    assert json.loads(out.stdout)["action"] == "restored"
    assert cfg.read_text() == ORIGINAL_JSON
    assert json.loads(_cli(home, "uninstall", harness, "--mcp", "--config", cfg, "--json").stdout)["action"] == "absent"


def test_created_file_is_deleted_again(home, tmp_path):
    cfg = tmp_path / "sub" / "settings.json"
    assert _cli(home, "install", "gemini", "--mcp", "--config", cfg).returncode == 0
    assert "chrollo" in json.loads(cfg.read_text())["mcpServers"]
    assert _cli(home, "uninstall", "gemini", "--mcp", "--config", cfg).returncode == 0
    assert not cfg.exists()


def test_edits_made_after_install_survive_uninstall(home, tmp_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(ORIGINAL_JSON)
    _cli(home, "install", "claude-code", "--mcp", "--config", cfg)
    data = json.loads(cfg.read_text())
    data["theme"] = "light"
    cfg.write_text(json.dumps(data))
    out = _cli(home, "uninstall", "claude-code", "--mcp", "--config", cfg, "--json")
    assert json.loads(out.stdout)["action"] == "removed"
    data = json.loads(cfg.read_text())
    assert data["theme"] == "light" and "chrollo" not in data["mcpServers"] and "other" in data["mcpServers"]


def test_codex_toml_block(home, tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(ORIGINAL_TOML)
    assert _cli(home, "install", "codex", "--mcp", "--config", cfg).returncode == 0
    text = cfg.read_text()
    assert text.startswith(ORIGINAL_TOML)
    if tomllib:
        parsed = tomllib.loads(text)
        assert parsed["model"] == "gpt-5" and parsed["mcp_servers"]["chrollo"]["args"][-1] == "mcp"
    assert _cli(home, "install", "codex", "--mcp", "--config", cfg).returncode == 0
    assert cfg.read_text() == text
    assert _cli(home, "uninstall", "codex", "--mcp", "--config", cfg).returncode == 0
    assert cfg.read_text() == ORIGINAL_TOML


def test_default_locations_follow_the_harness_env(home, tmp_path):
    fake_home = tmp_path / "h"
    fake_home.mkdir()
    env = {"HOME": fake_home, "CLAUDE_CONFIG_DIR": tmp_path / "claude", "CODEX_HOME": tmp_path / "codex"}
    for harness, where in [("claude-code", tmp_path / "claude" / ".claude.json"),
                           ("codex", tmp_path / "codex" / "config.toml"),
                           ("gemini", fake_home / ".gemini" / "settings.json")]:
        p = _cli(home, "install", harness, "--mcp", "--json", **env)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["config"] == str(where) and where.exists()
        assert _cli(home, "uninstall", harness, "--mcp", **env).returncode == 0
        assert not where.exists()


def test_refusals(home, tmp_path):
    p = _cli(home, "install", "pi", "--mcp", "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["kind"] == "no_mcp"
    p = _cli(home, "install", "codex", "--json")
    assert p.returncode == 2 and "--mcp" in json.loads(p.stdout)["error"]["message"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    p = _cli(home, "install", "gemini", "--mcp", "--config", bad, "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["error"]["kind"] == "bad_config"
    assert bad.read_text() == "{not json"
    hand = tmp_path / "hand.toml"
    hand.write_text("[mcp_servers.chrollo]\ncommand = 'mine'\n")
    p = _cli(home, "install", "codex", "--mcp", "--config", hand, "--json")
    assert p.returncode == 1 and hand.read_text() == "[mcp_servers.chrollo]\ncommand = 'mine'\n"
