"""The derived, disposable index: which session files may hold a word (docs/index.md).

The markdown files stay the database. This index only narrows what ripgrep reads: for a
query's forms (whole words, inflections, identifier parts, synonyms) it gives the files that
*may* match — a superset — and rg still reads those and produces every row, so ranking and
output are the same code as without it. Deleting it changes no result, only speed.

What it holds (one SQLite file per vault, ``state/index/<key>.sqlite``, stdlib ``sqlite3``):

- ``dirs``: each folder with the mtime it had when its listing was last made ``files``'s
  rows. ``files``: every file of those folders (path relative to the vault, bytes; its folder)
  with the size, mtime, ctime and inode it had when it was read, and ``ok``: whether its
  words are in (0: read it directly — changed, read within RACY_NS of a change, or found by a
  listing; -1: cannot be indexed), and ``fm``: the line its frontmatter ends on
  (fileformat.frontmatter_end_of), which a search would otherwise read each matching file's
  head for. A search stats folders, not files: a folder that moved is
  listed again; in-place edits are found by a sweep of SWEEP files per search (see
  :class:`_Scope`, docs/index.md).
- ``post``: (segment, term) → ids of files holding it (``array('I')``, with a CRC32: a
  damaged row is a damaged index, bypassed); a build writes one segment per chunk of files,
  so nothing is rewritten as it grows. ``delta``: (term, id) rows added since the
  last merge (a turn appended adds a few dozen), folded into ``post`` by ``chrollo index``.
- Terms are what ripgrep's ASCII-mode regex can match (chrollo's regex for ASCII forms is
  ``(?-u:…)``: ASCII word boundaries, ASCII case folding): every maximal ``[A-Za-z0-9_]``
  run, lowercased, and every piece of it that rg's identifier-part alternatives can report
  (see :func:`_pieces`). A form made of several runs (``auth-service``) takes the files
  holding all of them. A query with a non-ASCII form, or a form longer than MAX_TERM, does
  not use the index (a full scan, as before).

Words are only ever added for a file until it is forgotten: a hand edit that removes a word
leaves a stale posting, which costs rg one extra file and never a result. `chrollo forget`
removes the forgotten files' ids from every term their text held and deletes the terms
left with no file (``secure_delete``: the bytes are zeroed, not just unlinked).

Any error — no index, another format or chrollo version, a locked or damaged file — makes
:func:`plan` return None: the caller scans the folder as it always did.
"""
from __future__ import annotations

import os
import re
import time
from array import array
from itertools import chain
from operator import itemgetter

from . import __version__
from . import homedir as _home
from .fileformat import FRONTMATTER_LINES, file_key, frontmatter_end_of, name_time

FORMAT = 6                   # (4: files.fm; 5: ids never reused, a rewritten file takes a new one;
                             # 6: a file's terms are its body's, after the frontmatter;
                             # also bump when fileformat's FRONTMATTER_* limits change)
MAX_TERM = 64                # longer words (hashes, pasted blobs) are not indexed
MIN_TERM = 2                 # (query terms have 2+ letters; identifier parts 3+)
RACY_NS = 200_000_000        # a file changed this close to being read is re-read (mtime ticks)
READ_BUSY_MS = 50            # a search waits this long on a writer, then scans without the index
WRITE_BUSY_MS = 2000
CHUNK_BYTES = 8 << 20        # a build's unit of work: files read, tokenised and written as one segment
POOL_BYTES = 24 << 20        # a build reading more than this tokenises in worker processes
MERGE_DELTA = 200_000        # delta rows past which an update folds them into post
SCAN_SHARE = 0.5             # more candidates than this share of the files: rg walks the folder
# Below this many indexed files a complete search lets rg walk the vault: asking SQLite costs
# about what rg's walk of a few thousand small files does (bench/index.py at 10 MB, 2,452
# files: no faster with the index). The hook still uses it.
MIN_FILES = 5000
SWEEP = 1000                 # indexed files a complete search stats to catch in-place edits
RARE_FILES = 1000            # the recall hook reads the files of a query word this rare first
HOOK_CANDIDATES = 4000       # … and all candidates only if there are no more than this
DEAD_CHECK = 500             # forget drops the ids of vanished files from postings this short
RUN_CACHE = 50_000           # runs whose _Posts a build's tokenising process keeps (a larger dict is slower)
MAX_FILE = 64 << 20          # larger files are left unindexed (searched directly)
VACUUM_MAX = 128 << 20       # forget rewrites an index this small when a word's bytes outlive it (else deletes it)

# files.ok: 1 indexed as its stat says; 0 read directly until read again (changed, racy, or
# found by a folder's listing); -1 cannot be indexed (not a regular file, too large): read
# directly, not retried by updates.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dirs(id INTEGER PRIMARY KEY, rel BLOB UNIQUE NOT NULL,
    mtime INTEGER NOT NULL, seen INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY AUTOINCREMENT, rel BLOB UNIQUE NOT NULL,
    dir INTEGER NOT NULL, size INTEGER, mtime INTEGER, ctime INTEGER, ino INTEGER,
    seen INTEGER, ok INTEGER NOT NULL, fm INTEGER);
