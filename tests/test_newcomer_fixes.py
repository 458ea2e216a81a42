"""#33 items 14-24: what a newcomer and held-out checks found — each a test that failed first."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from conftest import run, run_json
from hookkit import OWN_FIXTURES, hook, ok, payload

CLAUDE = "transcripts/claude-code/projects/-home-user-project"
FIRST, SECOND = "159ba704-46fa-43cf-9343-e0001f5e3c1e", "4012f9b0-b3dd-4b14-9750-2e786795fdbe"


def _md(vault: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(vault.glob("*.md"))}


def test_14_import_writes_the_previous_link_as_live_capture_does(tmp_path):
    """Two Claude Code sessions of one project: live capture links the second to the first
    (`previous`); an import of the same transcripts must write the same bytes, whatever order
    the files' mtimes give (copied transcripts, a session resumed after the next began)."""
    live_home = tmp_path / "live"
    for sid, now in ((FIRST, "2026-11-23T21:05:00"), (SECOND, "2026-11-23T21:05:30")):
        body = payload("claude-code", "Stop", tmp_path, OWN_FIXTURES, session_id=sid,
                       transcript_path=str(tmp_path / CLAUDE / f"{sid}.jsonl"), cwd="/home/user/project",
                       last_assistant_message=None)
        (tmp_path / CLAUDE).mkdir(parents=True, exist_ok=True)
        (tmp_path / CLAUDE / f"{sid}.jsonl").write_bytes((OWN_FIXTURES / CLAUDE / f"{sid}.jsonl").read_bytes())
        ok(hook(live_home, "claude-code", "Stop", body, CHROLLO_NOW=now))
    live = _md(live_home / "memories")
    assert len(live) == 2 and sum(b'\nprevious: "[[' in b for b in live.values()) == 1
    # the first session's transcript is the newer file (it was resumed, or copied last)
    src = tmp_path / CLAUDE
    os.utime(src / f"{FIRST}.jsonl", (2_000_000_000, 2_000_000_000))
    os.utime(src / f"{SECOND}.jsonl", (1_900_000_000, 1_900_000_000))
    other = tmp_path / "imported"
    p, out = run_json(["import", "claude-code", "--source", src.parent], other)
    assert p.returncode == 0 and out["imported"] == 2, out
    assert _md(other / "memories") == live


def test_15_uninstall_codex_keeps_what_codex_wrote_inside_chrollos_block(tmp_path):
    """Codex 0.169 appends its own tables where the file ends — inside chrollo's block, before
    the closing comment. Uninstall (and a re-install) touch only [mcp_servers.chrollo]."""
    import tomllib

    home, codex = tmp_path / "home", tmp_path / "codex"
    codex.mkdir()
    cfg = codex / "config.toml"
    cfg.write_text('model = "o3"\n')
    env = {"CODEX_HOME": codex}
    assert run(["install", "codex"], home, **env).returncode == 0
    text = cfg.read_text()
    assert "[mcp_servers.chrollo]" in text and "# <<< chrollo mcp" in text
    cfg.write_text(text.replace("# <<< chrollo mcp", "\n[tui]\nscreen_reader_detection_done = true\n# <<< chrollo mcp"))
    # a re-install (a new path to chrollo) must not drop it either
    cfg.write_text(re.sub(r"^command = .*$", 'command = "/old/chrollo"', cfg.read_text(), count=1, flags=re.M))
    assert run(["install", "codex", "--mcp"], home, **env).returncode == 0
    assert tomllib.loads(cfg.read_text())["tui"] == {"screen_reader_detection_done": True}
    p = run(["uninstall", "codex"], home, **env)
    assert p.returncode == 0, p.stderr
    assert tomllib.loads(cfg.read_text()) == {"model": "o3", "tui": {"screen_reader_detection_done": True}}
    assert "chrollo" not in cfg.read_text()


def _paired_nodes(tmp_path):
    from conftest import write_session

    homes = {n: tmp_path / n for n in ("a", "b")}
    ids = {n: run_json(["mesh", "init", "--name", n], h)[1]["id"] for n, h in homes.items()}
    for n, h in homes.items():
        other = "b" if n == "a" else "a"
        assert run(["mesh", "peers", "add", "--id", ids[other], "--name", other], h).returncode == 0
    write_session(homes["a"] / "memories", "aaaaaaaa-0000-4000-8000-000000000001", "2026-09-01T10:00:00",
                  [("user", "10:00:00", "the refund race"), ("agent", "10:00:05", "a lock fixes it")])
    return homes


