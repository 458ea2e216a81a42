"""The index's files: one SQLite database per vault and what sits beside it (docs/design.md §13).

``state/index/<key>.sqlite`` (named in chrollo.layout), opened read-only by searches and
read-write by builds and updates (WAL); ``.order`` (every row's id in file-key order, for the
selection), ``.sweep`` (the freshness sweep's position), ``.building`` (a background build's
lock). Tables: ``meta`` (format, chrollo version, ``complete``, the next segment, rows ever
deleted), ``dirs`` (each folder and the mtime its listing was taken at), ``files`` (a row per
session file: stat as read, ``ok``, frontmatter end), ``post`` ((segment, term) → file ids,
packed (:func:`pack_ids`) with a CRC32), ``delta`` ((term, id) rows added since the last merge).
An index of another format or version, or damaged, is never read (:func:`open_reader` gives
None) and is deleted by the next writer: it is derived, and rebuilt.
"""
from __future__ import annotations

import os
import sys
import time
from array import array
from itertools import accumulate, islice
from operator import sub

from .. import __version__
from .. import homedir as _home
from ..fileformat import file_key, name_time
from ..vaultfiles import walk


FORMAT = 9                   # (4: files.fm; 5: ids never reused, a rewritten file takes a new one;
                             # 6: a file's terms are its body's, after the frontmatter; 7: files
                             # read as rg reads them — UTF-16 transcoded, hidden *.md folders —
                             # and a file of more than MAX_FILE_RUNS distinct runs read directly;
                             # 8: text beyond ASCII — CJK bigrams, folded spellings, other words;
                             # 9: postings packed as deltas (pack_ids: a CJK vault's index 0.6× -> 0.2×);
                             # also bump when fileformat's FRONTMATTER_* limits change)
RACY_NS = 200_000_000        # a file changed this close to being read is re-read (mtime ticks)
READ_BUSY_MS = 50            # a search waits this long on a writer, then scans without the index
WRITE_BUSY_MS = 2000
MAX_FILE = 64 << 20          # larger files are left unindexed (searched directly)
# files.ok: 1 indexed as its stat says; 0 read directly until read again (changed, racy, or
# found by a folder's listing); -1 cannot be indexed (not a regular file, too large, more than
# MAX_FILE_RUNS distinct runs): read directly.
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


def db_path(vault: str) -> str:
    """Where the index of ``vault`` lives (named in chrollo.layout)."""
    from ..layout import index_file

    return index_file(vault)


def connect(path: str, write: bool, busy_ms: int = READ_BUSY_MS):
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


def checkpoint(con) -> None:
    """Copy every page of the -wal into the index and truncate the -wal to nothing (forget:
    the old copies of a forgotten word's pages must not stay there). Raises if a reader kept
    it from completing."""
    busy, _log, _done = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        raise RuntimeError("a reader kept the index's -wal from being checkpointed")


def compatible(con) -> bool:
    try:
        meta = dict(con.execute("SELECT k, v FROM meta"))
    except Exception:  # noqa: BLE001 — no table, damaged file: not ours
        return False
    return meta.get("format") == str(FORMAT) and meta.get("version") == __version__ \
        and meta.get("complete") == "1"


def open_reader(vault: str):
    """A read-only connection to ``vault``'s index, or None when there is none usable. Every
    read on it sees one snapshot (one read transaction, until it is closed): a build that
    commits between a reader's reads of the files and of the postings is seen whole or not
    at all, never postings naming files the reader did not see."""
    path = db_path(vault)
    if not os.path.isfile(path):
        return None
    try:
        con = connect(path, write=False)
        con.execute("BEGIN")
        if compatible(con):
            return con
        con.close()
    except Exception:  # noqa: BLE001
        pass
    return None


def open_writer(vault: str, fresh: bool = False, busy_ms: int = WRITE_BUSY_MS):
    """A writable connection; an index of another format or version, or a damaged one, is
    deleted first and started afresh (a build then fills it)."""
    path = db_path(vault)
    if fresh:
        remove(vault)
    con = connect(path, write=True, busy_ms=busy_ms)
    try:
        meta = dict(con.execute("SELECT k, v FROM meta"))
    except Exception:  # noqa: BLE001 — no table yet (new) or a damaged file
        meta = None if os.path.getsize(path) else {}
    if meta is None or (meta and (meta.get("format"), meta.get("version")) != (str(FORMAT), __version__)):
        con.close()
        remove(vault)
        con = connect(path, write=True, busy_ms=busy_ms)
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


def read_file(path: bytes):
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


def fresh(row, st) -> bool:
    """Whether a file stat'ed as ``st`` is what its ``files`` row (size, mtime, ctime, ino,
    seen, ok) says was read and indexed."""
    size, mtime, ctime, ino, _seen, ok = row
    return ok == 1 and st.st_size == size and st.st_mtime_ns == mtime and st.st_ctime_ns == ctime \
        and st.st_ino == ino


