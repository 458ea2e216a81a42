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


def test_forget_waits_for_a_listing_made_in_the_background(vault, home):
    """A detached listing of a large vault (listing.refresh_in_background) that walked the
    folder before a forget removed a file writes its cache after: the forget waits for it to
    end, then drops what it wrote — a forgotten title never stays in a cached listing."""
    import fcntl
    import threading

    from chrollo import forget, layout

    names(vault)
    secret = write_session(vault, "tell0000-x", "2026-10-01T10:00:00",
                           [("user", "10:00:00", "the launch codes are in the blue binder")], fmt=2)
    lock = layout.listing_refresh_lock(os.path.realpath(vault), True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # (a refresh under way: it walked while the file was there)
    cache = Path(layout.listing_cache(os.path.realpath(vault), True))

    def refresh_ends():
        time.sleep(0.5)
        cache.write_text('{"newest": ["' + secret.name + '"]}')
        os.close(fd)

    t = threading.Thread(target=refresh_ends)
    t.start()
    forget.forget([str(secret)], dir=str(vault))
    t.join()
    assert not secret.exists()
    assert not any("blue_binder" in p.read_text() for p in (home / "state" / "listing").iterdir() if p.is_file())


def rg_files(vault) -> set:
    """The files chrollo's search reads: rg's own walk with its globs."""
    import subprocess

    from chrollo.rg import rg_path

    out = subprocess.run([rg_path(), "--files", "-g", "*.md", str(vault)], capture_output=True, text=True).stdout
    return {os.path.relpath(p, vault) for p in out.splitlines()}


def test_the_hooks_listing_and_the_vaults_count_are_the_files_search_reads(vault, home):
    """One walk of a vault's files (chrollo/vaultfiles.py): the recall hook's listing and the
    count that decides whether a search selects its files saw neither the sessions inside a
    hidden folder named ``*.md`` (rg's ``-g '*.md'`` whitelists it) nor a folder named
    ``*.md`` as a folder — the hook never recalled what search finds there."""
    from chrollo.retrieval import scan
    from chrollo.retrieval.options import SearchOptions

    hidden = vault / ".notes.md"
    (hidden / "deeper").mkdir(parents=True)
    (hidden / ".skipped").mkdir()
    (vault / "plain.md").mkdir()
    for i, where in enumerate([hidden, hidden, hidden / "deeper", vault / "plain.md"]):
        write_session(where, f"hid0000{i}-x", f"2026-10-0{i + 1}T10:00:00",
                      [("user", "10:00:00", f"the quokka migration plan number {i}")])
    (hidden / ".skipped" / "s.md").write_text("[2026-10-09 10:00:00] [User]\nquokka\n")
    (vault / "linked").symlink_to(hidden, target_is_directory=True)
    want = rg_files(vault)
    assert len(want) == 9
    keys, total = listing.cached(str(vault), True)
    assert {k.split("\0")[-1] for k in keys} == want and total == 9
    scope = SearchOptions(dir=str(vault)).resolve(time.monotonic())
    for most, more in ((8, True), (9, False)):
        scope.memo.clear()
        scan.tuning.SELECT_AFTER, old = most, scan.tuning.SELECT_AFTER
        try:
            assert scan.large(scope) is more, most
        finally:
            scan.tuning.SELECT_AFTER = old
