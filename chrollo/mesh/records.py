"""Records of 10,000 files kept without rewriting 10,000 of them for one change.

A set of records (``{key: JSON value}``) lives in two owner-only files: the records written
whole (``{"tag", "log", "records"}``), and a log of the ones changed since (a first line
naming the whole file it follows, then ``[key, value or null]`` a line). A change appends
lines; the records are written whole again when the log outgrows a quarter of them. Reading
gives None — start over — for another ``tag`` (e.g. new redaction rules), a log torn or left
from before the records were last written whole (a crash between the two writes), a whole
file damaged.

The whole file is marshal (the format of Python's .pyc files) after :data:`MAGIC` and the
SHA-256 of what follows, checked before it is parsed: read by a new process every sync, 10,000
records took json 20 ms, marshal 8. Owner-only state only this module writes, never anything
a peer sent. Older versions wrote JSON at ``<name>.json``: read once, then replaced.
"""
from __future__ import annotations

import hashlib
import json
import marshal
import os

from .. import vault as _vault


# path -> (the two files' stat, the records, log lines) as this process last read or kept them:
# a long-lived process (the LAN server) does not read 10,000 records again while nobody else
# wrote them. Taken out while the caller changes them, put back by :func:`keep`.
_HELD: dict = {}


def _stamp(path: str, log: str) -> tuple | None:
    try:
        a, b = os.stat(path), os.stat(log)
    except OSError:
        return None
    return a.st_ino, a.st_size, a.st_mtime_ns, b.st_ino, b.st_size, b.st_mtime_ns


MAGIC = b"chrollo records 1\n"
_MIGRATE = 1 << 62  # the log lines said of records read from an older version's JSON: kept whole next


def _legacy(path: str) -> str:
    return os.path.splitext(path)[0] + ".json"


def _read_whole(path: str) -> tuple[dict, bool]:
    """The records file written whole ({} if missing or damaged), and whether it is an older
    version's JSON."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return _vault.read_json(_legacy(path)), True
    except OSError:
        return {}, False
    body = memoryview(data)[len(MAGIC) + 32:]
    if not data.startswith(MAGIC) or hashlib.sha256(body).digest() != data[len(MAGIC):len(MAGIC) + 32]:
        return {}, False
    try:
        whole = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return {}, False
    return (whole if isinstance(whole, dict) else {}), False


def load(path: str, log: str, tag) -> tuple[dict | None, int]:
    """(the records, how many lines the log holds); (None, 0) if they cannot be trusted.
    The caller owns the dict it gets (it may change it, then :func:`keep` it)."""
    held = _HELD.pop(path, None)
    if held is not None and held[0] == (tag, _stamp(path, log)):
        return held[1], held[2]
    whole, legacy = _read_whole(path)
    records = whole.get("records")
    if whole.get("tag") != tag or not isinstance(records, dict):
        return None, 0
    try:
        with open(log, "rb") as fh:
            lines = fh.read().split(b"\n")
    except OSError:
        return None, 0
    if lines[0].decode("ascii", "replace") != str(whole.get("log")) or lines[-1]:
        return None, 0
    try:
        for line in lines[1:-1]:
            key, value = json.loads(line)
            if value is None:
                records.pop(key, None)
            else:
                records[key] = value
    except (ValueError, TypeError):
        return None, 0
    return records, _MIGRATE if legacy else len(lines) - 2


def keep(path: str, log: str, tag, records: dict, changed, whole: bool, log_lines: int) -> None:
    """Keep ``records``: whole (``whole``, or the log would outgrow a quarter of them), else
    only the ``changed`` keys appended to the log."""
    if not whole and not changed:
        _HELD[path] = ((tag, _stamp(path, log)), records, log_lines)
        return
    if not whole and log_lines + len(changed) <= max(256, len(records) // 4):
        lines = "".join(json.dumps([k, records.get(k)]) + "\n" for k in sorted(changed))
        try:
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)  # (made with the records: owner-only)
        except OSError:
            fd = None
        if fd is not None:
            try:
                os.write(fd, lines.encode("utf-8", "surrogateescape"))  # (torn: the next load starts over)
            finally:
                os.close(fd)
            _HELD[path] = ((tag, _stamp(path, log)), records, log_lines + len(changed))
            return
    gen = os.urandom(8).hex()
    body = marshal.dumps({"tag": tag, "log": gen, "records": records})
    _vault.write_private(path, MAGIC + hashlib.sha256(body).digest() + body)
    _vault.write_private(log, gen + "\n")
    if log_lines == _MIGRATE:
        try:
            os.unlink(_legacy(path))
        except OSError:
            pass
    _HELD[path] = ((tag, _stamp(path, log)), records, 0)


def drop(path: str, log: str) -> None:
    """Remove the records: the whole file, its log, and an older version's JSON of them."""
    _HELD.pop(path, None)
    for p in (path, log, _legacy(path)):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def forget(path: str, log: str, doomed, naming=None) -> bool:
    """Take the records whose key ``doomed(key)`` accepts (or whose value ``naming(value)``
    does: a link to another file) out (``chrollo forget``: a key is a file
    name, and a name can hold a title's words) — written whole at once, so that neither file
    keeps the key, not even as a removal in the log. The key ``""`` (a transport's note of where
    it left off) goes too: the next run trusts nothing and looks at everything. Records that
    cannot be read are removed (they are a cache). Returns whether anything changed."""
    if not (os.path.exists(path) or os.path.exists(log)):
        return False
    _HELD.pop(path, None)
    whole, _legacy = _read_whole(path)
    tag = whole.get("tag")
    records, _n = load(path, log, tag) if tag is not None else (None, 0)
    _HELD.pop(path, None)
    if records is None:
        drop(path, log)
        return True
    try:
        with open(log, "rb") as fh:
            logged = [json.loads(line)[0] for line in fh.read().split(b"\n")[1:-1]]
    except (OSError, ValueError, TypeError, IndexError):
        logged = []
    hit = [k for k in list(records) + logged if k and doomed(k)]
    if naming is not None:
        hit += [k for k, v in records.items() if k and naming(v)]
    if not hit:
        return False
    for k in hit:
        records.pop(k, None)
    records.pop("", None)
    keep(path, log, tag, records, set(), True, 0)
    return True

