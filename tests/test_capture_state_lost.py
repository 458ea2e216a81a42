"""Capture without its state record: a lost state/ never duplicates a turn, and a brand-new
session does not pay for proving it (listing a vault of 250,000 sessions costs ~0.2 s)."""
from __future__ import annotations

import os
import shutil

import pytest
from hookkit import hook, ok, payload, sets, snapshot, vault_files

from chrollo import capture
from chrollo.capture import Capture


@pytest.mark.parametrize("src", sets((), ()))
def test_replayed_stop_after_state_is_lost_writes_nothing(home, tmp_path, src):
    stop = payload("claude-code", "Stop", tmp_path, src, hook_event_name="Stop")
    ok(hook(home, "claude-code", "Stop", stop))
    before = snapshot(home)
    assert before
    shutil.rmtree(home / "state")  # state/ is disposable: the file itself says what is written
    ok(hook(home, "claude-code", "Stop", stop))
    assert snapshot(home) == before


@pytest.fixture
def listings(monkeypatch):
    """The folders capture lists (a spy: os.listdir still runs)."""
    seen = []
    real = os.listdir

    def spy(path="."):
        seen.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(capture.os, "listdir", spy)
    return seen


def test_first_prompt_of_a_new_session_does_not_list_the_vault(home, tmp_path, listings):
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(3):
        (vault / f"2026-01-0{i + 1}_120000_0000000{i}.md").write_text("---\nsession_id: x\n---\n")
    with Capture("5ca1e000-0000-4000-8000-000000000001", "claude-code", vault=str(vault)) as cap:
        assert cap.run([], prompt="how did we fix the flaky deploy test?") == []  # (pending until its answer)
    assert str(vault) not in listings


def test_a_catch_up_without_state_still_reads_what_the_file_holds(home, tmp_path, listings):
    stop = payload("claude-code", "Stop", tmp_path, hook_event_name="Stop")
    ok(hook(home, "claude-code", "Stop", stop))
    (path,) = vault_files(home)
    before = path.read_bytes()
    shutil.rmtree(home / "state")
    from chrollo.harness import claude_code

    with Capture(stop["session_id"], "claude-code", stop["cwd"]) as cap:
        units = cap.read_transcript(claude_code, stop["transcript_path"]) or []
        assert units
        assert cap.run(units) == []
    assert path.read_bytes() == before
    assert str(path.parent) in listings