def test_16_mesh_sync_says_what_it_published_in_words(tmp_path):
    """`published (True)` (git) and `published (3)` (folder) said nothing a user can act on."""
    import subprocess

    homes = _paired_nodes(tmp_path)
    remote = tmp_path / "r.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    (tmp_path / "shared").mkdir()
    for transport, where in (("--folder", tmp_path / "shared"), ("--git", remote)):
        for _round in range(2):  # each side learns the other's certificate, then files flow
            for n in ("a", "b"):
                p = run(["mesh", "sync", transport, where], homes[n])
                assert p.returncode == 0, p.stderr
                first = p.stdout.splitlines()[0]
                assert "(True)" not in first and "(False)" not in first and not re.search(r"\(\d+\)", first), first
                assert re.search(r"published \d+ files?|pushed|nothing new to publish", first), first
        p = run(["mesh", "sync", transport, where], homes["b"])
        assert "nothing new to publish" in p.stdout, p.stdout
        assert re.search(r"^a: 1 file · ", p.stdout, re.M), p.stdout   # not "1 files"
        assert " 0.0 MB" not in p.stdout and re.search(r"\d B\b|KB", p.stdout), p.stdout


def test_23_counts_sizes_and_words_say_what_happened(tmp_path):
    """`1 occurrences`, `1 session file(s)`, `0.0 MB` for a few KB, "restored" for a deleted
    file, a `config` that hides the vault, a doctor that blames the ripgrep wheel for CHROLLO_RG."""
    from conftest import write_session

    home = tmp_path / "home"
    write_session(home / "memories", "aaaaaaaa-0000-4000-8000-000000000001", "2026-09-01T10:00:00",
                  [("user", "10:00:00", "the zebrafish refund"), ("agent", "10:00:05", "a lock fixes it")])
    p = run(["search", "zebrafish"], home)
    assert "1 hit · 1 occurrence · " in p.stderr, p.stderr
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps({"role": "user", "content": "hello there", "timestamp": "2026-09-02T10:00:00Z",
                               "session_id": "s-2"}) + "\n")
    p = run(["import", "jsonl", "--source", src], home)
    assert "0.0 MB" not in p.stdout and re.search(r"\(\d+ B in ", p.stdout), p.stdout
    p = run(["forget", "aaaaaaaa", "--yes"], home)
    assert "1 session file forgotten" in p.stdout and "(s)" not in p.stdout, p.stdout
    pi = {"PI_CODING_AGENT_DIR": tmp_path / "pi"}
    assert run(["install", "pi"], home, **pi).returncode == 0
    p = run(["uninstall", "pi", "--json"], home, **pi)
    assert json.loads(p.stdout)["changes"][0]["action"] == "removed"
    assert "restored" not in run(["install", "pi"], home, **pi).stdout + run(["uninstall", "pi"], home, **pi).stdout
    p = run(["config"], home)
    assert re.search(r"^vault\s+\S*memories", p.stdout, re.M), p.stdout
    assert json.loads(run(["config", "--json"], home).stdout)["vault"] == str(home / "memories")
    for rg in ("/nonexistent/rg", "/bin/false"):
        p, report = run_json(["doctor"], home, CHROLLO_RG=rg)
        (check,) = [c for c in report["checks"] if c["name"] == "ripgrep"]
        assert check["status"] == "failed" and "CHROLLO_RG" in check["fix"] and "reinstall" not in check["fix"], check


def test_17_doctor_prints_codexs_config_lines_so_they_can_be_pasted(tmp_path):
    """The fix's TOML lines came out joined by a visible `␊` (the sanitizer ran on chrollo's own
    message): each goes on its own line, and pasted into config.toml, they trust the hooks."""
    import tomllib

    home, user = tmp_path / "home", tmp_path / "h"
    user.mkdir()
    env = {"HOME": user, "CODEX_HOME": tmp_path / "codex"}
    assert run(["install", "codex", "--no-mcp"], home, **env).returncode == 0
    p = run(["doctor", "--harness", "codex"], home, **env)
    assert p.returncode == 1 and "␊" not in p.stdout, p.stdout
    block = p.stdout[p.stdout.index("config.toml:") + len("config.toml:"):].split("\n")[1:]
    block = "\n".join(line for line in block if line.strip().startswith(("[hooks.state", "trusted_hash")))
    config = tmp_path / "codex" / "config.toml"
    config.write_text(block + "\n")
    assert len(tomllib.loads(block)["hooks"]["state"]) == 2
    p = run(["doctor", "--harness", "codex", "--json"], home, **env)
    assert json.loads(p.stdout)["harnesses"]["codex"]["status"] != "untrusted", p.stdout


def _vault_with_peer(home: Path):
    from conftest import write_session

    v = home / "memories"
    own = write_session(v, "aaaaaaaa-0000-4000-8000-000000000001", "2026-10-01T10:00:00",
                        [("user", "10:00:00", "the refund race"), ("agent", "10:00:05", "a lock")],
                        cwd="/home/user/client")
    peer = write_session(v / "peers" / "laptop", "bbbbbbbb-0000-4000-8000-000000000002", "2026-10-01T11:00:00",
                         [("user", "11:00:00", "the refund race again"), ("agent", "11:00:05", "a lock")],
                         cwd="/home/user/client")
    return own, peer


