"""Keeping the index in step with what chrollo itself writes and forgets.

:func:`update`: a file chrollo just wrote (a turn appended) adds its words as delta rows; a
file new to the index has its folder listed again. :func:`forget`: a forgotten file's ids
leave every term of its text and terms left with no file are deleted, bytes zeroed
(``secure_delete``, checked); if that cannot be done the whole index is deleted — it must
never keep the words of something forgotten.
"""
from __future__ import annotations

import os
import re
import time

from .. import homedir as _home

from .store import (RACY_NS, READ_BUSY_MS, WRITE_BUSY_MS, checkpoint, compatible, connect, db_path, drop_ids,
    fold_delta, pack_ids, post_rows, put_file, read_file, rel_of, remove, size_of, unpack_ids)
from .terms import MAX_FILE_RUNS, body_and_end, terms_of
from ..vaultfiles import folder_listing, walk


MERGE_DELTA = 200_000        # delta rows past which an update folds them into post
DEAD_CHECK = 500             # forget drops the ids of vanished files from postings this short
VACUUM_MAX = 128 << 20       # forget rewrites an index this small when a word's bytes outlive it (else deletes it)
RELIST_MAX = 5000            # names new to a folder past which an update records only its own file (see _relist_up)


def update(vault: str, paths: list, busy_ms: int = READ_BUSY_MS) -> None:
    """Index ``paths`` (files chrollo just wrote in ``vault``) as they are now: their words go
    in as an increment (a few dozen rows for a turn). A file new to the index makes its folder
    listed again (see :func:`_relist`), so the folder's record stays true. Also re-reads a few
    files an earlier update read racily (see RACY_NS), so they do not stay unindexed. Does
    nothing without an index; never raises (a file it could not index is read directly)."""
    try:
        if not os.path.isfile(db_path(vault)):
            return
        vault = os.path.realpath(vault)
        vb = os.fsencode(vault)
        con = connect(db_path(vault), write=True, busy_ms=busy_ms)
        try:
            if not compatible(con):
                return
            con.execute("BEGIN IMMEDIATE")
            rels = [r for r in (rel_of(vb, os.fsencode(os.path.realpath(p))) for p in paths) if r is not None]
            old = time.time_ns() - RACY_NS
            # ("ok <> 1" lets SQLite use the partial index files_loose: not a scan of every row)
            for rel, ctime in con.execute("SELECT rel, ctime FROM files WHERE ok <> 1 AND ok = 0 LIMIT 8").fetchall():
                if ctime < old and rel not in rels:
                    rels.append(rel)
            added = sum(_update_one(con, vb, rel) for rel in rels)
            _relist_racy(con, vb)
            got = con.execute("SELECT v FROM meta WHERE k = 'delta'").fetchone()
            held = (int(got[0]) if got else 0) + added
            if held > MERGE_DELTA:
                fold_delta(con)
                held = 0
            con.execute("INSERT OR REPLACE INTO meta VALUES ('delta', ?)", (str(held),))
            con.execute("COMMIT")
        finally:
            con.close()
    except Exception as e:  # noqa: BLE001 — the write that called us must go on
        _home.append_log("index", f"update failed ({type(e).__name__}: {e}); those files are searched directly")


def _update_one(con, vb: bytes, rel: bytes) -> int:
    """Index one file as it is now; the delta rows added."""
    row = con.execute("SELECT dir FROM files WHERE rel = ?", (rel,)).fetchone()
    if row is None:  # new to the index: its folder is listed again first
        if not _relist_up(con, vb, rel):
            return 0
        row = con.execute("SELECT dir FROM files WHERE rel = ?", (rel,)).fetchone()
        if row is None:
            return 0
    path = vb + b"/" + rel
    got = read_file(path)
    if got is None:
        if os.path.lexists(path):
            con.execute("UPDATE files SET ok = -1 WHERE rel = ?", (rel,))
        else:
            con.execute("DELETE FROM files WHERE rel = ?", (rel,))
        return 0
    fm, body = body_and_end(got[0])
    terms = terms_of(body, MAX_FILE_RUNS)
    if terms is None:  # (too many distinct words: read directly, see MAX_FILE_RUNS)
        con.execute("UPDATE files SET ok = -1 WHERE rel = ?", (rel,))
        return 0
    fid = put_file(con, rel, row[0], got[1], fm)
    return con.executemany("INSERT OR IGNORE INTO delta VALUES (?, ?)",
                           ((t.decode("utf-8"), fid) for t in terms)).rowcount


