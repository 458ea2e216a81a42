"""A repository's commits read from its files, never by running ``git`` (docs/design.md §4).

Why not ``git``: a repository's own config can name commands git runs (a partial clone's
promisor remote with ``ext::``, ``remote.<name>.uploadpack``, ``core.fsmonitor``, …), and the
folder an agent works in may be a downloaded archive whose ``.git/config`` someone else wrote.
No switch turns a repository's own config off, so chrollo reads the object files itself:

* loose objects (``objects/xx/…``, zlib);
* packs (``objects/pack/*.idx`` version 2, then the ``.pack`` at the offset it gives),
  deltas against an offset or an object id resolved, chains at most :data:`MAX_CHAIN` deep.

Everything is bounded, because the files are hostile input: an index or pack that is not a
regular file, larger than :data:`MAX_INDEX` / past its own end, an object that inflates past
:data:`MAX_OBJECT`, a delta that reads outside its base — each gives ``None`` (the caller
falls back to the folder), never an exception or a hang. Stdlib only.
"""
from __future__ import annotations

import os
import zlib

from ..vault import open_regular

MAX_OBJECT = 64 * 1024      # bytes a commit (or a delta base of one) may inflate to
MAX_INDEX = 256 << 20       # bytes of a pack index read (one of ~9 M objects)
MAX_PACKS = 64              # pack indexes looked in
MAX_CHAIN = 64              # deltas followed to their base (git's default depth is 50)
_READ = 1024                # bytes first read at an object's offset (a commit deflates to a few hundred)
_COMMIT, _OFS_DELTA, _REF_DELTA = 1, 6, 7
_IDX_MAGIC = b"\xfftOc\x00\x00\x00\x02"


def _inflate(data: bytes, limit: int, partial: bool = False) -> bytes | None:
    """``data`` inflated, if it inflates to at most ``limit`` bytes (``partial``: its first
    ``limit`` bytes whatever it inflates to); else None."""
    try:
        out = zlib.decompressobj().decompress(data, limit + 1)
    except zlib.error:
        return None
    if len(out) > limit:
        return out[:limit] if partial else None
    return out