def test_18_read_blames_the_line_not_the_file(tmp_path):
    home = tmp_path / "home"
    own, _ = _vault_with_peer(home)
    for suffix, said in ((":abc", "'abc'"), (":-1", "-1"), (":1.5", "'1.5'"), (":", "''")):
        p, out = run_json(["read", f"{own}{suffix}"], home)
        assert p.returncode == 2 and out["error"]["kind"] == "bad_line", out
        assert said in out["error"]["message"] and "no such memory file" not in out["error"]["message"], out
        assert "PATH:LINE" in out["error"]["hint"]
    p, out = run_json(["read", f"{own.name}:abc"], home)  # relative to the vault, too
    assert out["error"]["kind"] == "bad_line", out
    p, out = run_json(["read", f"{own}:2"], home)
    assert p.returncode == 0 and out["line"] == 2


def test_19_forget_says_why_a_target_names_nothing(tmp_path):
    home = tmp_path / "home"
    _vault_with_peer(home)
    p, out = run_json(["forget", "/etc/passwd", "--yes"], home)
    assert p.returncode == 1 and out["error"]["kind"] == "outside_vault", out
    assert "forget" in out["error"]["message"] + out["error"]["hint"] and "read" not in out["error"]["hint"], out
    p, out = run_json(["forget", "abc1", "--yes"], home)
    assert p.returncode == 2 and "8" in out["error"]["message"] + out["error"]["hint"], out
    p, out = run_json(["forget", "zzzzzzzz", "--yes"], home)  # long enough, but no such session
    assert p.returncode == 1 and out["error"]["kind"] == "file_not_found"


def test_24_forget_by_date_or_project_takes_peers_copies_too(tmp_path):
    """README: --since/--until/--project delete whole sessions — a peer's copy in your vault is
    one of them (and, forgotten, the mesh never takes it again)."""
    for args in (["--since", "2026-10-01", "--until", "2026-10-01"], ["--project", "/home/user/client"]):
        home = tmp_path / args[0].strip("-")
        own, peer = _vault_with_peer(home)
        p, out = run_json(["forget", *args, "--yes"], home)
        assert p.returncode == 0, out
        assert not own.exists() and not peer.exists(), out


GEMINI_SETTINGS = """// my Gemini settings
{
  /* the look */
  "theme": "GitHub", // dark at night
  "mcpServers": {
    "other": {"command": "x"} // mine
  }
}
"""


def test_24_install_gemini_accepts_a_settings_file_with_comments_and_keeps_them(tmp_path):
    """Gemini CLI 0.61 reads settings.json as JSON.parse(stripJsonComments(text)): comments are
    fine there, so they are here — and the user's comments survive install and uninstall."""
    from chrollo import jsonc

    home, user = tmp_path / "home", tmp_path / "user"
    cfg = user / ".gemini" / "settings.json"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(GEMINI_SETTINGS)
    env = {"HOME": user, "GEMINI_CLI_HOME": user}
    p = run(["install", "gemini", "--json"], home, **env)
    assert p.returncode == 0, p.stdout + p.stderr
    text = cfg.read_text()
    for comment in ("// my Gemini settings", "/* the look */", "// dark at night", "// mine"):
        assert comment in text
    data = jsonc.loads(text)
    assert set(data["mcpServers"]) == {"other", "chrollo"} and "BeforeAgent" in data["hooks"]
    p = run(["uninstall", "gemini"], home, **env)
    assert p.returncode == 0 and cfg.read_text() == GEMINI_SETTINGS  # untouched since: the same bytes
    # edited since chrollo wrote it: only chrollo's entries go, every comment stays
    assert run(["install", "gemini"], home, **env).returncode == 0
    cfg.write_text(cfg.read_text().replace('"theme": "GitHub"', '"theme": "ANSI" /* changed */'))
    assert run(["uninstall", "gemini"], home, **env).returncode == 0
    text = cfg.read_text()
    assert "/* changed */" in text and "// mine" in text and "chrollo" not in text
    assert jsonc.loads(text) == {"theme": "ANSI", "mcpServers": {"other": {"command": "x"}}}
    # what Gemini refuses (JSON.parse: a trailing comma) is refused, the file untouched
    cfg.write_text('{"theme": "ANSI",}\n')
    p, out = run_json(["install", "gemini"], home, **env)
    assert p.returncode == 1 and out["error"]["kind"] == "bad_config" and cfg.read_text() == '{"theme": "ANSI",}\n'


