"""Building the index: every file of a vault read, tokenised and written in segments.

A build commits a segment per CHUNK_BYTES of files, so one killed midway leaves an index
that is right for what it holds (the rest is read directly). A large build tokenises in
worker processes. :func:`build_in_background` is the detached, niced build a search asks for
(through :func:`chrollo.index.after_search`); :func:`ensure` the quiet one install, import
and mesh sync run.
"""
from __future__ import annotations

import os
import time
from collections import deque
from itertools import chain, repeat

from .. import homedir as _home

from .store import (RACY_NS, db_path, drop_ids, fold_delta, fresh, merge, next_file_id, open_writer,
    pack_rows, read_file, rel_of, remove, size_of, stat_of, write_order)
from .terms import MAX_FILE_RUNS, body_and_end, run_terms, runs_of, unicode_parts
from ..vaultfiles import walk


CHUNK_BYTES = 8 << 20        # a build's unit of work: files read, tokenised and written as one segment
POOL_BYTES = 24 << 20        # a build reading more than this tokenises in worker processes
CHUNK_TERMS = 150_000        # a chunk's distinct terms past which its other files go in a chunk of their own
RUN_CACHE = 50_000           # runs whose _Posts a build's tokenising process keeps (a larger dict is slower)


def build(vault: str, rebuild: bool = False, progress=None, under: str | None = None) -> dict:
    """Index every file of ``vault`` not indexed as it is now (every file with ``rebuild``);
    returns a summary (``terms_read``: the distinct terms of the files read now; counting the
    whole index's would scan every posting). ``progress(done_bytes, total_bytes)`` is called
    as it goes. Files gone since are dropped, pending increments merged. Work is committed in steps: a build killed
    midway leaves an index that is correct for what it holds (the rest is unindexed).
    ``under`` (a subfolder of the vault, e.g. "peers"): look at that part of it only.
    A damaged index is deleted and built afresh; one another writer holds is a ChrolloError."""
    import sqlite3

    from ..errors import ChrolloError

    try:
        return _build(vault, rebuild, progress, under)
    except sqlite3.OperationalError as e:
        if "locked" in str(e) or "busy" in str(e):
            raise ChrolloError("index_busy", f"the search index is being written by another process ({e})",
                               "Try again when it is done (an import or another `chrollo index`).") from None
        if _unwritable(e):  # (a full disk: a rebuild would not fit either; what is committed stays)
            raise _unwritable(e) from None
        remove(vault)
    except sqlite3.DatabaseError:  # (malformed, not a database): it is derived — start again
        remove(vault)
    try:
        return _build(vault, True, progress, under)
    except sqlite3.OperationalError as e:
        raise (_unwritable(e) or e) from None


def _unwritable(e: Exception):
    """The ChrolloError for an index the disk would not take (full, a quota, a file size limit,
    a write error), or None."""
    if not any(m in str(e) for m in ("full", "disk I/O", "readonly", "read-only")):
        return None
    from ..errors import ChrolloError

    return ChrolloError("index_unwritable", f"the search index could not be written ({e})",
                        "Free some disk space (or make the index's folder writable) and run `chrollo index` "
                        "again; until then searches read the files, with the same results.")


