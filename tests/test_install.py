"""`chrollo install/uninstall <harness> [--mcp]`: idempotent, preserving, exactly reversible."""
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


def _one(p) -> dict:
    """The one change a single-part `install/uninstall --json` reports."""
    (change,) = [c for c in json.loads(p.stdout)["changes"] if c["action"] != "skipped"]
    return change


@pytest.mark.parametrize("harness", ["claude-code", "gemini"])
def test_json_install_is_idempotent_and_uninstall_restores_bytes(home, tmp_path, harness):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(ORIGINAL_JSON)
    p = _cli(home, "install", harness, "--mcp", "--config", cfg, "--json")
    assert p.returncode == 0 and _one(p)["action"] == "installed"
    data = json.loads(cfg.read_text())
    assert data["theme"] == "dark" and data["numStartups"] == 7 and data["mcpServers"]["other"] == {"command": "x"}
    entry = data["mcpServers"]["chrollo"]
    assert entry["args"][-1] == "mcp" and entry["command"]
    assert ("type" in entry) == (harness == "claude-code")
    once = cfg.read_bytes()
    again = _cli(home, "install", harness, "--mcp", "--config", cfg, "--json")
    assert _one(again)["action"] == "unchanged" and cfg.read_bytes() == once
    out = _cli(home, "uninstall", harness, "--mcp", "--config", cfg, "--json")
    assert _one(out)["action"] == "restored"
    assert cfg.read_text() == ORIGINAL_JSON
    assert _one(_cli(home, "uninstall", harness, "--mcp", "--config", cfg, "--json"))["action"] == "absent"


def test_created_file_is_deleted_again(home, tmp_path):
    cfg = tmp_path / "sub" / "settings.json"
    cfg.parent.mkdir()  # (a --config file may be new; its folder must exist: #44)
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
    assert _one(out)["action"] == "removed"
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
        assert _one(p)["config"] == str(where) and where.exists()
        assert _cli(home, "uninstall", harness, "--mcp", **env).returncode == 0
        assert not where.exists()


def test_refusals(home, tmp_path):
    p = _cli(home, "install", "pi", "--mcp", "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["kind"] == "no_mcp"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    p = _cli(home, "install", "gemini", "--mcp", "--config", bad, "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["error"]["kind"] == "bad_config"
    assert bad.read_text() == "{not json"
    hand = tmp_path / "hand.toml"
    hand.write_text("[mcp_servers.chrollo]\ncommand = 'mine'\n")
    p = _cli(home, "install", "codex", "--mcp", "--config", hand, "--json")
    assert p.returncode == 1 and hand.read_text() == "[mcp_servers.chrollo]\ncommand = 'mine'\n"


# ----------------------------------------------------------------------------- hooks

HOOKS_ORIGINAL = ('{\n  "model": "opus",\n  "hooks": {\n    "Stop": [\n      {"hooks": [{"type": "command", '
                  '"command": "notify-send done"}]}\n    ]\n  }\n}\n')


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini"])
def test_hooks_install_keeps_other_hooks_and_uninstall_restores_bytes(home, tmp_path, harness):
    from chrollo.harness import adapter

    cfg = tmp_path / "settings.json"
    cfg.write_text(HOOKS_ORIGINAL)
    p = _cli(home, "install", harness, "--config", cfg, "--no-mcp", "--json")
    assert p.returncode == 0 and _one(p)["action"] == "installed", p.stderr
    data = json.loads(cfg.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["Stop"][0] == {"hooks": [{"type": "command", "command": "notify-send done"}]}
    for event, timeout in adapter(harness).EVENTS:
        (group,) = [g for g in data["hooks"][event] if "chrollo" in json.dumps(g)]
        (entry,) = group["hooks"]
        assert entry["command"].endswith(f" hook {event} --harness {harness}")
        assert entry["timeout"] == timeout
    once = cfg.read_bytes()
    assert _one(_cli(home, "install", harness, "--config", cfg, "--no-mcp", "--json"))["action"] == "unchanged"
    assert cfg.read_bytes() == once
    assert _one(_cli(home, "uninstall", harness, "--config", cfg, "--no-mcp", "--json"))["action"] == "restored"
    assert cfg.read_text() == HOOKS_ORIGINAL


def test_hooks_uninstall_after_edits_removes_only_chrollo(home, tmp_path):
    cfg = tmp_path / "settings.json"
    cfg.write_text(HOOKS_ORIGINAL)
    _cli(home, "install", "claude-code", "--config", cfg)
    data = json.loads(cfg.read_text())
    data["model"] = "sonnet"
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say hi"}]})
    cfg.write_text(json.dumps(data))
    assert _one(_cli(home, "uninstall", "claude-code", "--config", cfg, "--json"))["action"] == "removed"
    left = json.loads(cfg.read_text())
    assert left == {"model": "sonnet", "hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "notify-send done"}]},
        {"hooks": [{"type": "command", "command": "say hi"}]}]}}


