"""Which files a search's folder holds, as the index knows them, kept honest cheaply.

:class:`Scope` stats folders, not files: a folder whose mtime moved is listed again; files
changed in place are found by the sweep of SWEEP indexed files each complete search stats
(its position kept in ``.sweep``), and marked to be read directly until indexed again.
"""
from __future__ import annotations

import os

from .. import homedir as _home

from .store import RACY_NS, connect, db_path, rel_of
from ..vaultfiles import dir_stamp, folder_listing, walk


SWEEP = 1000                 # indexed files a complete search stats to catch in-place edits


def in_scope(rel: bytes, top: bytes, exclude_peers: bool, unsearchable: frozenset) -> bool:
    """Whether folder ``rel`` is one rg searches under folder ``top`` (both relative to the
    vault) with chrollo's globs (see :func:`walk`)."""
    if top:
        if rel != top and not rel.startswith(top + b"/"):
            return False
        rel = rel[len(top) + 1:]
    prev = None
    for part in rel.split(b"/") if rel else ():
        if (exclude_peers and part == b"peers") or (prev == b"peers" and os.fsdecode(part) in unsearchable):
            return False
        prev = part
    return True


class Scope:
    """The files rg would search under a folder, as the index knows them without stat'ing them:

    - ``trusted``: folders whose mtime is what it was when their listing was last made the
      index's rows (and not within RACY_NS of it): no name was added, removed or renamed in
      them since; their rows are their files.
    - a folder whose mtime moved is listed now (``alive``: its rows still there; a name now
      another inode, an editor's atomic save, is read directly); ``new``: its names without a
      row, and the files of new subfolders (walked).
    - ``direct``: every file read directly — those, the rows the index marks as not indexed,
      and what this search's verification slice found changed (:func:`_sweep`).
    - ``files``: how many there are (the N of the ranking's idf), counted in SQL.

    An in-place edit of a file (same name, same inode) outside chrollo moves no folder: it is
    found by the slices of SWEEP files each complete search stats, or by `chrollo index`.
    """

    def __init__(self, vb: bytes):
        self.vb, self.trusted, self.alive, self.direct, self.new, self.files = vb, set(), set(), set(), set(), 0
        self.direct_ids: set = set()  # the rows of files read directly (their postings are not theirs now)

    @classmethod
    def of(cls, con, vault: str, folder: str, exclude_peers: bool, unsearchable: frozenset):
        vb, fb = os.fsencode(vault), os.fsencode(os.path.realpath(folder))
        top = b"" if fb == vb else rel_of(vb, fb)
        dirs = con.execute("SELECT id, rel, mtime, seen FROM dirs").fetchall()
        if top is None or not any(rel == top for _i, rel, _m, _s in dirs):
            return None  # (a folder the index never listed)
        s, moved = cls(vb), []
        known = {rel for _i, rel, _m, _s in dirs}
        for did, rel, mtime, seen in dirs:
            if not in_scope(rel, top, exclude_peers, unsearchable):
                continue
            stamp = dir_stamp(vb + b"/" + rel if rel else vb)
            if stamp is None:
                continue  # gone: none of its files is searched
            if stamp[0] == mtime and mtime < seen - RACY_NS:
                s.trusted.add(did)
            else:
                moved.append((did, rel))
        if s.trusted:
            s.files = con.execute(f"SELECT count(*) FROM files WHERE dir IN ({','.join(map(str, s.trusted))})"
                                  ).fetchone()[0]
        for did, rel in moved:
            s._relisted(con, did, rel, known, top, exclude_peers, unsearchable)
        s.files += len(s.alive)
        for fid, rel, did in con.execute("SELECT id, rel, dir FROM files WHERE ok <> 1"):
            s.direct_ids.add(fid)
            if did in s.trusted or fid in s.alive:
                s.direct.add(vb + b"/" + rel)
        _sweep(con, vault, s)
        s.files += len(s.new)
        s.direct |= s.new
        return s

    def _relisted(self, con, did: int, rel: bytes, known: set, top: bytes, exclude_peers: bool,
                  unsearchable: frozenset) -> None:
        """A folder whose mtime moved: its listing now against its rows (see the class doc)."""
        vb = self.vb
        path = vb + b"/" + rel if rel else vb
        got = folder_listing(path)
        if got is None:
            return
        _stamp, names, subs = got
        for fid, frel, ino in con.execute("SELECT id, rel, ino FROM files WHERE dir = ?", (did,)):
            i = names.pop(frel.rpartition(b"/")[2], None)
            if i is not None:
                if i == ino:
                    self.alive.add(fid)
                else:
                    self.direct.add(vb + b"/" + frel)
                    self.direct_ids.add(fid)
                    self.alive.add(fid)
        self.new.update(path + b"/" + n for n in names)
        base = rel + b"/" if rel else b""
        for sub in subs:
            if base + sub not in known and in_scope(base + sub, top, exclude_peers, unsearchable):
                self.new.update(p for p, _e in walk(os.fsdecode(path + b"/" + sub), exclude_peers, unsearchable))

    def paths(self, con, cand: set) -> tuple:
        """The paths rg reads: ``cand``'s files in scope, and ``direct``; and the frontmatter
        ends of those the index vouches for (see :class:`Plan`)."""
        import json

        vb, trusted, alive = self.vb, self.trusted, self.alive
        out, fm_ends = set(self.direct), {}
        for fid, rel, did, ok, fm, *stat in con.execute(
                "SELECT id, rel, dir, ok, fm, size, mtime, ctime, ino FROM files WHERE id IN "
                "(SELECT value FROM json_each(?))", (json.dumps(sorted(cand)),)):
            if did in trusted or fid in alive:
                p = vb + b"/" + rel
                out.add(p)
                if ok == 1 and fm is not None and unchanged(p, stat):
                    fm_ends[p] = fm
        for p in self.direct:
            fm_ends.pop(p, None)
        return sorted(out), fm_ends

    def vouched(self, con, folder: str) -> dict:
        """The frontmatter ends of every file in scope the index vouches for and whose stat is
        still what it was when indexed, keyed by the path rg prints when it walks ``folder``
        (none when that is not the vault's real path: a key that misses only costs reading
        the head)."""
        vb, trusted, alive = self.vb, self.trusted, self.alive
        if os.fsencode(folder) != vb and not os.fsencode(folder).startswith(vb + b"/") \
                or os.path.realpath(folder) != folder:
            return {}
        pre, fm_ends = vb + b"/", {}
        for fid, rel, did, fm, *stat in con.execute(
                "SELECT id, rel, dir, fm, size, mtime, ctime, ino FROM files WHERE ok = 1 AND fm IS NOT NULL"):
            if (did in trusted or fid in alive) and unchanged(pre + rel, stat):
                fm_ends[pre + rel] = fm
        for p in self.direct:
            fm_ends.pop(p, None)
        return fm_ends