CREATE INDEX IF NOT EXISTS files_dir ON files(dir);
CREATE INDEX IF NOT EXISTS files_loose ON files(ok) WHERE ok <> 1;
CREATE TABLE IF NOT EXISTS post(term TEXT, seg INTEGER, ids BLOB NOT NULL, crc INTEGER NOT NULL,
    PRIMARY KEY(seg, term)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS delta(term TEXT, id INTEGER, PRIMARY KEY(term, id)) WITHOUT ROWID;
INSERT OR IGNORE INTO meta VALUES ('gone', '0');
CREATE TRIGGER IF NOT EXISTS files_gone AFTER DELETE ON files
    BEGIN UPDATE meta SET v = CAST(v AS INTEGER) + 1 WHERE k = 'gone'; END;
"""
# (meta 'gone' counts the rows ever deleted — REPLACE's too: writers turn recursive_triggers
# on —, so a reader knows in one lookup whether the rows its .order file lists still are)


def db_path(vault: str) -> str:
    """Where the index of ``vault`` lives (named in chrollo.layout)."""
    from .layout import index_file

    return index_file(vault)


# ----------------------------------------------------------------------------- terms

def _pieces(run: bytes) -> list:
    """The identifier parts rg's regex (rg.words_regex, ``parts``) can find in ``run``,
    lowercased — a superset: ``_part`` then end/``_``/uppercase, a run starting with the part
    then ``_``/uppercase, and ``…[a-z0-9]Part`` then end/``_``/uppercase (case-sensitive)."""
    out = []
    for s in run.split(b"_"):
        if len(s) < 3:
            continue
        out.append(s)  # the whole segment: "_part" then "_" or the end; "part_" at the start
        ups = [i for i, c in enumerate(s) if 65 <= c <= 90]
        for k, i in enumerate(ups):
            if i >= 3:
                out.append(s[:i])  # "_part" / "part" at the start, then an uppercase letter
            if i and (97 <= s[i - 1] <= 122 or 48 <= s[i - 1] <= 57):
                out.append(s[i:ups[k + 1] if k + 1 < len(ups) else len(s)])  # "…xPart"
    return [p.lower() for p in out if 3 <= len(p) <= MAX_TERM]


def _run_terms(run: bytes) -> list:
    """The terms a run gives a file holding it: its lowercase (if MIN_TERM to MAX_TERM long) and,
    for a run with ``_`` in it or a capital after its first character, its :func:`_pieces`.
    (:func:`terms_of` is this over a file's runs, in set operations.)"""
    out = [run.lower()] if MIN_TERM <= len(run) <= MAX_TERM else []
    if b"_" in run or run[1:] != run[1:].lower():
        out += _pieces(run)
    return out


_RUN = re.compile(rb"[A-Za-z0-9_]+")
_RUN_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
# (every byte that cannot be in a run made a space: a file's runs are then what split() gives,
# at a third of the cost of _RUN.findall)
_SPACED = bytes(c if c in _RUN_BYTES else 32 for c in range(256))
_ONE_LETTER = frozenset(bytes([c]) for c in _RUN_BYTES.lower())
# (over the distinct runs joined by spaces: those holding "_")
_UNDERSCORED = re.compile(rb"\b[A-Za-z0-9]*_\w*")


def terms_of(data: bytes) -> set:
    """Every term a file's bytes hold (see the module doc), as ASCII bytes: :func:`_run_terms`
    of each of its runs. (The work is done by C — a translate, a split and set operations over
    the distinct runs; Python computes only the pieces of the runs that have some. No cache: a
    capture's process reads one file; a build's workers use _RunPosts.)"""
    runs = set(data.translate(_SPACED).split())
    joined = b" ".join(runs)
    out = set(joined.lower().split())
    upper = runs - out  # (the runs with a capital; those with one past the first character are
    # the ones capitalize() changes)
    pieceful = upper - set(map(bytes.capitalize, upper))
    if b"_" in joined:
        pieceful.update(_UNDERSCORED.findall(joined))
    for run in pieceful:
        out.update(_pieces(run))
    out -= _ONE_LETTER
    if max(map(len, out), default=0) > MAX_TERM:
        out = {t for t in out if len(t) <= MAX_TERM}
    return out


def body_of(data: bytes, fm: int) -> bytes:
    """A file's bytes after the line ``fm`` its frontmatter ends on (what a file *holds*: its
    properties — a title, tags, the project — are not what was said; the search never counts
    a frontmatter row either)."""
    pos = 0
    for _ in range(fm):
        pos = data.find(b"\n", pos) + 1
        if not pos:
            return b""
    return data[pos:]


def form_terms(form: str) -> list | None:
    """The terms a file must hold all of to match ``form`` (None: the index cannot tell)."""
    if not form.isascii() or len(form) > MAX_TERM:
        return None
    runs = [r.lower() for r in _RUN.findall(form.encode("ascii")) if len(r) >= MIN_TERM]
    return runs or None


def _needed_terms(forms) -> list | None:
    """Each form's index terms (:func:`form_terms`), or None when one form has none (then the
    index cannot narrow the scan)."""
    need = []
    for f in forms:
        t = form_terms(f)
        if t is None:
            return None
        need.append(t)
    return need


# ----------------------------------------------------------------------------- the walk

def walk(folder: str, exclude_peers: bool = False, unsearchable: frozenset = frozenset(),
         dirs: list | None = None) -> list:
    """The files rg searches under ``folder`` with chrollo's globs (``*.md``, ``!peers/`` when
    ``exclude_peers``, ``!**/peers/NAME/**`` for the ``unsearchable`` peers), as
    ``(path bytes, DirEntry)``: hidden folders and symlinks skipped, hidden ``*.md`` files
    kept (rg's ``-g '*.md'`` whitelists them). ``dirs`` gets each folder walked as
    ``(path bytes, its mtime_ns taken before it was listed, when)`` (see :func:`_dir_stamp`)."""
    out = []
    stack = [(os.fsencode(folder), False)]
    while stack:
        d, in_peers = stack.pop()
        stamp = _dir_stamp(d)
        if stamp is None:
            continue
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            try:  # a folder can fail mid-listing (/proc's per-process folders: EINVAL)
                entries = list(it)
            except OSError:
                continue
        if dirs is not None:
            dirs.append((d, *stamp))
        for e in entries:
            name = e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    if name.startswith(b".") or (exclude_peers and name == b"peers") \
                            or (in_peers and os.fsdecode(name) in unsearchable):
                        continue
                    stack.append((e.path, name == b"peers"))
                elif name.endswith(b".md") and e.is_file(follow_symlinks=False):
                    out.append((e.path, e))
            except OSError:
                continue
    return out


def _dir_stamp(path: bytes):
    """(mtime_ns, now) of a folder, taken before it is listed: a name added, removed or renamed
    in it later moves its mtime. None if it is not a folder (a symlink is not)."""
    now = time.time_ns()
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if (st.st_mode & 0o170000) != 0o040000:
        return None
    return st.st_mtime_ns, now


# ----------------------------------------------------------------------------- opening

def _connect(path: str, write: bool, busy_ms: int = READ_BUSY_MS):
    import sqlite3

    if write:
        _home.make_private_dirs(os.path.dirname(path))
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, _home.FILE_MODE)
        os.close(fd)
        con = sqlite3.connect(path, isolation_level=None, timeout=busy_ms / 1000)
    else:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None,
                              timeout=READ_BUSY_MS / 1000)
    con.execute("PRAGMA secure_delete=ON")
    if write:
        # (WAL: a commit appends to -wal without an fsync — capture's per-turn cost; a crash
        # loses at most the last commits, never atomicity. Forget checkpoints and truncates
        # the -wal so no old page outlives it: see forget and docs/index.md)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute("PRAGMA recursive_triggers=ON")
    return con


def _checkpoint(con) -> None:
    """Copy every page of the -wal into the index and truncate the -wal to nothing (forget:
    the old copies of a forgotten word's pages must not stay there). Raises if a reader kept
    it from completing."""
    busy, _log, _done = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        raise RuntimeError("a reader kept the index's -wal from being checkpointed")


def _compatible(con) -> bool:
    try:
        meta = dict(con.execute("SELECT k, v FROM meta"))
    except Exception:  # noqa: BLE001 — no table, damaged file: not ours
        return False
    return meta.get("format") == str(FORMAT) and meta.get("version") == __version__ \
        and meta.get("complete") == "1"


def open_reader(vault: str):
    """A read-only connection to ``vault``'s index, or None when there is none usable."""
    path = db_path(vault)
    if not os.path.isfile(path):
        return None
    try:
        con = _connect(path, write=False)
        if _compatible(con):
            return con
        con.close()
    except Exception:  # noqa: BLE001
        pass
    return None


def _open_writer(vault: str, fresh: bool = False, busy_ms: int = WRITE_BUSY_MS):
    """A writable connection; an index of another format or version, or a damaged one, is
    deleted first and started afresh (a build then fills it)."""
    path = db_path(vault)
    if fresh:
        remove(vault)
    con = _connect(path, write=True, busy_ms=busy_ms)
    try:
        meta = dict(con.execute("SELECT k, v FROM meta"))
    except Exception:  # noqa: BLE001 — no table yet (new) or a damaged file
        meta = None if os.path.getsize(path) else {}
    if meta is None or (meta and (meta.get("format"), meta.get("version")) != (str(FORMAT), __version__)):
        con.close()
        remove(vault)
        con = _connect(path, write=True, busy_ms=busy_ms)
    con.executescript(_SCHEMA)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?), ('version', ?), ('vault', ?), ('complete', '1')",
                (str(FORMAT), __version__, os.path.realpath(vault)))
    return con


def remove(vault: str) -> None:
    """Delete ``vault``'s index and SQLite's side files (never raises)."""
    path = db_path(vault)
    for p in (path, path + "-journal", path + "-wal", path + "-shm", path + ".sweep", path + ".order"):
        try:
            os.unlink(p)
        except OSError:
            pass


# ----------------------------------------------------------------------------- reading a file