def test_hooks_default_locations(home, tmp_path):
    fake = tmp_path / "h"
    fake.mkdir()
    env = {"HOME": fake, "CLAUDE_CONFIG_DIR": tmp_path / "claude", "CODEX_HOME": tmp_path / "codex"}
    for harness, where in [("claude-code", tmp_path / "claude" / "settings.json"),
                           ("codex", tmp_path / "codex" / "hooks.json"),
                           ("gemini", fake / ".gemini" / "settings.json"),
                           ("pi", fake / ".pi" / "agent" / "extensions" / "chrollo.ts")]:
        p = _cli(home, "install", harness, "--no-mcp", "--json", **env)
        assert p.returncode == 0, p.stderr
        assert _one(p)["config"] == str(where) and where.exists()
        assert _cli(home, "uninstall", harness, "--no-mcp", **env).returncode == 0
        assert not where.exists()


def test_pi_extension_edited_by_the_user_is_kept(home, tmp_path):
    ext = tmp_path / "chrollo.ts"
    _cli(home, "install", "pi", "--config", ext)
    assert "chrollo-pi" in ext.read_text()
    ext.write_text(ext.read_text() + "// mine\n")
    p = _cli(home, "uninstall", "pi", "--config", ext, "--json")
    assert _one(p)["action"] == "kept" and ext.exists()


@pytest.mark.parametrize("harness", ["pi", "opencode"])
def test_an_extension_is_never_written_over_a_file_that_is_not_chrollo_s(home, tmp_path, harness):
    """chrollo writes its extension file whole: a user's own file at that path, or the file a
    link there points to, is left as it was (the long fuzz run's `install pi --config <link>`
    overwrote the link's target); chrollo's own file is still updated."""
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("outside secret\n")
    link = tmp_path / "link-out"
    link.symlink_to(secret)
    mine = tmp_path / "mine.ts"
    mine.write_text("// the user's own file\n")
    for target in (link, mine):
        before = (target.read_bytes(), target.is_symlink())
        p = _cli(home, "install", harness, "--config", target, "--no-mcp", "--json")
        assert p.returncode == 1 and json.loads(p.stdout)["error"]["kind"] == "bad_config", p.stdout
        assert (target.read_bytes(), target.is_symlink()) == before and secret.read_text() == "outside secret\n"
    ours = tmp_path / "ours.js"
    assert _cli(home, "install", harness, "--config", ours, "--no-mcp").returncode == 0
    assert _cli(home, "install", harness, "--config", ours, "--no-mcp").returncode == 0   # (its own: rewritten)


def test_shipped_pi_extension_is_the_packaged_one():
    from conftest import ROOT

    assert (ROOT / "hooks/pi/chrollo.ts").read_text() == (ROOT / "chrollo/data/pi-extension.ts").read_text()
    plugin = json.loads((ROOT / "hooks/claude-code/.claude-plugin/plugin.json").read_text())
    assert plugin["name"] == "chrollo"


# ----------------------------------------------------------------------------- one install

def _homes(tmp_path):
    fake = tmp_path / "h"
    fake.mkdir(exist_ok=True)
    env = {"HOME": fake, "CLAUDE_CONFIG_DIR": tmp_path / "claude", "CODEX_HOME": tmp_path / "codex"}
    files = {"claude-code": [tmp_path / "claude" / "settings.json", tmp_path / "claude" / ".claude.json"],
             "codex": [tmp_path / "codex" / "hooks.json", tmp_path / "codex" / "config.toml"],
             "gemini": [fake / ".gemini" / "settings.json"]}
    return env, files


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini"])
def test_one_install_sets_up_hooks_and_the_tool_and_uninstall_restores_every_byte(home, tmp_path, harness):
    env, files = _homes(tmp_path)
    before = {}
    for i, f in enumerate(files[harness]):
        f.parent.mkdir(parents=True, exist_ok=True)
        if i == 0 or harness == "claude-code":  # codex's config.toml does not exist yet
            f.write_text(ORIGINAL_TOML if f.suffix == ".toml" else ORIGINAL_JSON)
        before[f] = f.read_bytes() if f.exists() else None
    p = _cli(home, "install", harness, "--json", **env)
    assert p.returncode == 0, p.stderr
    changes = json.loads(p.stdout)["changes"]
    assert [(c["part"], c["action"]) for c in changes] == [("hooks", "installed"), ("mcp", "installed")]
    from chrollo.install import installed_events

    hooks_file = files[harness][0]
    assert installed_events(harness, hooks_file.read_text())
    mcp_text = files[harness][-1].read_text()
    assert "chrollo" in mcp_text and '"mcp"' in mcp_text
    again = json.loads(_cli(home, "install", harness, "--json", **env).stdout)["changes"]
    assert {c["action"] for c in again} == {"unchanged"}
    out = json.loads(_cli(home, "uninstall", harness, "--json", **env).stdout)["changes"]
    assert [c["part"] for c in out] == ["mcp", "hooks"]
    for f, b in before.items():
        assert (f.read_bytes() if f.exists() else None) == b, f