def unchanged(path: bytes, stat: list) -> bool:
    """Whether ``path``'s (size, mtime, ctime, inode) are still ``stat`` (a row's): a frontmatter
    end is taken from the index only then — rg reads every file as it is now, and an in-place
    edit the verification sweep has not reached yet must not move where its rows start (an
    lstat is a tenth of reading the head)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino] == stat


def sweep_file(vault: str) -> str:
    return db_path(vault) + ".sweep"


def _sweep(con, vault: str, scope: Scope) -> None:
    """Stat the next SWEEP indexed files (by id, round the vault): one changed since it was
    indexed is read directly by this search and marked so in the index (then every search
    reads it until it is indexed again); the position is kept beside the index. A full round
    takes files / SWEEP complete searches."""
    try:
        with open(sweep_file(vault)) as fh:
            after = int(fh.read().strip() or 0)
    except (OSError, ValueError):
        after = 0
    q = "SELECT id, rel, dir, size, mtime, ctime, ino FROM files WHERE id > ? AND ok = 1 ORDER BY id LIMIT ?"
    rows = con.execute(q, (after, SWEEP)).fetchall()
    if len(rows) < SWEEP and after:
        rows += con.execute(q, (0, SWEEP - len(rows))).fetchall()
    stale, vb = [], scope.vb
    for fid, rel, did, size, mtime, ctime, ino in rows:
        try:
            st = os.lstat(vb + b"/" + rel)
        except OSError:
            continue  # gone: its folder's mtime says so
        if (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) != (size, mtime, ctime, ino):
            stale.append(fid)
            scope.direct_ids.add(fid)
            if did in scope.trusted or fid in scope.alive:
                scope.direct.add(vb + b"/" + rel)
    if rows and (not stale or _mark_stale(vault, stale)):
        try:
            tmp = sweep_file(vault) + f".{os.getpid()}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, _home.FILE_MODE)
            with os.fdopen(fd, "w") as fh:
                fh.write(str(rows[-1][0]))
            os.replace(tmp, sweep_file(vault))
        except OSError:
            pass


def _mark_stale(vault: str, ids: list) -> bool:
    """Mark files found changed as read directly until indexed again; False if the index is
    busy (the slice is then verified again by the next search)."""
    try:
        con = connect(db_path(vault), write=True, busy_ms=0)
        try:
            con.execute("BEGIN IMMEDIATE")
            con.executemany("UPDATE files SET ok = 0 WHERE id = ?", [(i,) for i in ids])
            con.execute("COMMIT")
        finally:
            con.close()
        return True
    except Exception:  # noqa: BLE001
        return False