def rel_of(vault_b: bytes, path: bytes) -> bytes | None:
    if path.startswith(vault_b + b"/"):
        return path[len(vault_b) + 1:]
    return None


def stat_of(st) -> tuple:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def put_file(con, rel: bytes, did: int, st, fm: int) -> int:
    """Record ``rel`` (in folder ``did``, its frontmatter ending on line ``fm``) as read with
    stat ``st`` (now); its id. A file changed this close to being read is left to read
    directly until read again (RACY_NS)."""
    seen = time.time_ns()
    ok = 1 if st.st_ctime_ns < seen - RACY_NS else 0
    row = con.execute("SELECT id, ok, size, fm FROM files WHERE rel = ?", (rel,)).fetchone()
    if row and row[1] == 1 and row[2] <= st.st_size and row[3] == fm:
        # (indexed as it was and grown since: a turn appended, whose words only add to its own)
        con.execute("UPDATE files SET dir=?, size=?, mtime=?, ctime=?, ino=?, seen=?, ok=?, fm=? WHERE id=?",
                    (did, *stat_of(st), seen, ok, fm, row[0]))
        return row[0]
    if row:  # (rewritten, or never read: a new id, so no posting of a word it lost names it)
        con.execute("DELETE FROM files WHERE id = ?", (row[0],))
    return con.execute("INSERT INTO files(rel, dir, size, mtime, ctime, ino, seen, ok, fm) VALUES (?,?,?,?,?,?,?,?,?)",
                       (rel, did, *stat_of(st), seen, ok, fm)).lastrowid


def next_file_id(con) -> int:
    """The next file id: never one a row held before (AUTOINCREMENT's sequence, or past the
    ids a build wrote itself)."""
    seq = con.execute("SELECT seq FROM sqlite_sequence WHERE name = 'files'").fetchone()
    return max(seq[0] if seq else 0, con.execute("SELECT max(id) FROM files").fetchone()[0] or 0) + 1


def size_of(vault: str) -> int:
    try:
        return os.path.getsize(db_path(vault))
    except OSError:
        return 0


def drop_ids(con, ids: list) -> None:
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        q = ",".join("?" * len(chunk))
        con.execute(f"DELETE FROM files WHERE id IN ({q})", chunk)


def _next_seg(con) -> int:
    got = con.execute("SELECT v FROM meta WHERE k = 'seg'").fetchone()
    seg = int(got[0]) + 1 if got else 1
    con.execute("INSERT OR REPLACE INTO meta VALUES ('seg', ?)", (str(seg),))
    return seg


def pack_rows(postings: dict) -> list:
    """``postings`` (term bytes → file ids, ascending, a list) as post's rows: (term, ids as
    :func:`pack_ids` packs them, their CRC32), in term order (a segment is then appended page
    after page)."""
    import zlib

    rows = []
    for t in sorted(postings):
        blob = pack_ids(postings[t])
        rows.append((t.decode("utf-8"), blob, zlib.crc32(blob)))
    return rows


def pack_ids(ids: list) -> bytes:
    """File ids (ascending, else stored whole) as a posting blob: a tag byte, then for tag 1
    (2) the first id (4 bytes, native order) and each next id's distance from the one
    before in 1 byte (2 bytes), for tag 4 every id in 4 bytes. Why: a common term's files are
    close together — a CJK character is in most files — and 4 bytes each made a CJK vault's
    index 0.6× the vault, most of it SQLite overflow pages (tag 1: 0.2×); decoding stays C
    (:func:`unpack_ids`: itertools.accumulate)."""
    if len(ids) > 1:
        gaps = map(sub, islice(ids, 1, None), ids)
        head = ids[0].to_bytes(4, sys.byteorder)
        try:
            return b"\x01" + head + bytes(gaps)
        except ValueError:
            try:
                return b"\x02" + head + array("H", map(sub, islice(ids, 1, None), ids)).tobytes()
            except OverflowError:
                pass
    whole = array("I")
    whole.fromlist(ids)  # (a list; a third of array("I", a _Post)'s time: no generic sequence walk)
    return b"\x04" + whole.tobytes()


def unpack_ids(blob: bytes):
    """The file ids of a posting blob (:func:`pack_ids`), an iterable of ints."""
    tag = blob[0]
    if tag == 4:
        a = array("I")
        a.frombytes(blob[1:])
        return a
    gaps = array("H")
    if tag == 2:
        gaps.frombytes(blob[5:])
    return accumulate(blob[5:] if tag == 1 else gaps, initial=int.from_bytes(blob[1:5], sys.byteorder))


def holding_all(blobs: dict):
    """``all_of(terms)``: the ids of the files whose postings (``blobs``, as read_postings gives
    them) hold every one of ``terms``; each term's blobs are decoded once however often asked."""
    found: dict = {}

    def ids_of(t: bytes) -> set:
        got = found.get(t)
        if got is None:
            got = found[t] = set()
            for b in blobs.get(t, ()):
                got.update(unpack_ids(b))
        return got

    def all_of(terms: list) -> set:
        got = ids_of(terms[0])
        for t in terms[1:]:
            got = got & ids_of(t)
        return got

    return all_of