def _relist_up(con, vb: bytes, rel: bytes) -> bool:
    """List again the nearest folder above file ``rel`` the index has a record of. When that is
    the file's own folder and it grew far behind its record (over RELIST_MAX names new to it:
    a sync tool's delivery), only ``rel`` gets a row: recording the rest is the catch-up
    build's work, not a hook's (capture calls this), and the record stays stale meanwhile, so
    searches still list that folder."""
    own = drel = rel.rpartition(b"/")[0]
    while True:
        row = con.execute("SELECT id FROM dirs WHERE rel = ?", (drel,)).fetchone()
        if row is not None:
            if not _relist(con, vb, row[0], drel, RELIST_MAX if drel == own else None):
                try:
                    _add_loose(con, row[0], [(rel, os.stat(vb + b"/" + rel).st_ino)])
                except OSError:
                    return False
            return True
        if not drel:
            return False
        drel = drel.rpartition(b"/")[0]


def _relist_racy(con, vb: bytes) -> None:
    """Folders recorded within RACY_NS of a change are listed again once that is past (a name
    added in the same mtime tick would otherwise go unseen; until then searches list them)."""
    now = time.time_ns()
    for did, rel, mtime in con.execute("SELECT id, rel, mtime FROM dirs WHERE mtime >= seen - ?",
                                       (RACY_NS,)).fetchall():
        if mtime < now - RACY_NS:
            _relist(con, vb, did, rel)


def _relist(con, vb: bytes, did: int, drel: bytes, bound: int | None = None) -> bool:
    """Make folder ``did``'s rows its listing now: names gone are dropped, new names (and
    names now another file: an editor's atomic save) are read directly until indexed, new
    subfolders are recorded with all their files; then its record is renewed. With
    ``bound``, a listing holding more names new to the rows changes nothing (False)."""
    path = vb + b"/" + drel if drel else vb
    got = folder_listing(path)
    if got is None:
        con.execute("DELETE FROM dirs WHERE id = ?", (did,))
        return True
    (mtime, seen), names, subs = got
    gone, moved = [], []
    for fid, rel, ino in con.execute("SELECT id, rel, ino FROM files WHERE dir = ?", (did,)).fetchall():
        i = names.pop(rel.rpartition(b"/")[2], None)
        if i is None:
            gone.append(fid)
        elif i != ino:
            moved.append((fid,))
    if bound is not None and len(names) > bound:
        return False
    con.executemany("UPDATE files SET ok = 0 WHERE id = ? AND ok = 1", moved)
    drop_ids(con, gone)
    base = drel + b"/" if drel else b""
    _add_loose(con, did, [(base + n, i) for n, i in names.items()])
    known = {r[0] for r in con.execute("SELECT rel FROM dirs")}
    for sub in subs:
        if base + sub not in known:
            walked: list = []
            found = walk(os.fsdecode(path + b"/" + sub), dirs=walked)
            ids = {}
            for d, m, s in walked:
                r = rel_of(vb, d)
                ids[d] = con.execute("INSERT OR REPLACE INTO dirs(rel, mtime, seen) VALUES (?,?,?)",
                                     (r, m, s)).lastrowid
            for p, e in found:
                _add_loose(con, ids[os.path.dirname(p)], [(rel_of(vb, p), e.inode())])
    con.execute("UPDATE dirs SET mtime = ?, seen = ? WHERE id = ?", (mtime, seen, did))
    return True


def _add_loose(con, did: int, rels: list) -> None:
    """Rows for files found by a listing, read directly until indexed (ok = 0)."""
    con.executemany("INSERT OR IGNORE INTO files(rel, dir, size, mtime, ctime, ino, seen, ok) "
                    "VALUES (?, ?, -1, 0, 0, ?, 0, 0)", [(r, did, i) for r, i in rels])


def forget(vault: str, contents: dict) -> None:
    """Take out of the index everything ``contents`` ({path: the bytes it held before a forget
    deleted or scrubbed it}) held: the files' ids leave every term of that text, terms left
    with no file are deleted, and so are the files' rows (a scrubbed file is then unindexed,
    searched directly until indexed again). If that cannot be done the whole index is
    deleted: an index must never keep the words of something forgotten."""
    if not contents or not os.path.exists(db_path(vault)):
        return
    try:
        vault = os.path.realpath(vault)
        vb = os.fsencode(vault)
        con = connect(db_path(vault), write=True, busy_ms=WRITE_BUSY_MS * 5)
        try:
            con.execute("BEGIN IMMEDIATE")
            ids, terms = set(), set()
            for p, data in contents.items():
                rel = rel_of(vb, os.fsencode(os.path.realpath(p)))
                row = rel is not None and con.execute("SELECT id FROM files WHERE rel = ?", (rel,)).fetchone()
                if row:
                    ids.add(row[0])
                held = terms_of(body_and_end(data)[1], MAX_FILE_RUNS)  # (what its postings hold)
                if held is None:  # (more than a build holds at once: the index goes, see below)
                    raise RuntimeError("a forgotten file holds too many distinct words to take out one by one")
                terms |= held
            drop_ids(con, sorted(ids))
            if ids:
                _drop_from_postings(con, ids, sorted(t.decode("utf-8") for t in terms))
            gone = _unheld(con, terms)
            con.execute("COMMIT")
            checkpoint(con)
        finally:
            con.close()
        if gone and _residue(vault, gone):
            _vacuum(vault, gone)
    except Exception as e:  # noqa: BLE001
        _home.append_log("index", f"forget could not edit the index ({type(e).__name__}: {e}); deleted it")
        remove(vault)