def _build(vault: str, rebuild: bool, progress, under: str | None) -> dict:
    t0 = time.monotonic()
    vault = os.path.realpath(vault)
    vb = os.fsencode(vault)
    con = open_writer(vault, fresh=rebuild)
    try:
        con.execute("BEGIN IMMEDIATE")
        todo, dirs, gone = _survey(con, vb, under)
        total = sum(item[-1] for item in todo)
        done_bytes = read = 0
        got = con.execute("SELECT v FROM meta WHERE k = 'seg'").fetchone()
        last_seg = int(got[0]) if got else 0  # (this build's segments are the ones after it: terms_read)
        for rows, postings, nbytes, size in _tokenised(todo):
            con.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            merge(con, postings)
            con.execute("COMMIT")  # (killed later, the index is right for what it holds)
            con.execute("BEGIN IMMEDIATE")
            done_bytes += size
            read += nbytes
            if progress is not None:
                progress(done_bytes, total)
        # (counted by SQLite, not in a set of every term the build read: its memory is bounded)
        words = con.execute("SELECT count(DISTINCT term) FROM post WHERE seg > ?", (last_seg,)).fetchone()[0]
        fold_delta(con)
        # (the folders last: a folder's record says its listing is all in files)
        con.executemany("INSERT OR REPLACE INTO dirs(id, rel, mtime, seen) VALUES (?,?,?,?)", dirs)
        con.execute("COMMIT")
        files = con.execute("SELECT count(*) FROM files").fetchone()[0]
        write_order(con, vault)  # (so no search, and no recall hook, has to)
    finally:
        con.close()
    secs = time.monotonic() - t0
    return {"vault": vault, "index": db_path(vault), "files": files, "read": len(todo),
            "bytes_read": read, "dropped": len(gone), "terms_read": words,
            "index_bytes": size_of(vault), "seconds": round(secs, 3),
            "mb_per_s": round(read / 1e6 / secs, 1) if secs and read else None}


def _survey(con, vb: bytes, under: str | None) -> tuple:
    """Walk the vault (or its subfolder ``under``): the files to read, as ``(id, path, rel,
    folder id, size)``; the folders' records to write at the end; the ids of files gone (their
    rows are dropped now, their postings stay until forgotten: ids of no file are ignored)."""
    prefix = os.fsencode(under).strip(b"/") if under else b""
    top = vb + b"/" + prefix if prefix else vb

    def mine(rel: bytes) -> bool:
        return not prefix or rel == prefix or rel.startswith(prefix + b"/")

    rows = {rel: r for rel, *r in con.execute("SELECT rel, id, size, mtime, ctime, ino, seen, ok FROM files")
            if mine(rel)}
    known = {rel: i for rel, i in con.execute("SELECT rel, id FROM dirs")}
    next_dir = max(known.values(), default=0) + 1
    walked: list = []
    found = walk(os.fsdecode(top), dirs=walked)
    dir_id, dirs = {}, []
    for d, mtime, seen in walked:
        rel = rel_of(vb, d) or b""
        i = known.pop(rel, None)
        if i is None:
            i, next_dir = next_dir, next_dir + 1
        dir_id[d] = i
        dirs.append((i, rel, mtime, seen))
    gone_dirs = [i for rel, i in known.items() if mine(rel)]
    for k in range(0, len(gone_dirs), 500):
        chunk = gone_dirs[k:k + 500]
        con.execute(f"DELETE FROM dirs WHERE id IN ({','.join('?' * len(chunk))})", chunk)
    next_id = next_file_id(con)
    todo, here, cut = [], set(), len(vb) + 1
    for path, e in found:
        rel = path[cut:]  # (every path found is under the vault; its folder is what walk listed)
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        here.add(rel)
        got = rows.get(rel)
        if got is not None and fresh(got[1:], st):
            continue
        # (a changed file takes a new id: the postings of its old words name the old one, which
        # no row holds any more, so what the index says a file holds is what it holds now)
        fid, next_id = next_id, next_id + 1
        todo.append((fid, path, rel, dir_id[path[:path.rindex(b"/")]], st.st_size))
    gone = [r[0] for rel, r in rows.items() if rel not in here]
    drop_ids(con, gone)
    return todo, dirs, gone


def _tokenised(todo: list):
    """``todo``'s files read and tokenised, a chunk of about CHUNK_BYTES at a time (see
    :func:`index_chunk`); in worker processes, one per core, for a large build. The files a
    chunk left for later (past CHUNK_TERMS) are chunks of a next round."""
    chunks, cur, size = [], [], 0
    for item in todo:
        cur.append(item)
        size += item[-1]
        if size >= CHUNK_BYTES:
            chunks.append(cur)
            cur, size = [], 0
    if cur:
        chunks.append(cur)
    cores = min(2, os.cpu_count() or 1)
    if cores < 2 or len(chunks) < 2 or sum(item[-1] for item in todo) < POOL_BYTES:
        while chunks:
            chunks = yield from _rounds(map(index_chunk, chunks))
        return
    import gc

    from ..workers import imap_unordered

    # (frozen: the collections of the workers — forked, and allocating a chunk's postings —
    # and of the parent then skip the survey's objects; without it each worker's collections
    # walked them all, writing into every page they share with the parent)
    gc.freeze()
    try:
        while chunks:
            chunks = yield from _rounds(imap_unordered(index_chunk, chunks, cores))
    finally:
        gc.unfreeze()


