"""chrollo/listing.py: the recall hook and the Obsidian `previous` link reuse a cached listing
of the vault; a session file chrollo creates is carried into it (no listing of 250,000 names
on the next prompt), anything else that changes the vault makes the next reader list again."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import write_session

from chrollo import listing, obsidian


@pytest.fixture
def vault(home, tmp_path):
    v = tmp_path / "vault"
    for day in range(1, 6):
        write_session(v, f"old0000{day}-x", f"2026-09-0{day}T10:00:00",
                      [("user", "10:00:00", f"the flaky ingest worker failed again on day {day}")])
    old = time.time() - 60  # (a listing is trusted only for folders unchanged for a second)
    os.utime(v, (old, old))
    return v


@pytest.fixture
def listings(monkeypatch):
    calls = []
    real = listing.session_files
    monkeypatch.setattr(listing, "session_files", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    return calls


def names(vault) -> list:
    keys, total = listing.cached(str(vault), True)
    assert total == len(keys)
    return keys


def test_sessions_chrollo_creates_are_carried_into_the_cached_listing(vault, listings):
    assert names(vault) == sorted((p.name for p in vault.glob("*.md")), reverse=True)
    assert len(listings) == 1
    a = write_session(vault, "new00001-x", "2026-10-01T10:00:00", [("user", "10:00:00", "one more")])
    b = write_session(vault, "new00002-x", "2026-10-02T10:00:00", [("user", "10:00:00", "and another")])
    got = names(vault)
    assert got[:2] == [b.name, a.name] and len(got) == 7
    assert len(listings) == 1  # not listed again
    (vault / "2026-10-03_100000_synced00.md").write_text("[2026-10-03 10:00:00] [User]\nfrom elsewhere\n")
    got = names(vault)
    assert got[0] == "2026-10-03_100000_synced00.md" and len(got) == 8 and len(listings) == 2


def test_a_change_chrollo_did_not_note_breaks_the_chain(vault, listings):
    names(vault)
    write_session(vault, "new00001-x", "2026-10-01T10:00:00", [("user", "10:00:00", "one more")])
    time.sleep(0.02)  # (a later mtime tick than the creation's)
    gone = sorted(vault.glob("2026-09-01_*.md"))[0]
    gone.unlink()  # e.g. `chrollo forget`, or a file deleted in Obsidian
    write_session(vault, "new00002-x", "2026-10-02T10:00:00", [("user", "10:00:00", "and another")])
    got = names(vault)
    assert gone.name not in got and len(got) == 6 and len(listings) == 2


def test_the_previous_session_link_uses_the_cached_listing(vault, listings, monkeypatch):
    names(vault)
    calls = []
    real = os.listdir
    monkeypatch.setattr(obsidian.os, "listdir", lambda p=".": calls.append(p) or real(p))
    prev = obsidian.find_previous(str(vault), "2026-10-05_100000_abcdef01.md", "/home/user/project")
    assert prev == sorted(p.stem for p in vault.glob("*.md"))[-1]
    assert calls == [] and len(listings) == 1


def test_a_new_session_file_lists_the_vault_at_most_once(vault, monkeypatch):
    """Finding whether the session (or its parent) has a file and setting aside a crashed
    writer's temp file share one listing (each was one at 250,000 sessions: ~0.2 s)."""
    from chrollo import session

    names(vault)  # (the `previous` link's listing is cached)
    calls = []
    real = os.listdir
    monkeypatch.setattr(session.os, "listdir", lambda p=".": calls.append(str(p)) or real(p))
    stale = vault / ".sub00001.999999999.tmp"
    stale.write_text("half a turn from a writer that died")
    write_session(vault, "sub00001-x", "2026-10-01T10:00:00", [("user", "10:00:00", "a subagent's task")])
    assert calls == [str(vault)] and not stale.exists()


def test_forget_drops_the_cached_listings(vault, home):
    """A cached listing or journal holds file names, and a format-2 name holds the title."""
    from chrollo import forget

    names(vault)
    secret = write_session(vault, "tell0000-x", "2026-10-01T10:00:00",
                           [("user", "10:00:00", "the launch codes are in the blue binder")], fmt=2)
    assert any("blue_binder" in p.read_text() for p in (home / "state" / "listing").iterdir() if p.is_file())
    forget.forget([str(secret)], dir=str(vault))
    assert not secret.exists()
    assert not any("blue_binder" in p.read_text() for p in (home / "state" / "listing").iterdir() if p.is_file())
    assert secret.name not in names(vault)