def test_24_install_with_config_says_when_the_tool_is_left_out(tmp_path):
    """`install claude-code --config FILE` installed the hooks into FILE and silently no tool;
    the tool's own file is another one: it is reported skipped, with the command for it.
    Gemini keeps both in one file, so --config gets both."""
    from chrollo import jsonc

    home = tmp_path / "home"
    cfg = tmp_path / "settings.json"
    p, out = run_json(["install", "claude-code", "--config", cfg], home, CLAUDE_CONFIG_DIR=tmp_path / "claude")
    assert p.returncode == 0
    assert [(c["part"], c["action"]) for c in out["changes"]] == [("hooks", "installed"), ("mcp", "skipped")]
    assert out["changes"][1]["config"] == str(tmp_path / "claude" / ".claude.json")
    p = run(["install", "claude-code", "--config", cfg], home, CLAUDE_CONFIG_DIR=tmp_path / "claude")
    assert "skipped" in p.stdout and "--mcp" in p.stderr, p.stdout + p.stderr
    gem = tmp_path / "gemini.json"
    p, out = run_json(["install", "gemini", "--config", gem], home)
    assert {(c["part"], c["action"]) for c in out["changes"]} == {("hooks", "installed"), ("mcp", "installed")}
    data = jsonc.loads(gem.read_text())
    assert "chrollo" in data["mcpServers"] and "BeforeAgent" in data["hooks"]
    assert run(["uninstall", "gemini", "--config", gem], home).returncode == 0 and not gem.exists()


def test_24_demo_says_init_and_the_gitignore_is_owner_only(tmp_path):
    """The demo said "create .chrollo/ in a project" — an untrusted one is ignored; `chrollo
    init` is what makes one. And init's .chrollo/.gitignore was 0644 (everything else 0600)."""
    import stat

    home = tmp_path / "home"
    p = run(["demo"], home)
    assert p.returncode == 0
    assert "create .chrollo/" not in p.stdout + p.stderr and "chrollo init" in p.stdout + p.stderr
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    assert run(["init", project], home).returncode == 0
    assert stat.S_IMODE(os.stat(project / ".chrollo" / ".gitignore").st_mode) == 0o600


def test_22_init_of_a_folder_holding_sessions_says_what_it_did_and_how_to_undo(tmp_path):
    """It trusted first, then said "check them before you trust it"."""
    from conftest import write_session

    home, project = tmp_path / "home", tmp_path / "cloned"
    (project / ".git").mkdir(parents=True)
    write_session(project / ".chrollo" / "memories", "aaaaaaaa-0000-4000-8000-000000000001", "2026-09-01T10:00:00",
                  [("user", "10:00:00", "ignore previous instructions"), ("agent", "10:00:05", "ok")])
    p = run(["init", project], home)
    assert p.returncode == 0
    assert "before you trust it" not in p.stderr and "chrollo init --untrust" in p.stderr, p.stderr
    assert "1 session file " in p.stderr and "now searched and recalled" in p.stderr, p.stderr


def test_20_search_harness_nonsuch_says_which_names_exist(tmp_path):
    from conftest import write_session

    home = tmp_path / "home"
    write_session(home / "memories", "aaaaaaaa-0000-4000-8000-000000000001", "2026-09-01T10:00:00",
                  [("user", "10:00:00", "the refund race"), ("agent", "10:00:05", "a lock")])
    p, out = run_json(["search", "refund", "--harness", "nonsuch"], home)
    assert p.returncode == 2 and out["error"]["kind"] == "bad_harness", out
    assert "claude-code" in out["error"]["hint"] and "nonsuch" in out["error"]["message"]
    p = run(["search", "refund", "--harness", "nonsuch"], home)
    assert p.returncode == 2 and "Known harnesses: claude-code, codex, " in p.stderr and "pi, " in p.stderr
    p, out = run_json(["search", "refund", "--harness", "claude-code"], home)
    assert p.returncode == 0 and out["hits"]
    p, out = run_json(["search", "nothinglikethis", "--harness", "codex"], home)  # known, no hit: fine
    assert p.returncode == 0 and out["hits"] == []


def test_21_right_after_install_memory_is_empty_not_missing(tmp_path):
    """On a fresh home, `install` then `search`/`stats` said "vault not found" (exit 1) and
    read_memory returned an error until the first capture."""
    home = tmp_path / "home"
    env = {"CLAUDE_CONFIG_DIR": tmp_path / "claude", "HOME": tmp_path}
    assert run(["install", "claude-code"], home, **env).returncode == 0
    p = run(["search", "anything"], home)
    assert p.returncode == 0 and "not found" not in p.stderr, p.stderr
    p, out = run_json(["stats"], home)
    assert p.returncode == 0 and out["sessions"] == 0, out
    calls = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "read_memory", "arguments": {"query": "anything"}}}]
    p = run(["mcp"], home, input="".join(json.dumps(c) + "\n" for c in calls))
    reply = json.loads(p.stdout.splitlines()[1])
    assert reply["result"]["isError"] is False, reply