def _read(path: bytes):
    """(bytes, stat taken before reading) of a regular file, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or st.st_size > MAX_FILE:
            return None
        chunks, left = [], st.st_size
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        return b"".join(chunks), st
    except OSError:
        return None
    finally:
        os.close(fd)


def _fresh(row, st) -> bool:
    """Whether a file stat'ed as ``st`` is what its ``files`` row (size, mtime, ctime, ino,
    seen, ok) says was read and indexed."""
    size, mtime, ctime, ino, _seen, ok = row
    return ok == 1 and st.st_size == size and st.st_mtime_ns == mtime and st.st_ctime_ns == ctime \
        and st.st_ino == ino


def _rel(vault_b: bytes, path: bytes) -> bytes | None:
    if path.startswith(vault_b + b"/"):
        return path[len(vault_b) + 1:]
    return None


# ----------------------------------------------------------------------------- building

def build(vault: str, rebuild: bool = False, progress=None, under: str | None = None) -> dict:
    """Index every file of ``vault`` not indexed as it is now (every file with ``rebuild``);
    returns a summary (``terms_read``: the distinct terms of the files read now; counting the
    whole index's would scan every posting). ``progress(done_bytes, total_bytes)`` is called
    as it goes. Files gone since are dropped, pending increments merged. Work is committed in steps: a build killed
    midway leaves an index that is correct for what it holds (the rest is unindexed).
    ``under`` (a subfolder of the vault, e.g. "peers"): look at that part of it only.
    A damaged index is deleted and built afresh; one another writer holds is a ChrolloError."""
    import sqlite3

    from .errors import ChrolloError

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
    from .errors import ChrolloError

    return ChrolloError("index_unwritable", f"the search index could not be written ({e})",
                        "Free some disk space (or make the index's folder writable) and run `chrollo index` "
                        "again; until then searches read the files, with the same results.")


def _build(vault: str, rebuild: bool, progress, under: str | None) -> dict:
    t0 = time.monotonic()
    vault = os.path.realpath(vault)
    vb = os.fsencode(vault)
    con = _open_writer(vault, fresh=rebuild)
    try:
        con.execute("BEGIN IMMEDIATE")
        todo, dirs, gone = _survey(con, vb, under)
        total = sum(item[-1] for item in todo)
        done_bytes = read = 0
        words: set = set()
        for rows, postings, nbytes, size in _tokenised(todo):
            con.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            _merge(con, postings)
            words.update(map(itemgetter(0), postings))
            con.execute("COMMIT")  # (killed later, the index is right for what it holds)
            con.execute("BEGIN IMMEDIATE")
            done_bytes += size
            read += nbytes
            if progress is not None:
                progress(done_bytes, total)
        _fold_delta(con)
        # (the folders last: a folder's record says its listing is all in files)
        con.executemany("INSERT OR REPLACE INTO dirs(id, rel, mtime, seen) VALUES (?,?,?,?)", dirs)
        con.execute("COMMIT")
        files = con.execute("SELECT count(*) FROM files").fetchone()[0]
        _write_order(con, vault)  # (so no search, and no recall hook, has to)
    finally:
        con.close()
    secs = time.monotonic() - t0
    return {"vault": vault, "index": db_path(vault), "files": files, "read": len(todo),
            "bytes_read": read, "dropped": len(gone), "terms_read": len(words),
            "index_bytes": _size(vault), "seconds": round(secs, 3),
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
        rel = _rel(vb, d) or b""
        i = known.pop(rel, None)
        if i is None:
            i, next_dir = next_dir, next_dir + 1
        dir_id[d] = i
        dirs.append((i, rel, mtime, seen))
    gone_dirs = [i for rel, i in known.items() if mine(rel)]
    for k in range(0, len(gone_dirs), 500):
        chunk = gone_dirs[k:k + 500]
        con.execute(f"DELETE FROM dirs WHERE id IN ({','.join('?' * len(chunk))})", chunk)
    next_id = _next_id(con)
    todo, here, cut = [], set(), len(vb) + 1
    for path, e in found:
        rel = path[cut:]  # (every path found is under the vault; its folder is what walk listed)
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        here.add(rel)
        got = rows.get(rel)
        if got is not None and _fresh(got[1:], st):
            continue
        # (a changed file takes a new id: the postings of its old words name the old one, which
        # no row holds any more, so what the index says a file holds is what it holds now)
        fid, next_id = next_id, next_id + 1
        todo.append((fid, path, rel, dir_id[path[:path.rindex(b"/")]], st.st_size))
    gone = [r[0] for rel, r in rows.items() if rel not in here]
    _drop_ids(con, gone)
    return todo, dirs, gone


def _tokenised(todo: list):
    """``todo``'s files read and tokenised, a chunk of about CHUNK_BYTES at a time (see
    :func:`_index_chunk`); in worker processes, one per core, for a large build."""
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
        yield from map(_index_chunk, chunks)
        return
    import gc

    from .workers import imap_unordered

    # (frozen: the collections of the workers — forked, and allocating a chunk's postings —
    # and of the parent then skip the survey's objects; without it each worker's collections
    # walked them all, writing into every page they share with the parent)
    gc.freeze()
    try:
        yield from imap_unordered(_index_chunk, chunks, cores)
    finally:
        gc.unfreeze()


class _Post(list):
    """The ids of the files of the chunk being tokenised that hold ``term`` (see _index_chunk);
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
    :func:`_run_terms`) a tuple of them, kept in ``groups``; worked out on a miss. ``posts``:
    term -> its _Post, this process's. (A build's files are mostly words seen before: one dict
    lookup per run, in C, where terms_of works the case and pieces out file by file.)"""

    def __init__(self):
        super().__init__()
        self.groups, self.posts = set(), {}

    def __missing__(self, run: bytes):
        got = tuple(map(self._post, _run_terms(run)))
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

    def of(self, data: bytes) -> set:
        """The _Posts of the terms of the file ``data`` (the set terms_of gives, as _Posts)."""
        out = set(map(self.__getitem__, data.translate(_SPACED).split()))
        out.discard(None)
        groups = out & self.groups
        if groups:
            out -= groups
            out.update(chain.from_iterable(groups))
        return out


_run_posts = _RunPosts()


def _index_chunk(items: list) -> tuple:
    """Read and tokenise ``items`` ((id, path, rel, folder id, size)): (their ``files`` rows,
    their postings as :func:`_merge` writes them (see :func:`_packed`), bytes read, bytes
    listed). (Run in a worker: the parent is left only the inserts. A file's id is appended to
    the _Post of each of its terms, which _run_posts gives per run: no lookup per term.)"""
    posts = _run_posts.posts
    for ids in filter(None, posts.values()):  # (the last chunk's, or one's that failed midway)
        ids.clear()
    if len(_run_posts) > RUN_CACHE:  # (between chunks, so between files: a group in a file's
        _run_posts.clear()           # set must be in ``groups``)
        _run_posts.groups.clear()
        posts.clear()
    rows, nbytes = [], 0
    for fid, path, rel, did, _size in items:
        got = _read(path)
        seen = time.time_ns()
        if got is None:  # (not a regular file, too large: read directly)
            rows.append((fid, rel, did, 0, 0, 0, 0, seen, -1, None))
            continue
        data, st = got
        nbytes += len(data)
        fm = frontmatter_end_of(data)
        rows.append((fid, rel, did, *_stat_of(st), seen, 1 if st.st_ctime_ns < seen - RACY_NS else 0, fm))
        for ids in _run_posts.of(body_of(data, fm)):
            ids.append(fid)
    return rows, _packed({ids.term: ids for ids in filter(None, posts.values())}), nbytes, \
        sum(item[-1] for item in items)


def _stat_of(st) -> tuple:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _building_file(vault: str) -> str:
    return db_path(vault) + ".building"


def building(vault: str) -> bool:
    """Whether a :func:`build_alone` of ``vault`` is under way (it holds a lock beside the index)."""
    import fcntl

    try:
        fd = os.open(_building_file(vault), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


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
    output nowhere — unless one is under way or indexes are off (CHROLLO_INDEX=0); whether
    one was started. For a large vault a search had to read without a usable index: the
    caller (the recall hook above all) never waits minutes for a build."""
    if os.environ.get("CHROLLO_INDEX") == "0" or building(vault):
        return False
    import subprocess
    import sys

    code = "import sys; from chrollo.index import background_main; background_main(sys.argv[1:])"
    subprocess.Popen([sys.executable, "-c", code, vault], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    return True


def background_main(argv: list) -> int:
    """The process :func:`build_in_background` starts: it never fails loudly (errors are logged)."""
    try:
        os.nice(10)
        build_alone(argv[0])
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
            from .vault import memories_path

            vault = memories_path()
        if not os.path.isdir(vault) or not (create or os.path.isfile(db_path(vault))):
            return None
        return build(vault, under=under)
    except Exception as e:  # noqa: BLE001 — searches still work (they scan)
        _home.append_log("index", f"indexing {vault} failed: {type(e).__name__}: {e}")
        return None


def _put_file(con, rel: bytes, did: int, st, fm: int) -> int:
    """Record ``rel`` (in folder ``did``, its frontmatter ending on line ``fm``) as read with
    stat ``st`` (now); its id. A file changed this close to being read is left to read
    directly until read again (RACY_NS)."""
    seen = time.time_ns()
    ok = 1 if st.st_ctime_ns < seen - RACY_NS else 0
    row = con.execute("SELECT id, ok, size, fm FROM files WHERE rel = ?", (rel,)).fetchone()
    if row and row[1] == 1 and row[2] <= st.st_size and row[3] == fm:
        # (indexed as it was and grown since: a turn appended, whose words only add to its own)
        con.execute("UPDATE files SET dir=?, size=?, mtime=?, ctime=?, ino=?, seen=?, ok=?, fm=? WHERE id=?",
                    (did, *_stat_of(st), seen, ok, fm, row[0]))
        return row[0]
    if row:  # (rewritten, or never read: a new id, so no posting of a word it lost names it)
        con.execute("DELETE FROM files WHERE id = ?", (row[0],))
    return con.execute("INSERT INTO files(rel, dir, size, mtime, ctime, ino, seen, ok, fm) VALUES (?,?,?,?,?,?,?,?,?)",
                       (rel, did, *_stat_of(st), seen, ok, fm)).lastrowid


def _next_id(con) -> int:
    """The next file id: never one a row held before (AUTOINCREMENT's sequence, or past the
    ids a build wrote itself)."""
    seq = con.execute("SELECT seq FROM sqlite_sequence WHERE name = 'files'").fetchone()
    return max(seq[0] if seq else 0, con.execute("SELECT max(id) FROM files").fetchone()[0] or 0) + 1


def _size(vault: str) -> int:
    try:
        return os.path.getsize(db_path(vault))
    except OSError:
        return 0


def _drop_ids(con, ids: list) -> None:
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        q = ",".join("?" * len(chunk))
        con.execute(f"DELETE FROM files WHERE id IN ({q})", chunk)


def _next_seg(con) -> int:
    got = con.execute("SELECT v FROM meta WHERE k = 'seg'").fetchone()
    seg = int(got[0]) + 1 if got else 1
    con.execute("INSERT OR REPLACE INTO meta VALUES ('seg', ?)", (str(seg),))
    return seg


def _packed(postings: dict) -> list:
    """``postings`` (term bytes → file ids, a list) as post's rows: (term, ids as
    ``array('I')`` bytes, their CRC32), in term order (a segment is then appended page after
    page)."""
    import zlib

    rows = []
    for t in sorted(postings):
        ids = array("I")
        ids.fromlist(postings[t])  # (a third of array("I", a _Post)'s time: no generic sequence walk)
        blob = ids.tobytes()
        rows.append((t.decode("ascii"), blob, zlib.crc32(blob)))
    return rows


def _merge(con, packed: list) -> None:
    """Write ``packed`` (:func:`_packed`'s rows) into post as a new segment."""
    if packed:
        con.executemany(f"INSERT INTO post(term, seg, ids, crc) VALUES (?1, {_next_seg(con):d}, ?2, ?3)", packed)


def _fold_delta(con) -> None:
    """Fold the delta rows into post (one new segment)."""
    by: dict = {}
    for t, i in con.execute("SELECT term, id FROM delta"):
        by.setdefault(t.encode("ascii"), []).append(i)
    _merge(con, _packed(by))
    con.execute("DELETE FROM delta")


def _post_rows(con, words: list, what: str = "term, ids, crc"):
    """``what`` of the post rows of ``words`` (strings), every segment's. (post's key is
    (segment, term): a build appends a segment at the end of the table instead of inserting
    into every page; a lookup probes each segment.)"""
    got = con.execute("SELECT v FROM meta WHERE k = 'seg'").fetchone()
    q = ",".join("?" * len(words))
    return con.execute(f"WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?) "
                       f"SELECT {what} FROM s JOIN post ON post.seg = s.n AND post.term IN ({q})",
                       (int(got[0]) if got else 0, *words))


def _ids(blob: bytes) -> array:
    a = array("I")
    a.frombytes(blob)
    return a


# ----------------------------------------------------------------------------- keeping in step

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
        con = _connect(db_path(vault), write=True, busy_ms=busy_ms)
        try:
            if not _compatible(con):
                return
            con.execute("BEGIN IMMEDIATE")
            rels = [r for r in (_rel(vb, os.fsencode(os.path.realpath(p))) for p in paths) if r is not None]
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
                _fold_delta(con)
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
        if not _relist_up(con, vb, rel.rpartition(b"/")[0]):
            return 0
        row = con.execute("SELECT dir FROM files WHERE rel = ?", (rel,)).fetchone()
        if row is None:
            return 0
    path = vb + b"/" + rel
    got = _read(path)
    if got is None:
        if os.path.lexists(path):
            con.execute("UPDATE files SET ok = -1 WHERE rel = ?", (rel,))
        else:
            con.execute("DELETE FROM files WHERE rel = ?", (rel,))
        return 0
    data, st = got
    fm = frontmatter_end_of(data)
    fid = _put_file(con, rel, row[0], st, fm)
    return con.executemany("INSERT OR IGNORE INTO delta VALUES (?, ?)",
                           ((t.decode("ascii"), fid) for t in terms_of(body_of(data, fm)))).rowcount


def _relist_up(con, vb: bytes, drel: bytes) -> bool:
    """List again the nearest folder at or above ``drel`` the index has a record of."""
    while True:
        row = con.execute("SELECT id FROM dirs WHERE rel = ?", (drel,)).fetchone()
        if row is not None:
            _relist(con, vb, row[0], drel)
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


def _listing(path: bytes):
    """One folder as rg would see it: ((mtime_ns, now) taken before listing, {name: inode} of
    its ``*.md`` regular files, [its subfolders' names, hidden ones left out]), or None."""
    stamp = _dir_stamp(path)
    if stamp is None:
        return None
    files, subs = {}, []
    try:
        with os.scandir(path) as it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        if not e.name.startswith(b"."):
                            subs.append(e.name)
                    elif e.name.endswith(b".md") and e.is_file(follow_symlinks=False):
                        files[e.name] = e.inode()
                except OSError:
                    continue
    except OSError:
        return None
    return stamp, files, subs


def _relist(con, vb: bytes, did: int, drel: bytes) -> None:
    """Make folder ``did``'s rows its listing now: names gone are dropped, new names (and
    names now another file: an editor's atomic save) are read directly until indexed, new
    subfolders are recorded with all their files; then its record is renewed."""
    path = vb + b"/" + drel if drel else vb
    got = _listing(path)
    if got is None:
        con.execute("DELETE FROM dirs WHERE id = ?", (did,))
        return
    (mtime, seen), names, subs = got
    gone = []
    for fid, rel, ino in con.execute("SELECT id, rel, ino FROM files WHERE dir = ?", (did,)).fetchall():
        i = names.pop(rel.rpartition(b"/")[2], None)
        if i is None:
            gone.append(fid)
        elif i != ino:
            con.execute("UPDATE files SET ok = 0 WHERE id = ? AND ok = 1", (fid,))
    _drop_ids(con, gone)
    base = drel + b"/" if drel else b""
    _add_loose(con, did, [(base + n, i) for n, i in names.items()])
    known = {r[0] for r in con.execute("SELECT rel FROM dirs")}
    for sub in subs:
        if base + sub not in known:
            walked: list = []
            found = walk(os.fsdecode(path + b"/" + sub), dirs=walked)
            ids = {}
            for d, m, s in walked:
                r = _rel(vb, d)
                ids[d] = con.execute("INSERT OR REPLACE INTO dirs(rel, mtime, seen) VALUES (?,?,?)",
                                     (r, m, s)).lastrowid
            for p, e in found:
                _add_loose(con, ids[os.path.dirname(p)], [(_rel(vb, p), e.inode())])
    con.execute("UPDATE dirs SET mtime = ?, seen = ? WHERE id = ?", (mtime, seen, did))


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
    import zlib

    try:
        vault = os.path.realpath(vault)
        vb = os.fsencode(vault)
        con = _connect(db_path(vault), write=True, busy_ms=WRITE_BUSY_MS * 5)
        try:
            con.execute("BEGIN IMMEDIATE")
            ids, terms = set(), set()
            for p, data in contents.items():
                rel = _rel(vb, os.fsencode(os.path.realpath(p)))
                row = rel is not None and con.execute("SELECT id FROM files WHERE rel = ?", (rel,)).fetchone()
                if row:
                    ids.add(row[0])
                terms |= terms_of(body_of(data, frontmatter_end_of(data)))  # (what its postings hold)
            _drop_ids(con, sorted(ids))
            if ids:
                words = sorted(t.decode("ascii") for t in terms)
                for i in range(0, len(words), 500):
                    chunk = words[i:i + 500]
                    q = ",".join("?" * len(chunk))
                    rows = []
                    for t, seg, blob in _post_rows(con, chunk, "term, seg, ids").fetchall():
                        left = array("I", (x for x in _ids(blob) if x not in ids))
                        if len(left) <= DEAD_CHECK:  # (ids of files gone by other means count for nothing)
                            live = sorted(set(left))
                            q2 = ",".join("?" * len(live))
                            live = {r[0] for r in con.execute(f"SELECT id FROM files WHERE id IN ({q2})", live)}
                            left = array("I", (x for x in left if x in live))
                        if left:
                            b = left.tobytes()
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
            gone = _unheld(con, terms)
            con.execute("COMMIT")
            _checkpoint(con)
        finally:
            con.close()
        if gone and _residue(vault, gone):
            # (a cell SQLite moved while rebalancing a page can leave its old copy in the page's
            # free space, which secure_delete does not zero: VACUUM rewrites every page)
            if _size(vault) > VACUUM_MAX:
                raise RuntimeError("a forgotten word's bytes are still in the index's files")
            con = _connect(db_path(vault), write=True, busy_ms=WRITE_BUSY_MS * 5)
            try:
                con.execute("VACUUM")
                _checkpoint(con)
            finally:
                con.close()
            if _residue(vault, gone):
                raise RuntimeError("a forgotten word's bytes are still in the index's files after VACUUM")
    except Exception as e:  # noqa: BLE001
        _home.append_log("index", f"forget could not edit the index ({type(e).__name__}: {e}); deleted it")
        remove(vault)


def _unheld(con, terms: set) -> list:
    """The ``terms`` no row of the index holds any more (forgotten with nothing else holding them)."""
    words = sorted(t.decode("ascii") for t in terms)
    held = set()
    for i in range(0, len(words), 500):
        chunk = words[i:i + 500]
        held.update(t for (t,) in _post_rows(con, chunk, "DISTINCT term"))
        q = ",".join("?" * len(chunk))
        held.update(t for (t,) in con.execute(f"SELECT DISTINCT term FROM delta WHERE term IN ({q})", chunk))
    return [w.encode("ascii") for w in words if w not in held]


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


# ----------------------------------------------------------------------------- searching

class Plan:
    """What a search reads with the index's help: ``paths`` (the candidate files plus every
    file the index cannot vouch for; None: most files are, rg walks the folder), ``files``
    (how many files rg would have searched), ``stale`` (how many were read directly),
    ``fm_ends``: path -> the line its frontmatter ends on, for the files among them the index
    vouches for (the collector reads no head for those; see fileformat.frontmatter_end)."""

    def __init__(self, paths: list | None, files: int, stale: int, candidates: int, fm_ends: dict):
        self.paths, self.files, self.stale, self.candidates = paths, files, stale, candidates
        self.fm_ends = fm_ends


def plan(vault: str, folder: str, forms: list, exclude_peers: bool = False,
         unsearchable: frozenset = frozenset(), memo: dict | None = None) -> Plan | None:
    """The files a scan of ``folder`` for ``forms`` must read (None: let rg walk the folder).

    No file is stat'ed for it but a slice of SWEEP (see :class:`_Scope`): folders are, and a
    folder whose mtime moved is listed. ``memo`` (a dict a search keeps for its passes)
    spares doing that twice. When most files may hold a form, the plan's ``paths`` is None
    (rg walks the folder) and its ``fm_ends`` holds every vouched file's, once per search.
    """
    need = _needed_terms(forms)
    if need is None:
        return None
    memo = {} if memo is None else memo
    key = ("scope", folder, exclude_peers, unsearchable)
    con = open_reader(vault)
    if con is None:
        return None
    try:
        if MIN_FILES and memo.get("files") is None:  # (a small vault: nothing to stat or list)
            memo["files"] = con.execute("SELECT count(*) FROM files").fetchone()[0]
        if memo.get("files", MIN_FILES) < MIN_FILES:
            return None
        scope = memo.get(key)
        if scope is None:
            scope = memo[key] = _Scope.of(con, os.path.realpath(vault), folder, exclude_peers, unsearchable) \
                or False
        if not scope or scope.files < MIN_FILES:
            return None
        try:
            cand = _candidates(con, need, most=int(SCAN_SHARE * scope.files))
            if cand is None:
                return None
            paths, fm_ends = scope.paths(con, cand)
        except _Many:
            cand, paths = (), None
        if paths is not None and len(paths) > SCAN_SHARE * scope.files:
            paths = None  # most files: rg's own walk is faster than a list of them
        if paths is None:
            fm_ends = {} if memo.get(("fm_ends", key)) else scope.vouched(con, folder)
            memo[("fm_ends", key)] = True
    except Exception:  # noqa: BLE001 — locked, damaged: rg walks as before
        return None
    finally:
        con.close()
    return Plan(None if paths is None else [os.fsdecode(p) for p in paths], scope.files, len(scope.direct),
                len(cand), fm_ends)


def _in_scope(rel: bytes, top: bytes, exclude_peers: bool, unsearchable: frozenset) -> bool:
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


class _Scope:
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
        top = b"" if fb == vb else _rel(vb, fb)
        dirs = con.execute("SELECT id, rel, mtime, seen FROM dirs").fetchall()
        if top is None or not any(rel == top for _i, rel, _m, _s in dirs):
            return None  # (a folder the index never listed)
        s, moved = cls(vb), []
        known = {rel for _i, rel, _m, _s in dirs}
        for did, rel, mtime, seen in dirs:
            if not _in_scope(rel, top, exclude_peers, unsearchable):
                continue
            stamp = _dir_stamp(vb + b"/" + rel if rel else vb)
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
        got = _listing(path)
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
            if base + sub not in known and _in_scope(base + sub, top, exclude_peers, unsearchable):
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
                if ok == 1 and fm is not None and _unchanged(p, stat):
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
            if (did in trusted or fid in alive) and _unchanged(pre + rel, stat):
                fm_ends[pre + rel] = fm
        for p in self.direct:
            fm_ends.pop(p, None)
        return fm_ends


def _unchanged(path: bytes, stat: list) -> bool:
    """Whether ``path``'s (size, mtime, ctime, inode) are still ``stat`` (a row's): a frontmatter
    end is taken from the index only then — rg reads every file as it is now, and an in-place
    edit the verification sweep has not reached yet must not move where its rows start (an
    lstat is a tenth of reading the head)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino] == stat


def _sweep_file(vault: str) -> str:
    return db_path(vault) + ".sweep"


def _sweep(con, vault: str, scope: _Scope) -> None:
    """Stat the next SWEEP indexed files (by id, round the vault): one changed since it was
    indexed is read directly by this search and marked so in the index (then every search
    reads it until it is indexed again); the position is kept beside the index. A full round
    takes files / SWEEP complete searches."""
    try:
        with open(_sweep_file(vault)) as fh:
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
            tmp = _sweep_file(vault) + f".{os.getpid()}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, _home.FILE_MODE)
            with os.fdopen(fd, "w") as fh:
                fh.write(str(rows[-1][0]))
            os.replace(tmp, _sweep_file(vault))
        except OSError:
            pass


def _mark_stale(vault: str, ids: list) -> bool:
    """Mark files found changed as read directly until indexed again; False if the index is
    busy (the slice is then verified again by the next search)."""
    try:
        con = _connect(db_path(vault), write=True, busy_ms=0)
        try:
            con.execute("BEGIN IMMEDIATE")
            con.executemany("UPDATE files SET ok = 0 WHERE id = ?", [(i,) for i in ids])
            con.execute("COMMIT")
        finally:
            con.close()
        return True
    except Exception:  # noqa: BLE001
        return False


class _Many(Exception):
    """A form's files number more than the caller can use (see _candidates' ``most``)."""


def _candidates(con, need: list, groups: list | None = None, most: int | None = None) -> set | None:
    """The ids of the files that may hold every term of one of ``need``'s term lists
    (``groups`` gets each list's own set). With ``most``: a list whose files number more is
    not decoded (turning 250,000 ids into a set costs the hook its deadline): raises _Many
    without ``groups``; with ``groups`` it is left out of the union and its set is None."""
    blobs = _postings(con, sorted({t for ts in need for t in ts}))
    if blobs is None:
        return None  # a damaged row: not to be trusted
    size = {t: sum(map(len, bs)) // 4 for t, bs in blobs.items()}
    found: dict = {}

    def ids_of(t: bytes) -> set:
        got = found.get(t)
        if got is None:
            got = found[t] = set()
            for b in blobs.get(t, ()):
                got.update(_ids(b))
        return got

    cand: set = set()
    for ts in need:
        if most is not None and min(size.get(t, 0) for t in ts) > most:
            if groups is None:
                raise _Many()
            groups.append(None)
            continue
        got = ids_of(ts[0])
        for t in ts[1:]:
            got = got & ids_of(t)
        cand |= got
        if groups is not None:
            groups.append(got)
    return cand


def status(vault: str) -> dict:
    """How much of ``vault`` is indexed: files indexed as they are now, files in the vault,
    the index's size (for doctor and stats)."""
    vault = os.path.realpath(vault)
    out = {"index": db_path(vault), "exists": os.path.isfile(db_path(vault)), "usable": False,
           "files": 0, "indexed": 0, "index_bytes": _size(vault)}
    vb = os.fsencode(vault)
    files = walk(vault)
    out["files"] = len(files)
    con = open_reader(vault)
    if con is None:
        return out
    try:
        rows = {rel: row for rel, *row in con.execute("SELECT rel, size, mtime, ctime, ino, seen, ok FROM files")}
        out["usable"] = True
    except Exception:  # noqa: BLE001
        return out
    finally:
        con.close()
    for path, e in files:
        row = rows.get(_rel(vb, path))
        try:
            if row is not None and _fresh(row, e.stat(follow_symlinks=False)):
                out["indexed"] += 1
        except OSError:
            pass
    return out


class NewestPlan:
    """The batches of a search with a deadline, with the index (see :func:`newest_plan`):
    iterating it yields the newest files first, then asks the index for the rest (its SQL
    must not delay the newest, and is skipped once ``stop`` — a time.monotonic() — is past);
    ``done`` once all were taken; ``total`` files in scope; ``ruled_out`` of them the index
    says hold no form (not read); ``fm_ends`` (a dict to fill: the collector's) gets the
    frontmatter ends of the files past the newest it names (path bytes -> line, see Plan)."""

    def __init__(self, first: list, later, fallback, total: int, first_size: int):
        self.first, self.later, self.fallback = first, later, fallback
        self.total, self.first_size = total, first_size
        self.ruled_out, self.fm_ends, self.stop = 0, {}, None
        self.done = False

    def __iter__(self):
        size = self.first_size
        if self.first:
            yield self.first
        if self.stop is not None and time.monotonic() >= self.stop:
            return
        got = self.later(self.stop)
        if got is None:  # (the index failed, or the deadline passed: newest first, as without it)
            yield from self.fallback()
            return
        rest, older, ruled_out, covers_all, fm_ends = got
        self.fm_ends.update(fm_ends)
        while rest:
            size *= 4
            yield rest[:size]
            rest = rest[size:]
        if older is not None:
            yield from older()
        self.ruled_out, self.done = ruled_out, covers_all


def _to_path(folder: str):
    sep = folder + os.sep
    return lambda k: sep + k.rpartition("\0")[2]


def newest_plan(folder: str, forms: list, newest: list, total: int, include_peers: bool,
                first: int, older_batches, fallback) -> NewestPlan | None:
    """The recall hook's files, with ``folder``'s index: the newest ``first`` of ``newest``
    (listing.cached keys, newest first; ``total`` files in all) as without an index, then the
    files the index says may hold one of ``forms`` plus those not in it, newest first.

    The hook trusts the index for files past the newest ``first`` (it stats none of them:
    a file edited in place since it was indexed is read only if it is a candidate; `chrollo
    search` checks every file). Files older than ``newest`` that the index does not hold are
    listed and read last (``older_batches(keys)``). None: no usable index, scan as before;
    ``fallback()``: the batches past the newest without it, should the index fail after them.
    """
    need = _needed_terms(forms)
    if need is None:
        return None
    con = open_reader(folder)
    if con is None:
        return None
    con.close()
    to_path = _to_path(folder)
    return NewestPlan([to_path(k) for k in newest[:first]],
                      lambda stop: _newest_rest(folder, need, newest, total, include_peers, first,
                                                older_batches, stop),
                      fallback, total, first)


def _newest_rest(folder: str, need: list, newest: list, total: int, include_peers: bool, first: int,
                 older_batches, stop: float | None = None):
    """The part of :func:`newest_plan` past the newest ``first``: (paths, newest first — the
    rare words' files, then the other candidates and the files the index does not hold —,
    the batches of older files to list or None, how many the index rules out, whether that
    covers every file, the frontmatter ends of the named files); None if the index fails or
    ``stop`` (a time.monotonic()) passes between its steps (on a loaded machine its SQL alone
    can take a deadline's length)."""

    def late() -> bool:
        return stop is not None and time.monotonic() >= stop

    con = open_reader(folder)
    if con is None:
        return None
    try:
        import json

        indexed = con.execute("SELECT count(*) FROM files").fetchone()[0]
        rare_max = max(RARE_FILES, indexed // 50)
        groups: list = []
        cand = _candidates(con, need, groups, most=max(HOOK_CANDIDATES, rare_max))
        if cand is None or late():
            return None
        # Files holding the query's rare words come first (they weigh most in the ranking and
        # are few); then the other candidates, newest first.
        rare = set().union(*(g for g in groups if g is not None and len(g) <= rare_max))
        # Most files hold one of the words (a name, a common word): the hook could not read
        # them all anyway — after the rare words' files it goes on newest first, as without
        # an index.
        big = len(cand) > HOOK_CANDIDATES or None in groups
        head = newest[:first]
        missing: set = set()
        if total != indexed:
            # (the names of the listing the index does not hold, in one statement; a name
            # that is not valid UTF-8 simply counts as not held)
            missing = {r[0] for r in con.execute(
                "SELECT value FROM json_each(?) WHERE NOT EXISTS "
                "(SELECT 1 FROM files WHERE rel = CAST(value AS BLOB))",
                (json.dumps([k.rpartition("\0")[2] for k in newest[first:]]),))}
        rels = con.execute("SELECT id, rel, CASE ok WHEN 1 THEN fm END, size, mtime, ctime, ino FROM files "
                           "WHERE id IN (SELECT value FROM json_each(?))",
                           (json.dumps(sorted(rare if big else cand)),)).fetchall()
        # (files the index holds but does not vouch for are read like those it does not hold)
        rels += [(None, rel, None, None, None, None, None)
                 for (rel,) in con.execute("SELECT rel FROM files WHERE ok <> 1")]
    except Exception:  # noqa: BLE001
        return None
    finally:
        con.close()
    if late():
        return None
    in_head = set(head)
    keys = {k for k in newest[first:] if k.rpartition("\0")[2] in missing} if missing else set()
    first_keys = set()
    # (the frontmatter ends of the files past the newest whose stat the index vouches for:
    # the collector reads no head for those)
    fm_ends, pre = {}, os.fsencode(folder) + b"/"
    for fid, rel, fm, *stat in rels:
        parts = rel.split(b"/")
        if len(parts) > 1 and (any(p.startswith(b".") for p in parts[:-1])
                               or (not include_peers and parts[0] == b"peers")):
            continue
        name = os.fsdecode(parts[-1])
        k = name if len(parts) == 1 else f"{name}\0{os.fsdecode(rel)}"
        if k not in in_head:
            (first_keys if fid in rare else keys).add(k)
            if fm is not None and _unchanged(pre + rel, stat):
                fm_ends[pre + rel] = fm
    rest = sorted(first_keys, reverse=True) + sorted(keys - first_keys, reverse=True)
    to_path = _to_path(folder)
    if big:
        seen = in_head.union(first_keys, keys)
        rest_all = [k for k in newest[first:] if k not in seen]
        return [to_path(k) for k in rest], lambda: older_batches(rest_all), 0, False, fm_ends
    older = None
    if total > indexed + len(missing):
        # (files older than the cached listing that the index does not hold: list them)
        oldest = min(newest) if newest else None

        def older():
            from . import listing as _listing

            keys_all = [k for k in _listing.session_files(folder, include_peers)
                        if oldest is None or k < oldest]
            have = set(keys)
            return older_batches([k for k in keys_all if k not in have])
    ruled_out = max(0, total - len(head) - len(rest))
    return [to_path(k) for k in rest], older, ruled_out, True, fm_ends


# ----------------------------------------------------------------------------- file selection

ORDER_MAGIC = b"chrollo-order 1\n"
ORDER_NEWER = 1000           # rows added since the order file was written, past which it is written anew
DIRECT_HOOK_BYTES = 4 << 20  # the recall hook reads at most this much directly (else: newest first)


class TermFiles:
    """The files of one search's scope as the selection (retrieval/select.py) sees them.

    ``n``: files in scope. ``sets[i]``: ids of the files the index vouches for that hold term
    i. ``order``, ``times``: every file the index lists, in file-key order (newest first), and
    its name's time (fileformat.name_time); ``pos``: id -> its place in ``order``. ``extras``:
    the files in scope the index does not vouch for, each ``(terms mask, file key, path,
    time)``. ``paths(ids)``: {id: (file key, path)}, and their frontmatter ends into ``fm_ends``.
    """

    __slots__ = ("n", "sets", "order", "times", "pos", "extras", "paths", "fm_ends")

    def __init__(self, n: int, sets: list, order, times, pos, extras: list, paths):
        self.n, self.sets, self.order, self.times, self.pos = n, sets, order, times, pos
        self.extras, self.paths = extras, paths
        self.fm_ends: dict = {}

    def df(self) -> list:
        """Per term, the files in scope that hold it."""
        out = [len(s) for s in self.sets]
        for m, *_rest in self.extras:
            for i in range(len(out)):
                if m >> i & 1:
                    out[i] += 1
        return out


def _order_file(vault: str) -> str:
    return db_path(vault) + ".order"


def _order(con, vault: str, write: bool = True):
    """Every row's id in file-key order (newest first), with its folder and its name's time,
    ``pos`` (id -> place) and the ids below the largest that no row holds: (ids, dirs, times,
    pos, dead, newer rows (id, rel, dir) added since).
    Kept in a file beside the index (``.order``), written anew by a reader when a row it lists
    was deleted since (meta 'gone' moved; ids are never reused) or many were added, else read
    (a few ms; it is ~20 bytes a file). Without ``write``: None instead of writing it (~1 s at
    250,000 files: the recall hook leaves that to a build)."""
    top = con.execute("SELECT max(id) FROM files").fetchone()[0] or 0
    gone = int(con.execute("SELECT v FROM meta WHERE k = 'gone'").fetchone()[0])
    try:
        with open(_order_file(vault), "rb") as fh:
            data = fh.read()
        at = data.find(b"\n" + ORDER_MAGIC)
        upto, n, n_dead, was_gone, fmt = map(int, data[:at].split())
        body = memoryview(data)[at + 1 + len(ORDER_MAGIC):]
        if at > 0 and fmt == FORMAT and was_gone == gone and upto <= top \
                and len(body) == (4 * n + upto + 1 + n_dead) * 4:
            newer = con.execute("SELECT id, rel, dir FROM files WHERE id > ? LIMIT ?",
                                (upto, ORDER_NEWER + 1)).fetchall() if top > upto else []
            if len(newer) <= ORDER_NEWER:
                # (views of the bytes read, not copies: 5 MB at 250,000 files)
                end = 16 * n + 4 * (upto + 1)
                return (body[:4 * n].cast("I"), body[4 * n:8 * n].cast("I"), body[8 * n:16 * n].cast("d"),
                        body[16 * n:end].cast("i"), body[end:].cast("I"), newer)
    except (OSError, ValueError):
        pass
    return _write_order(con, vault) if write else None


def _write_order(con, vault: str):
    """Write the order file from the rows as they are now (see :func:`_order`)."""
    gone = int(con.execute("SELECT v FROM meta WHERE k = 'gone'").fetchone()[0])
    rows = con.execute("SELECT id, rel, dir FROM files").fetchall()
    rows.sort(key=lambda r: (file_key(r[1]), r[1]))
    upto = max((r[0] for r in rows), default=0)
    ids, dirs = array("I", (r[0] for r in rows)), array("I", (r[2] for r in rows))
    times = array("d", (name_time(r[1].rpartition(b"/")[2]) for r in rows))
    pos = array("i", [-1]) * (upto + 1)
    for p, fid in enumerate(ids):
        pos[fid] = p
    dead = array("I", (i for i in range(1, upto + 1) if pos[i] < 0))  # (ids of rows deleted)
    try:
        tmp = f"{_order_file(vault)}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, _home.FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(b"%d %d %d %d %d\n" % (upto, len(ids), len(dead), gone, FORMAT) + ORDER_MAGIC)
            for a in (ids, dirs, times, pos, dead):
                fh.write(a.tobytes())
        os.replace(tmp, _order_file(vault))
    except OSError:
        pass  # (a read-only state folder: computed again by the next search)
    return ids, dirs, times, pos, dead, []


def _holds(terms: set, group: list) -> bool:
    """Whether a file whose terms are ``terms`` holds one of ``group``'s forms (each a list of
    the terms it needs, see :func:`form_terms`)."""
    return any(all(t in terms for t in need) for need in group)


def term_groups(forms_per_term: list) -> list | None:
    """Each query term's forms as the index reads them (lists of terms a file needs all of), or
    None when a form cannot be answered by the index (non-ASCII, too long). A spelling made of
    one-character runs only (``v-4``, an identifier spelling of ``v4``) holds no index term:
    it is left out (the term's other spellings stand for it); a term with no other: None."""
    groups = []
    for forms in forms_per_term:
        if any(not f.isascii() or len(f) > MAX_TERM for f in forms):
            return None
        need = [t for t in map(form_terms, forms) if t is not None]
        if not need:
            return None
        groups.append(need)
    return groups


def _masks_of(groups: list, paths: list) -> list:
    """(path, terms mask) of each of ``paths`` that holds one of ``groups``' terms: read and
    tokenised as a build does (a worker's unit of work)."""
    out = []
    runs = sorted({t for g in groups for need in g for t in need})
    for path in paths:
        got = _read(path)
        if got is None:
            continue
        data = body_of(got[0], frontmatter_end_of(got[0]))
        low = data.lower()
        if not any(r in low for r in runs):
            continue  # (no word of the query even as a substring: holds nothing)
        terms = terms_of(data)
        m = 0
        for i, g in enumerate(groups):
            if _holds(terms, g):
                m |= 1 << i
        if m:
            out.append((path, m))
    return out


def _direct_masks(paths: list, groups: list) -> list:
    """:func:`_masks_of` over ``paths``, in worker processes when there is much to read."""
    chunks, cur, size = [], [], 0
    for p in paths:
        cur.append(p)
        try:
            size += os.lstat(p).st_size
        except OSError:
            pass
        if size >= CHUNK_BYTES:
            chunks.append(cur)
            cur, size = [], 0
    if cur:
        chunks.append(cur)
    if len(chunks) < 3 or (os.cpu_count() or 1) < 2:
        return [x for c in chunks for x in _masks_of(groups, c)]
    from functools import partial

    from .workers import map_ordered

    return [x for got in map_ordered(partial(_masks_of, groups), chunks, 2) for x in got]


def _extra(path: bytes, mask: int) -> tuple:
    return mask, file_key(path), path, name_time(path[path.rfind(b"/") + 1:])


def scanned_universe(n: int, groups: list, paths: list, globs: tuple, timeout: float) -> TermFiles:
    """The selection's view of a folder without an index (see :class:`TermFiles`): ``n`` files
    in scope; ripgrep (over ``paths`` with ``globs``) lists, in each file's body, every ASCII
    word that is one of ``groups``' terms and every identifier holding one, and the terms a
    file holds are taken from those exactly as :func:`terms_of` would — the same answer as
    :func:`indexed_universe`, at the cost of one rg pass over the vault."""
    from .fileformat import frontmatter_end
    from .rg import rows_after, scan

    runs = {t for g in groups for need in g for t in need}
    alt = "|".join(re.escape(r.decode("ascii")) for r in sorted(runs, key=lambda r: (-len(r), r)))
    # (a run that is a term, or any run holding one: the pieces terms_of would take from it)
    regex = rf"(?-u:(?i:\b(?:{alt})\b|[A-Za-z0-9_]*(?:{alt})[A-Za-z0-9_]*))"
    extras, fm_head = [], {}
    for path, rows in scan([], paths, globs=globs, timeout=timeout, regex=regex):
        first = int(rows[:rows.index(b":")])
        if first <= FRONTMATTER_LINES:
            rows = rows_after(rows, frontmatter_end(path))
        held = set()
        for text in {r.partition(b":")[2] for r in rows.split(b"\n")}:
            if text:
                held.update(t for t in _run_terms(text) if t in runs)
        m = 0
        for i, g in enumerate(groups):
            if _holds(held, g):
                m |= 1 << i
        if m:
            extras.append(_extra(path, m))
    return TermFiles(n, [set() for _ in groups], array("I"), array("d"), array("i"), extras, dict)


def indexed_universe(vault: str, folder: str, groups: list, exclude_peers: bool = False,
                     unsearchable: frozenset = frozenset(), memo: dict | None = None,
                     direct_bytes: int | None = None, least: int = 0):
    """The selection's view of ``folder`` from ``vault``'s index: the files it vouches for from
    their postings, every other file in scope read and tokenised (see :class:`TermFiles`). None
    when the index cannot be used (none, locked, damaged, the folder not in it) or, with
    ``direct_bytes``, when more than that would have to be read directly. A scope of no more
    than ``least`` files gives a Universe of its size alone."""
    memo = {} if memo is None else memo
    con = open_reader(vault)
    if con is None:
        return None
    try:
        key = ("scope", folder, exclude_peers, unsearchable)
        scope = memo.get(key)
        if scope is None:
            scope = memo[key] = _Scope.of(con, os.path.realpath(vault), folder, exclude_peers, unsearchable) \
                or False
        if not scope:
            return None
        if scope.files <= least:
            return TermFiles(scope.files, [], array("I"), array("d"), array("i"), [], dict)
        got = _order(con, vault, write=direct_bytes is None)
        if got is None:
            return None
        ids, dirs, times, pos, dead, newer = got
        blobs = _postings(con, sorted({t for g in groups for need in g for t in need}))
        if blobs is None:
            return None
        vb = scope.vb
        rels = {}
        if newer:
            rels = {fid: (rel, did) for fid, rel, did in newer}
    except Exception:  # noqa: BLE001 — locked, damaged: the caller reads the files
        return None
    finally:
        con.close()
    trusted, alive, skip = scope.trusted, scope.alive, scope.direct_ids
    # (the ids a posting may name that are not a vouched file in scope: rows deleted, read
    # directly, added since the order file, or in folders out of scope — usually few, so
    # taking them out of each term's files costs little)
    excluded = set(dead) | skip | set(rels)
    if alive or not trusted.issuperset(set(dirs)):
        from itertools import compress

        excluded.update(i for i in compress(ids, (d not in trusted for d in dirs)) if i not in alive)
    extras_ids = [fid for fid, (rel, did) in rels.items()
                  if fid not in skip and (did in trusted or fid in alive)]
    found: dict = {}

    def ids_of(t: bytes) -> set:
        got = found.get(t)
        if got is None:
            got = found[t] = set(_ids(b"".join(blobs.get(t, ()))))
        return got

    sets = []
    for g in groups:
        s: set | None = None
        for need in g:
            got = ids_of(need[0])
            for t in need[1:]:
                got = got & ids_of(t)
            s = got if s is None else (s | got)
        sets.append(set() if s is None else s)
    extras = []
    for fid in extras_ids:
        m = sum(1 << i for i, s in enumerate(sets) if fid in s)
        if m:
            extras.append(_extra(vb + b"/" + rels[fid][0], m))
    for s in sets:  # (in place: a set two terms share is pruned once, the same way)
        s.difference_update(excluded)
    direct = sorted(scope.direct)
    if direct_bytes is not None:
        size = 0
        for p in direct:
            try:
                size += os.lstat(p).st_size
            except OSError:
                pass
        if size > direct_bytes:
            return None
    extras += [_extra(p, m) for p, m in _direct_masks(direct, groups)]

    u = TermFiles(scope.files, sets, ids, times, pos, extras, None)

    def paths(want: list) -> dict:
        """{id: (file key, path)} of ``want``; their frontmatter ends go to ``u.fm_ends`` (see Plan)."""
        con = open_reader(vault)
        if con is None:
            return {}
        try:
            out = {}
            for i in range(0, len(want), 500):
                chunk = want[i:i + 500]
                for fid, rel, fm, *stat in con.execute(
                        "SELECT id, rel, CASE ok WHEN 1 THEN fm END, size, mtime, ctime, ino FROM files "
                        f"WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                    p = vb + b"/" + rel
                    out[fid] = (file_key(p), p)
                    if fm is not None and _unchanged(p, stat):
                        u.fm_ends[p] = fm
            return out
        finally:
            con.close()

    u.paths = paths
    return u


def _postings(con, words: list) -> dict | None:
    """term (bytes) -> its posting blobs (every segment's and the delta's); None if one is damaged."""
    import zlib

    blobs: dict = {}
    for i in range(0, len(words), 500):
        chunk = [w.decode("ascii") for w in words[i:i + 500]]
        q = ",".join("?" * len(chunk))
        for t, blob, crc in _post_rows(con, chunk):
            if zlib.crc32(blob) != crc or len(blob) % 4:
                return None
            blobs.setdefault(t.encode("ascii"), []).append(blob)
        for t, fid in con.execute(f"SELECT term, id FROM delta WHERE term IN ({q})", chunk):
            blobs.setdefault(t.encode("ascii"), []).append(array("I", (fid,)).tobytes())
    return blobs