def _rounds(results):
    """Yield :func:`index_chunk`'s ``results`` without the files each left; returns those, as chunks."""
    rest = []
    for *got, left in results:
        yield tuple(got)
        if left:
            rest.append(left)
    return rest


class _Post(list):
    """The ids of the files of the chunk being tokenised that hold ``term`` (see index_chunk);
    equal and hashed by identity, so a file's set of them is built at the cost of its terms'."""

    __slots__ = ("term",)
    __hash__ = object.__hash__
    __eq__ = object.__eq__
    __ne__ = object.__ne__

    def __init__(self, term: bytes):
        super().__init__()
        self.term = term


class _RunPosts(dict):
    """run -> the _Post of its one term (None: it gives none), or for a run with more (see
    :func:`run_terms`) a tuple of them, kept in ``groups``; worked out on a miss. ``posts``:
    term -> its _Post, this process's. (A build's files are mostly words seen before: one dict
    lookup per run, in C, where terms_of works the case and pieces out file by file.)"""

    def __init__(self):
        super().__init__()
        self.groups, self.posts = set(), {}
        self.chars = _CharPosts(self)  # CJK character (str) -> its _Post

    def __missing__(self, run: bytes):
        got = tuple(map(self._post, run_terms(run)))
        if len(got) == 1:
            got = got[0]
        elif got:
            self.groups.add(got)
        else:
            got = None
        self[run] = got
        return got

    def _post(self, term: bytes) -> _Post:
        got = self.posts.get(term)
        if got is None:
            got = self.posts[term] = _Post(term)
        return got

    def of(self, data: bytes) -> set | None:
        """The _Posts of the terms of the file ``data`` (the set terms_of gives, as _Posts);
        None when it has more than MAX_FILE_RUNS distinct runs."""
        runs = runs_of(data, MAX_FILE_RUNS)
        if runs is None:
            return None
        out = set(map(self.__getitem__, runs))
        out.discard(None)
        groups = out & self.groups
        if groups:
            out -= groups
            out.update(chain.from_iterable(groups))
        if not data.isascii():  # (text beyond ASCII: CJK characters, folded spellings — see terms)
            more = unicode_parts(data, MAX_FILE_RUNS)
            if more is None:
                return None
            out.update(map(self.chars.__getitem__, more[0]))
            out.update(map(self._post, more[1]))
        return out


class _CharPosts(dict):
    """A CJK character (str) -> the _Post of its term (its UTF-8), ``runs``' (see _RunPosts)."""

    def __init__(self, runs: _RunPosts):
        super().__init__()
        self.runs = runs

    def __missing__(self, c: str) -> _Post:
        got = self[c] = self.runs._post(c.encode())
        return got


_run_posts = _RunPosts()