def count_ids(blob: bytes) -> int:
    """How many ids a posting blob holds (without decoding it)."""
    tag, n = blob[0], len(blob)
    return n - 4 if tag == 1 else 1 + (n - 5) // 2 if tag == 2 else (n - 1) // 4


def _sound(blob: bytes) -> bool:
    """Whether a posting blob is shaped as :func:`pack_ids` makes them."""
    n = len(blob)
    return n >= 5 and (blob[0] == 1 or (blob[0] == 2 and not (n - 5) % 2) or (blob[0] == 4 and not (n - 1) % 4))


def merge(con, packed: list) -> None:
    """Write ``packed`` (:func:`pack_rows`'s rows) into post as a new segment."""
    if packed:
        con.executemany(f"INSERT INTO post(term, seg, ids, crc) VALUES (?1, {_next_seg(con):d}, ?2, ?3)", packed)


def fold_delta(con) -> None:
    """Fold the delta rows into post (one new segment)."""
    by: dict = {}
    for t, i in con.execute("SELECT term, id FROM delta"):
        by.setdefault(t.encode("utf-8"), []).append(i)
    merge(con, pack_rows(by))
    con.execute("DELETE FROM delta")


def post_rows(con, words: list, what: str = "term, ids, crc"):
    """``what`` of the post rows of ``words`` (strings), every segment's. (post's key is
    (segment, term): a build appends a segment at the end of the table instead of inserting
    into every page; a lookup probes each segment.)"""
    got = con.execute("SELECT v FROM meta WHERE k = 'seg'").fetchone()
    q = ",".join("?" * len(words))
    return con.execute(f"WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?) "
                       f"SELECT {what} FROM s JOIN post ON post.seg = s.n AND post.term IN ({q})",
                       (int(got[0]) if got else 0, *words))


def rows_if_moved(vault: str) -> int | None:
    """How many files ``vault``'s index has a row for, if the vault's folder changed since the
    index recorded its listing (a cheap first sign that another program added files); None
    when it did not, or there is no usable index. A stat and two small queries."""
    try:
        mtime = os.stat(vault).st_mtime_ns
    except OSError:
        return None
    con = open_reader(vault)
    if con is None:
        return None
    try:
        got = con.execute("SELECT mtime FROM dirs WHERE rel = x''").fetchone()
        if got is not None and got[0] == mtime:
            return None
        return con.execute("SELECT count(*) FROM files").fetchone()[0]
    except Exception:  # noqa: BLE001 — locked, damaged: no answer
        return None
    finally:
        con.close()


def status(vault: str) -> dict:
    """How much of ``vault`` is indexed: files indexed as they are now, files in the vault,
    the index's size (for doctor and stats)."""
    vault = os.path.realpath(vault)
    out = {"index": db_path(vault), "exists": os.path.isfile(db_path(vault)), "usable": False,
           "files": 0, "indexed": 0, "index_bytes": size_of(vault)}
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
        row = rows.get(rel_of(vb, path))
        try:
            if row is not None and fresh(row, e.stat(follow_symlinks=False)):
                out["indexed"] += 1
        except OSError:
            pass
    return out


ORDER_MAGIC = b"chrollo-order 1\n"
ORDER_NEWER = 1000           # rows added since the order file was written, past which it is written anew


def order_file(vault: str) -> str:
    return db_path(vault) + ".order"


def read_order(con, vault: str, write: bool = True):
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
        with open(order_file(vault), "rb") as fh:
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
    return write_order(con, vault) if write else None


def write_order(con, vault: str):
    """Write the order file from the rows as they are now (see :func:`read_order`)."""
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
        tmp = f"{order_file(vault)}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, _home.FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(b"%d %d %d %d %d\n" % (upto, len(ids), len(dead), gone, FORMAT) + ORDER_MAGIC)
            for a in (ids, dirs, times, pos, dead):
                fh.write(a.tobytes())
        os.replace(tmp, order_file(vault))
    except OSError:
        pass  # (a read-only state folder: computed again by the next search)
    return ids, dirs, times, pos, dead, []


def read_postings(con, words: list) -> dict | None:
    """term (bytes) -> its posting blobs (every segment's and the delta's); None if one is damaged."""
    import zlib

    blobs: dict = {}
    for i in range(0, len(words), 500):
        chunk = [w.decode("utf-8") for w in words[i:i + 500]]
        q = ",".join("?" * len(chunk))
        for t, blob, crc in post_rows(con, chunk):
            if zlib.crc32(blob) != crc or not _sound(blob):
                return None
            blobs.setdefault(t.encode("utf-8"), []).append(blob)
        for t, fid in con.execute(f"SELECT term, id FROM delta WHERE term IN ({q})", chunk):
            blobs.setdefault(t.encode("utf-8"), []).append(pack_ids([fid]))
    return blobs