def _drop_from_postings(con, ids: set, words: list) -> None:
    """``ids`` out of the postings of ``words`` (a posting left empty is deleted) and out of
    the delta rows, with the delta rows of any earlier id of those words' files."""
    import zlib

    for i in range(0, len(words), 500):
        chunk = words[i:i + 500]
        rows = []
        for t, seg, blob in post_rows(con, chunk, "term, seg, ids").fetchall():
            left = [x for x in unpack_ids(blob) if x not in ids]
            if len(left) <= DEAD_CHECK:  # (ids of files gone by other means count for nothing)
                live = sorted(set(left))
                q2 = ",".join("?" * len(live))
                live = {r[0] for r in con.execute(f"SELECT id FROM files WHERE id IN ({q2})", live)}
                left = [x for x in left if x in live]
            if left:
                b = pack_ids(left)
                rows.append((t, seg, b, zlib.crc32(b)))
            else:
                con.execute("DELETE FROM post WHERE term = ? AND seg = ?", (t, seg))
        con.executemany("INSERT OR REPLACE INTO post VALUES (?,?,?,?)", rows)
    idl = sorted(ids)
    for i in range(0, len(idl), 500):
        chunk = idl[i:i + 500]
        con.execute(f"DELETE FROM delta WHERE id IN ({','.join('?' * len(chunk))})", chunk)
    for i in range(0, len(words), 500):  # (and an earlier id of a file rewritten since)
        chunk = words[i:i + 500]
        con.execute(f"DELETE FROM delta WHERE term IN ({','.join('?' * len(chunk))}) "
                    "AND id NOT IN (SELECT id FROM files)", chunk)


def _vacuum(vault: str, gone: list) -> None:
    """A forgotten word's bytes were found in the index's files: a cell SQLite moved while
    rebalancing a page can leave its old copy in the page's free space, which secure_delete
    does not zero. VACUUM rewrites every page (a large index is deleted instead: raises)."""
    if size_of(vault) > VACUUM_MAX:
        raise RuntimeError("a forgotten word's bytes are still in the index's files")
    con = connect(db_path(vault), write=True, busy_ms=WRITE_BUSY_MS * 5)
    try:
        con.execute("VACUUM")
        checkpoint(con)
    finally:
        con.close()
    if _residue(vault, gone):
        raise RuntimeError("a forgotten word's bytes are still in the index's files after VACUUM")


def _unheld(con, terms: set) -> list:
    """The ``terms`` no row of the index holds any more (forgotten with nothing else holding them)."""
    words = sorted(t.decode("utf-8") for t in terms)
    held = set()
    for i in range(0, len(words), 500):
        chunk = words[i:i + 500]
        held.update(t for (t,) in post_rows(con, chunk, "DISTINCT term"))
        q = ",".join("?" * len(chunk))
        held.update(t for (t,) in con.execute(f"SELECT DISTINCT term FROM delta WHERE term IN ({q})", chunk))
    return [w.encode("utf-8") for w in words if w not in held]


def _residue(vault: str, words: list) -> bool:
    """Whether the bytes of one of ``words`` are anywhere in the index's files (SQLite zeroes
    what it frees with secure_delete; this checks it did, rather than trusting it: a
    forgotten word must not be findable in them). Words of 4+ characters, as words (case
    folded): shorter ones occur by chance in any binary file."""
    words = [w for w in words if len(w) >= 4]
    if not words:
        return False
    pat = re.compile(rb"(?<![A-Za-z0-9_])(?:" + b"|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
                     + rb")(?![A-Za-z0-9_])", re.I)
    keep = max(map(len, words)) + 1
    for path in (db_path(vault), db_path(vault) + "-journal", db_path(vault) + "-wal"):
        try:
            fh = open(path, "rb")
        except OSError:
            continue
        with fh:
            tail = b""
            while block := fh.read(8 << 20):
                if pat.search(tail + block):
                    return True
                tail = block[-keep:]
    return False
