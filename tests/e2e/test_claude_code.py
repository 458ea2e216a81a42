"""Claude Code only: /compact and background subagents (2.1.330)."""
from __future__ import annotations

import pytest

from .test_capture import turns

pytestmark = pytest.mark.e2e


def test_compact_then_resume_keeps_one_file_and_import_matches(make, world):
    drv = make("claude-code")
    first = drv.run("say: the schema migration adds a tenants table")
    assert first.ok, first.proc.stderr
    compact = drv.run("/compact", resume=first.session_id)
    assert compact.ok, compact.proc.stderr
    again = drv.run("say: the migration also backfills tenant ids", resume=first.session_id)
    assert again.ok, again.proc.stderr
    live = world.vault_files()
    assert len(live) == 1, list(live)
    assert [b for r, b in turns(next(iter(live.values()))) if r == "User"] == [
        "say: the schema migration adds a tenants table", "say: the migration also backfills tenant ids"]
    other = world.tmp / "import-home"
    world.chrollo("import", "claude-code", CHROLLO_HOME=other)
    assert world.vault_files(other / "memories") == live


def test_background_subagent_result_is_not_a_user_turn(make, world):
    drv = make("claude-code")
    r = drv.run("subagent: say: the subagent counted 3 TODO markers\nsay: started a background task")
    assert r.ok, r.proc.stderr
    calls = [c for q in world.server.model_requests() for c in q["reply"]["calls"]]
    assert any(name == "Agent" and args.get("run_in_background") for name, args in calls), calls
    files = world.vault_files()
    parent = [t for t in files.values() if "parent_session" not in t]
    child = [t for t in files.values() if "parent_session" in t]
    assert len(parent) == 1 and len(child) == 1, list(files)
    assert "the subagent counted 3 TODO markers" in child[0]
    # a subagent of the session's first turn links its parent's file (#33 item 12)
    (parent_name,) = [n for n, t in files.items() if "parent_session" not in t]
    assert f'parent: "[[{parent_name.removesuffix(".md")}]]"' in child[0], child[0][:800]
    users = [b for role, b in turns(parent[0]) if role == "User"]
    assert users == ["subagent: say: the subagent counted 3 TODO markers\nsay: started a background task"], users
    assert "<task-notification>" not in parent[0]
    # its UserPromptSubmit (2.1.332: source "system") gets no recall: the user asked nothing (#46)
    assert "the prompt is the harness's own" in world.hook_log()
