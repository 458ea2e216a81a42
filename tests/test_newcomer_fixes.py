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