class _Pack:
    """One pack: its index's object ids and offsets, and the pack file read at an offset."""

    def __init__(self, idx_path: str, hash_len: int):
        self.hash_len = hash_len
        with open_regular(idx_path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_INDEX:
                raise OSError("pack index too large")
            data = fh.read(size)
        if data[:8] != _IDX_MAGIC or len(data) < 8 + 1024:
            raise OSError("not a version 2 pack index")
        self.count = int.from_bytes(data[8 + 1020:8 + 1024], "big")
        self.fanout = 8
        self.names = 8 + 1024
        self.offsets = self.names + self.count * (hash_len + 4)  # (past the CRC32s)
        self.large = self.offsets + self.count * 4
        if len(data) < self.large + 2 * hash_len:
            raise OSError("pack index cut short")
        self.data = data
        self.pack_path = idx_path[:-4] + ".pack"
        self.fh = None

    def find(self, oid: bytes) -> int | None:
        """The offset of ``oid`` in the pack, or None."""
        d, n = self.data, self.hash_len
        first = oid[0]
        lo = int.from_bytes(d[self.fanout + 4 * (first - 1):self.fanout + 4 * first], "big") if first else 0
        hi = int.from_bytes(d[self.fanout + 4 * first:self.fanout + 4 * first + 4], "big")
        hi = min(hi, self.count)
        while lo < hi:
            mid = (lo + hi) // 2
            at = self.names + mid * n
            name = d[at:at + n]
            if name < oid:
                lo = mid + 1
            elif name > oid:
                hi = mid
            else:
                off = int.from_bytes(d[self.offsets + 4 * mid:self.offsets + 4 * mid + 4], "big")
                if off & 0x80000000:  # (an index into the 8-byte offsets of packs over 2 GB)
                    at = self.large + 8 * (off & 0x7FFFFFFF)
                    if at + 8 > len(d):
                        return None
                    off = int.from_bytes(d[at:at + 8], "big")
                return off
        return None

    def read_at(self, offset: int, reader: "Objects", depth: int = 0):
        """(type, bytes) of the object at ``offset``, deltas resolved; None if anything is off."""
        if depth > MAX_CHAIN or offset < 12:
            return None
        if self.fh is None:
            self.fh = open_regular(self.pack_path)
        head = os.pread(self.fh.fileno(), _READ, offset)
        if not head:
            return None
        byte = head[0]
        kind, size, shift, i = (byte >> 4) & 7, byte & 15, 4, 1
        while byte & 0x80:
            if i >= len(head) or shift > 60:
                return None
            byte = head[i]
            size |= (byte & 0x7F) << shift
            shift, i = shift + 7, i + 1
        # (a commit too long to read whole still gives its headers; a delta or a base must be whole)
        whole = kind != _COMMIT
        if size > MAX_OBJECT and whole:
            return None
        base = None
        if kind == _OFS_DELTA:
            if i >= len(head):
                return None
            byte = head[i]
            rel, i = byte & 0x7F, i + 1
            while byte & 0x80:
                if i >= len(head) or rel > 1 << 60:
                    return None
                byte = head[i]
                rel, i = ((rel + 1) << 7) | (byte & 0x7F), i + 1
            if rel <= 0 or rel > offset:
                return None
            base = self.read_at(offset - rel, reader, depth + 1)
        elif kind == _REF_DELTA:
            oid = head[i:i + self.hash_len]
            i += self.hash_len
            base = reader.read(oid, depth + 1) if len(oid) == self.hash_len else None
        elif kind not in (1, 2, 3, 4):
            return None
        # (deflate never grows data by more than a few bytes per 16 KB: what is read covers it)
        want = min(size, MAX_OBJECT) + 64
        data = head[i:] + os.pread(self.fh.fileno(), want, offset + len(head)) if want > len(head) - i else head[i:]
        body = _inflate(data, MAX_OBJECT, partial=not whole)
        if body is None or (whole and len(body) != size):
            return None
        if kind in (_OFS_DELTA, _REF_DELTA):
            if base is None:
                return None
            patched = _apply_delta(base[1], body)
            return None if patched is None else (base[0], patched)
        return kind, body

    def close(self):
        if self.fh is not None:
            self.fh.close()
            self.fh = None


def _varint(data: bytes, i: int):
    value, shift = 0, 0
    while True:
        if i >= len(data) or shift > 35:
            return None, i
        byte = data[i]
        value |= (byte & 0x7F) << shift
        shift, i = shift + 7, i + 1
        if not byte & 0x80:
            return value, i


def _apply_delta(base: bytes, delta: bytes) -> bytes | None:
    """git's delta format: source and target sizes, then copy (from the base) and insert
    instructions. None when it disagrees with its base or reads outside it."""
    src, i = _varint(delta, 0)
    if src is None or src != len(base):
        return None
    dst, i = _varint(delta, i)
    if dst is None or dst > MAX_OBJECT:
        return None
    out = bytearray()
    while i < len(delta):
        op = delta[i]
        i += 1
        if op & 0x80:
            off = size = 0
            for bit in range(4):
                if op & (1 << bit):
                    if i >= len(delta):
                        return None
                    off |= delta[i] << (8 * bit)
                    i += 1
            for bit in range(3):
                if op & (1 << (4 + bit)):
                    if i >= len(delta):
                        return None
                    size |= delta[i] << (8 * bit)
                    i += 1
            size = size or 0x10000
            if off + size > len(base):
                return None
            out += base[off:off + size]
        elif op:
            if i + op > len(delta):
                return None
            out += delta[i:i + op]
            i += op
        else:
            return None  # (0 is reserved)
        if len(out) > dst:
            return None
    return bytes(out) if len(out) == dst else None


class Objects:
    """The objects of one repository (its common git directory), read from files only.

    ``read(oid)`` gives ``(type, bytes)`` (1 commit, 2 tree, 3 blob, 4 tag) or None. Packs are
    opened on first need; :meth:`close` (or ``with``) releases them."""

    def __init__(self, objects_dir: str, hash_len: int = 20):
        self.dir, self.hash_len = objects_dir, hash_len
        self._packs = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for p in self._packs or ():
            p.close()

    def packs(self) -> list:
        if self._packs is None:
            self._packs = []
            folder = os.path.join(self.dir, "pack")
            try:
                names = sorted(n for n in os.listdir(folder) if n.endswith(".idx"))[:MAX_PACKS]
            except OSError:
                names = []
            for n in names:
                try:
                    self._packs.append(_Pack(os.path.join(folder, n), self.hash_len))
                except (OSError, ValueError):
                    continue
        return self._packs

    def read(self, oid: bytes, depth: int = 0):
        if len(oid) != self.hash_len:
            return None
        hexed = oid.hex()
        try:
            with open_regular(os.path.join(self.dir, hexed[:2], hexed[2:])) as fh:
                raw = fh.read(MAX_OBJECT + 1024)
        except OSError:
            raw = None
        if raw is not None:
            data = _inflate(raw, MAX_OBJECT, partial=True)  # (a long commit still gives its headers)
            if data is None:
                return None
            head, _, body = data.partition(b"\0")
            kind = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}.get(head.partition(b" ")[0])
            return (kind, body) if kind else None
        for pack in self.packs():
            off = pack.find(oid)
            if off is not None:
                try:
                    return pack.read_at(off, self, depth)
                except OSError:
                    return None
        return None

    def commit(self, sha: str):
        """A commit's first parent (hex) — "" for a root — or None if it cannot be read."""
        try:
            oid = bytes.fromhex(sha)
        except ValueError:
            return None
        got = self.read(oid)
        if got is None or got[0] != _COMMIT:
            return None
        for line in got[1].split(b"\n", 64)[:64]:  # tree, then parents: the first is the first parent
            if line.startswith(b"parent "):
                return line[7:].decode("ascii", "replace").strip()
            if not line.startswith(b"tree "):
                break
        return ""