def index_chunk(items: list) -> tuple:
    """Read and tokenise ``items`` ((id, path, rel, folder id, size)): (their ``files`` rows,
    their postings as :func:`merge` writes them (see :func:`pack_rows`), bytes read, bytes
    listed, the items left for another chunk). (Run in a worker: the parent is left only the
    inserts. A file's id is appended to the _Post of each of its terms, which _run_posts gives
    per run: no lookup per term.) Memory is bounded: a file of more than MAX_FILE_RUNS
    distinct runs is not tokenised (read directly), and once the chunk holds CHUNK_TERMS
    terms its other files are left."""
    posts = _run_posts.posts
    for ids in filter(None, posts.values()):  # (the last chunk's, or one's that failed midway)
        ids.clear()
    if len(_run_posts) > RUN_CACHE or len(posts) > RUN_CACHE:  # (between files: a group in a
        _run_posts.clear()                                      # file's set must be in ``groups``)
        _run_posts.groups.clear()
        posts.clear()
        _run_posts.chars.clear()  # (its _Posts were posts')
    rows, nbytes, done = [], 0, len(items)
    for k, (fid, path, rel, did, _size) in enumerate(items):
        if k and len(posts) > CHUNK_TERMS:
            done = k
            break
        if len(_run_posts) > RUN_CACHE:  # (runs seen: the chunk's postings stay, in posts)
            _run_posts.clear()
            _run_posts.groups.clear()
        got = read_file(path)
        seen = time.time_ns()
        if got is None:  # (not a regular file, too large: read directly)
            rows.append((fid, rel, did, 0, 0, 0, 0, seen, -1, None))
            continue
        data, st = got
        nbytes += len(data)
        fm, body = body_and_end(data)
        del data
        got = _run_posts.of(body)
        if got is None:  # (too many distinct words: read directly, see MAX_FILE_RUNS)
            rows.append((fid, rel, did, 0, 0, 0, 0, seen, -1, None))
            continue
        rows.append((fid, rel, did, *stat_of(st), seen, 1 if st.st_ctime_ns < seen - RACY_NS else 0, fm))
        deque(map(list.append, got, repeat(fid)), 0)  # (each ids.append(fid), in C)
    packed = pack_rows({ids.term: ids for ids in filter(None, posts.values())})
    if len(posts) > RUN_CACHE:  # (not held while the parent writes them)
        _run_posts.clear()
        _run_posts.groups.clear()
        posts.clear()
        _run_posts.chars.clear()  # (its _Posts were posts')
    return rows, packed, nbytes, sum(item[-1] for item in items[:done]), items[done:]


def _building_file(vault: str) -> str:
    return db_path(vault) + ".building"


def building(vault: str) -> bool:
    """Whether a :func:`build_alone` of ``vault`` is under way (it holds a lock beside the index)."""
    from ..detached import held

    return held(_building_file(vault))


def build_alone(vault: str) -> dict | None:
    """:func:`ensure` (creating the index) unless another build_alone of ``vault`` is under way;
    for the recall hook's background build."""
    import fcntl

    _home.make_private_dirs(os.path.dirname(db_path(vault)))
    fd = os.open(_building_file(vault), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, _home.FILE_MODE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None
        return ensure(vault, create=True)
    finally:
        os.close(fd)


def build_in_background(vault: str) -> bool:
    """Start :func:`build_alone` of ``vault`` in a process of its own — detached, niced, its
    output nowhere — unless one is under way; whether one was started (callers go through
    :func:`chrollo.index.after_search`, which also honours CHROLLO_INDEX=0). For a large vault a search had to read without a usable index: the
    caller (the recall hook above all) never waits minutes for a build."""
    if building(vault):
        return False
    from ..detached import start

    return start("import sys; from chrollo.index.build import background_main; background_main(sys.argv[1:])", vault)


def background_main(argv: list) -> int:
    """The process :func:`build_in_background` starts: it never fails loudly (errors are logged)."""
    try:
        os.nice(10)
        got = build_alone(argv[0])
        if got is not None:  # (what a user — or a test — can see of a build nobody waits for)
            _home.append_log("index", f"background build of {argv[0]}: read {got['read']} files "
                                      f"of {got['files']} in {got['seconds']} s")
    except BaseException as e:  # noqa: BLE001 — nobody reads its output
        if not isinstance(e, KeyboardInterrupt):
            _home.append_log("index", f"background build of {argv[:1]} failed: {type(e).__name__}: {e}")
    return 0


def ensure(vault: str | None, create: bool = False, under: str | None = None) -> dict | None:
    """Bring ``vault``'s index (default: the vault in use) up to date — only under the
    subfolder ``under`` if given — creating it only with ``create``; for install, import and
    mesh sync, which must not fail for it: an error is logged and None returned."""
    try:
        if vault is None:
            from ..vault import memories_path

            vault = memories_path()
        if not os.path.isdir(vault) or not (create or os.path.isfile(db_path(vault))):
            return None
        return build(vault, under=under)
    except Exception as e:  # noqa: BLE001 — searches still work (they scan)
        _home.append_log("index", f"indexing {vault} failed: {type(e).__name__}: {e}")
        return None
