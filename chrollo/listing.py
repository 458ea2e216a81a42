"""A vault's session files, newest first, without listing 250,000 names on every prompt.

Listing a vault of 250,000 sessions costs ~0.2 s of os.listdir and more to sort, so the
recall hook and the Obsidian ``previous`` link keep the newest CACHE_NEWEST names in
``state/listing/`` and reuse them while no folder of the vault has changed (an append to a
session changes no folder). A session file chrollo itself creates changes the folder; so that
the next prompt does not list again for it, the writer notes the creation in a journal
(``Creating``) with the folder's mtime just before and just after it: a cached listing
plus an unbroken chain of such creations is the folder as it is now. Anything else that
changes the folder (an import, a forget, a rename in Obsidian, a file synced in) breaks the
chain, and the next reader lists afresh. Explicit searches never use this: they let rg walk.
"""
from __future__ import annotations

import json
import os
import time

from . import homedir as _home
from . import layout as _layout
from . import vaultfiles as _vaultfiles

CACHE_NEWEST = 20_000   # names kept (the deadline scan rarely gets past the newest few thousand)
# A search with a deadline lists a changed vault itself only up to this many files (~90 ms);
# past it, it goes on with the listing it has while one detached process lists the vault
# (245,000 names take ~0.45 s: more than the recall hook's deadline).
DEADLINE_LIST_MAX = 40_000
JOURNAL_MAX = 200       # creations a listing may be carried forward by before it is redone
_JOURNAL_TAIL = 64 << 10


def session_files(folder: str, include_peers: bool, dirs: dict | None = None, stop: float | None = None) -> list:
    """The vault's session files — the files search reads (:func:`chrollo.vaultfiles.keys`,
    the one walk) — as sort keys: the file name (sessions are named by their start time) and,
    below the top folder, ``name\\0relpath``. ``dirs`` gets each folder listed (relative) and
    its mtime. ``stop`` (a time.monotonic()): TimeoutError once it passes mid-walk."""
    return _vaultfiles.keys(folder, not include_peers, dirs, stop)


def older_keys(folder: str, include_peers: bool, before: str | None, stop: float | None) -> list:
    """The vault's session keys older than ``before`` (all if None), listed now — none if
    ``stop`` (a time.monotonic(): a search with a deadline) passes before or while listing."""
    try:
        return [f for f in session_files(folder, include_peers, stop=stop) if before is None or f < before]
    except TimeoutError:
        return []