def test_mcp_alone_and_no_mcp(home, tmp_path):
    env, files = _homes(tmp_path)
    settings, claude_json = files["claude-code"]
    p = _cli(home, "install", "claude-code", "--mcp", "--json", **env)
    assert [c["part"] for c in json.loads(p.stdout)["changes"]] == ["mcp"]
    assert claude_json.exists() and not settings.exists()
    _cli(home, "uninstall", "claude-code", **env)
    assert not claude_json.exists()
    p = _cli(home, "install", "claude-code", "--no-mcp", "--json", **env)
    assert [c["part"] for c in json.loads(p.stdout)["changes"]] == ["hooks"]
    assert settings.exists() and not claude_json.exists()
    p = _cli(home, "install", "claude-code", "--mcp", "--no-mcp", "--json", **env)
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["kind"] == "bad_usage"
    human = _cli(home, "install", "gemini", **env)
    assert human.returncode == 0
    assert human.stdout.splitlines() == [f"gemini: hooks installed ({files['gemini'][0]})",
                                         f"gemini: MCP server (read_memory) installed ({files['gemini'][0]})"]
    pi = json.loads(_cli(home, "install", "pi", "--json", **env).stdout)["changes"]
    assert [c["part"] for c in pi] == ["hooks"]  # the extension carries the tools


def test_a_symlinked_settings_file_is_written_through_and_stays_a_link(home, tmp_path):
    """Dotfiles keep settings.json as a symlink into a repository: install and uninstall write
    the link's target (atomically, beside it) and leave the link a link."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude-settings.json"
    target.write_text(HOOKS_ORIGINAL)
    cfg = tmp_path / "claude" / "settings.json"
    cfg.parent.mkdir()
    cfg.symlink_to(target)
    p = _cli(home, "install", "claude-code", "--config", cfg, "--json")
    assert p.returncode == 0, p.stderr
    assert cfg.is_symlink() and cfg.resolve() == target
    assert "chrollo" in target.read_text() and json.loads(target.read_text())["model"] == "opus"
    assert sorted(x.name for x in dotfiles.iterdir()) == ["claude-settings.json"]  # (no temporary left)
    p = _cli(home, "uninstall", "claude-code", "--config", cfg, "--json")
    assert p.returncode == 0, p.stderr
    assert cfg.is_symlink() and cfg.resolve() == target
    assert target.read_text() == HOOKS_ORIGINAL


@pytest.mark.parametrize("command", [
    "my-chrollo-audit hook Stop --harness claude-code",
    "/opt/tools/notify hook Stop --harness claude-code # chrollo",
    "bash -c 'echo chrollo hook fired' hook Stop --harness claude-code",
    "/usr/bin/chrollo-like hook Stop --harness claude-code",
    "python3 -m chrollo_tools hook Stop --harness claude-code"])
def test_uninstall_leaves_another_tool_s_hook_that_merely_mentions_chrollo(home, tmp_path, command):
    cfg = tmp_path / "settings.json"
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}
    cfg.write_text(json.dumps(theirs))
    _cli(home, "install", "claude-code", "--config", cfg)
    data = json.loads(cfg.read_text())
    data["model"] = "x"  # (edited since: uninstall removes chrollo's entries only)
    cfg.write_text(json.dumps(data))
    assert _one(_cli(home, "uninstall", "claude-code", "--config", cfg, "--json"))["action"] == "removed"
    assert json.loads(cfg.read_text()) == {**theirs, "model": "x"}
    for ours in ("/home/u/.local/bin/chrollo hook Stop --harness claude-code",
                 "'/home/u/my env/bin/python3' -m chrollo hook Stop --harness claude-code",
                 "chrollo hook Stop --harness claude-code"):
        from chrollo import install

        assert install._is_ours(ours, "claude-code"), ours
        assert not install._is_ours(command, "claude-code")