def newest_keys(files: list, first: int):
    """``files`` (session_files keys) in batches, newest first: ``first``, then 4× more each
    time. Cut-offs come from a sorted sample of the keys, so a vault of 250,000 sessions is
    never sorted whole (only each batch is)."""
    n = len(files)
    sample = sorted(files[::max(1, n // 2048)])
    upper, done, size = None, 0, first
    while done < n:
        want = done + size
        cut = sample[max(0, len(sample) - max(1, want * len(sample) // n))] if want < n else None
        if upper is None:
            batch = files if cut is None else [f for f in files if f >= cut]
        else:
            batch = [f for f in files if f < upper and (cut is None or f >= cut)]
        batch.sort(reverse=True)
        yield batch
        done += len(batch)
        if cut is None:
            return
        upper, size = cut, 4 * size


def _journal(folder: str) -> str:
    return _layout.listing_journal(os.path.realpath(folder))


def cached(folder: str, include_peers: bool, deadline: bool = False) -> tuple[list, int]:
    """(the newest CACHE_NEWEST keys of session_files, newest first, and how many files
    there are), from state/listing/ while the vault is as it was listed — or as it was
    listed plus the creations chrollo noted since — else listed afresh; ``deadline`` (a
    search with one), a vault of more than DEADLINE_LIST_MAX files is listed afresh in the
    background (:func:`refresh_in_background`) and the listing it had is used meanwhile."""
    folder = os.path.realpath(folder)  # (the writer's and the searches' spellings of one vault)
    path = _layout.listing_cache(folder, include_peers)
    got = _home.read_json(path)
    had = None
    try:
        if got.get("folder") == folder:
            if isinstance(got["total"], int) and isinstance(got["newest"], list):
                had = got["newest"], got["total"]
            top = None
            for rel, t in got["dirs"].items():
                # (a folder changed in the second before it was listed could change again
                # within its mtime's granularity unseen: such a listing is not trusted)
                if not t < got["listed"] - 10**9:
                    raise KeyError(rel)
                now = os.stat(os.path.join(folder, rel)).st_mtime_ns
                if now != t:
                    if rel:
                        raise KeyError(rel)
                    top = now
            if top is None:
                return got["newest"], got["total"]
            added = created_since(folder, got["dirs"][""], top)
            if added is not None:
                newest = sorted(set(got["newest"]).union(added), reverse=True)[:CACHE_NEWEST]
                return newest, got["total"] + len(added)
    except (OSError, KeyError, TypeError, AttributeError):
        pass
    if deadline and had is not None and had[1] > DEADLINE_LIST_MAX and refresh_in_background(folder, include_peers):
        return had
    listed = time.time_ns()
    dirs: dict = {}
    files = session_files(folder, include_peers, dirs)
    newest = next(newest_keys(files, CACHE_NEWEST), []) if len(files) > CACHE_NEWEST else files
    newest = sorted(newest, reverse=True)
    try:
        _home.write_private(path, json.dumps({"folder": folder, "listed": listed, "dirs": dirs,
                                              "total": len(files), "newest": newest}))
    except OSError:
        pass  # (state/ not writable: the next search lists again)
    return newest, len(files)


def refresh_in_background(folder: str, include_peers: bool) -> bool:
    """Have ``folder``'s cached listing made afresh by a detached, niced process of its own
    (:func:`refresh_main`), unless one is under way (it holds a lock beside the cache);
    False if none could be started."""
    from . import detached

    if detached.held(_layout.listing_refresh_lock(folder, include_peers)):
        return True  # (one is listing it now)
    code = "import sys; from chrollo.listing import refresh_main; refresh_main(sys.argv[1:])"
    return detached.start(code, folder, "1" if include_peers else "0")


def refresh_main(argv: list) -> int:
    """The process :func:`refresh_in_background` starts: one listing of the folder, under its
    lock (another under way: nothing to do); never fails loudly."""
    import fcntl

    try:
        os.nice(10)
        folder, include_peers = argv[0], argv[1] == "1"
        fd = _home.open_lock(_layout.listing_refresh_lock(folder, include_peers))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            cached(folder, include_peers)
        finally:
            os.close(fd)
    except Exception as e:  # noqa: BLE001 — nobody reads its output
        _home.append_log("listing", f"background listing of {argv[:1]}: {type(e).__name__}: {e}")
    return 0


def created_since(folder: str, listed_mtime: int, now_mtime: int) -> list | None:
    """The names chrollo created in ``folder`` since it had ``listed_mtime``, if its creations
    noted since lead from that mtime to ``now_mtime`` unbroken (None if not)."""
    try:
        with open(_journal(folder), "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - _JOURNAL_TAIL))
            lines = fh.read().splitlines()[-JOURNAL_MAX:]
    except OSError:
        return None
    chain: dict = {}
    for line in lines:
        try:
            name, before, after = json.loads(line)
        except (ValueError, TypeError):
            continue
        if isinstance(name, str) and name.endswith(".md") and "/" not in name and "\0" not in name:
            chain[before] = (name, after)
    added, at = [], listed_mtime
    while at != now_mtime:
        step = chain.pop(at, None)
        if step is None:
            return None
        added.append(step[0])
        at = step[1]
    return added


class Creating:
    """``with Creating(folder) as c: <create folder/name>; c.done(name)`` — notes a session file
    chrollo creates at the top of a vault (see the module doc). Creations are serialised per
    folder, so two writers' notes never claim each other's change. Never raises for the note."""

    def __init__(self, folder: str):
        self.folder = os.path.realpath(folder)
        self.fd: int | None = None
        self.before: int | None = None

    def __enter__(self) -> "Creating":
        import fcntl

        try:
            self.fd = _home.open_lock(_layout.listing_journal_lock(self.folder))
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            self.before = os.stat(self.folder).st_mtime_ns
        except OSError:
            self.before = None
        return self

    def done(self, name: str) -> None:
        """``name`` was created (and nothing else done to the folder since __enter__)."""
        try:
            after = os.stat(self.folder).st_mtime_ns
            if self.before is None or after == self.before:
                return  # (the same mtime tick as a change before: a reader must list)
            path = _journal(self.folder)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, _home.FILE_MODE)
            try:
                if os.fstat(fd).st_size > 4 * _JOURNAL_TAIL:
                    os.ftruncate(fd, 0)  # (only the tail is ever read; a lost line costs a listing)
                os.write(fd, (json.dumps([name, self.before, after]) + "\n").encode("utf-8"))
            finally:
                os.close(fd)
        except OSError:
            pass

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # (releases the lock)


def drop() -> None:
    """Forget every cached listing and journal (they hold file names, which hold a format-2
    session's title): `chrollo forget` calls this, and the next reader lists afresh."""
    import fcntl

    folder = _layout.listing_dir()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for n in names:
        # (a detached listing under way may have walked the folder before the forget: it is
        # let finish — a listing takes a second at 250,000 files — and what it wrote dropped)
        if n.endswith(".refreshing"):
            try:
                fd = os.open(os.path.join(folder, n), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                for _ in range(300):
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except OSError:
                        time.sleep(0.1)
            finally:
                os.close(fd)
    try:
        names = os.listdir(folder)  # (what a listing that was let finish wrote, too)
    except OSError:
        return
    for n in names:
        if n.endswith((".json", ".created")):
            try:
                os.unlink(os.path.join(folder, n))
            except OSError:
                pass
