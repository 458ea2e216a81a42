"""Files in and out of the mesh, safely: names, bounded JSON, link-free reads and writes.

Everything received is checked before a byte is written: every name must be a full-string
match of its pattern (no separators, no dot files, no traversal, no trailing newline), sizes
and counts are bounded, no symlink is ever followed (folders are opened with ``O_NOFOLLOW``
and files opened relative to them, also ``O_NOFOLLOW``), and a file is written to a temp file
in the peer's folder and renamed into place, so a killed transfer leaves nothing half-written.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat

from .. import vault as _vault
# a session file's name without its title slug: peers dedupe and withdraw by it, so a name that
# changes with the redaction rules replaces the copy it names
from ..fileformat import slug_free as session_key  # noqa: F401 (the mesh's name for it)
from .config import valid_name

MAX_FILE = 64 << 20          # one session file
MAX_FILES = 100_000          # entries in a manifest
MAX_MANIFEST = 32 << 20      # bytes of a manifest
MAX_DEPTH = 8                # JSON nesting a manifest may use
MAX_CERT = 16 << 10          # a node certificate (PEM)
MAX_RECIPIENTS = 1024        # content keys wrapped in one sealed manifest
BATCH_BYTES = 8 << 20        # files asked for at once (LAN: one request; folder: read together)
BATCH_FILES = 1024           # … and at most this many
MAX_BATCH_ASK = 512 << 10    # bytes of a LAN request naming a batch (1,024 names of 255 characters fit)
MAX_BATCH_ANSWER = 16 << 20  # bytes a server answers one batch with (a larger file alone)
NOT_SENT = (1 << 64) - 1     # a batch answer's length for a file not sent
# a sealed manifest on a shared medium: the signed envelope sealed, in base64, the sender's
# certificate and the wrapped keys
MAX_OUTER = (MAX_MANIFEST + 2 * MAX_CERT) * 4 // 3 + MAX_CERT + MAX_RECIPIENTS * 400
FILE_RE = re.compile(r"\d{4}-\d{2}-\d{2}_\d{6}_[A-Za-z0-9][A-Za-z0-9._:+=@-]{0,200}\.md")
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


class Refused(Exception):
    """Something a peer sent that chrollo will not accept (the reason is the message)."""


BLOB_RE = re.compile(r"[0-9a-f]{32}")


def valid_blob_name(name) -> bool:
    """A session file's name on a shared medium: a session file name (older nodes) or an
    opaque one (:func:`chrollo.mesh.seal.blob_name`)."""
    return isinstance(name, str) and (bool(BLOB_RE.fullmatch(name)) or valid_file_name(name))


def valid_file_name(name) -> bool:
    return isinstance(name, str) and len(name) <= 255 and bool(FILE_RE.fullmatch(name)) and ".." not in name


# strings (skipped whole) and brackets; possessive, so a 28 MB string of escapes costs no
# backtracking stack (the plain form peaked at ~2.7 GB on one)
_TOKENS = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')
# Without a backslash, a string is a quote to the next quote: the document's brackets and
# quotes alone (bytes.translate, at memory speed) tell its nesting; a manifest of 10,000
# files took the token scan 60 ms a sync, this 7 ms.
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'[]{}"')
_PLAIN_STRING = re.compile(rb'"[^"]*+"')
_LEAF = re.compile(rb"\[\]|\{\}")  # one pass: one level (a pair it empties waits for the next)


def bounded_json(data: bytes, limit: int = MAX_MANIFEST, depth: int = MAX_DEPTH):
    """json.loads, but Refused for more than ``limit`` bytes or ``depth`` levels of nesting
    (checked on the raw text first, so a crafted document never reaches the recursive parser)."""
    if len(data) > limit:
        raise Refused(f"document of {len(data)} bytes refused (at most {limit})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("document is not UTF-8") from None
    i = data.find(b"\\")
    if i < 0:
        nest = data.translate(None, _NOT_STRUCTURE)
    else:
        # Escapes taken out the way the parser pairs them, left to right: every escaped
        # backslash, then every escaped quote; what other escapes leave is no bracket and no
        # quote. Only between the first backslash and the one after the last: a certificate's
        # "\n" sent every 2 MB sealed manifest down the token scan below (16 ms a pull).
        j = data.rfind(b"\\") + 2
        mid = data[i:j].replace(b"\\\\", b"").replace(b'\\"', b"")
        nest = b"".join(part.translate(None, _NOT_STRUCTURE) for part in (data[:i], mid, data[j:]))
    # strings, quote to quote: first every two quotes in a row (a string without brackets, or
    # one string's end and the next one's start: merged, what was inside stays inside) — on
    # 10,000 entries the regex alone took 4 ms, this 0.4 —, then the strings left
    nest = _PLAIN_STRING.sub(b"", nest.replace(b'""', b""))
    for _ in range(depth):  # each round takes the innermost pairs away
        if not nest:
            break
        nest = _LEAF.sub(b"", nest)
    if not nest:
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            raise Refused("document is not JSON") from None
    level = 0  # (too deep, or unbalanced: the scan says which)
    for m in _TOKENS.finditer(text):
        c = text[m.start()]  # (never copies a long string out)
        if c in "[{":
            level += 1
            if level > depth:
                raise Refused(f"document nested deeper than {depth} levels")
        elif c in "]}":
            level -= 1
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise Refused("document is not JSON") from None


def own_files(vault: str) -> list:
    """The session files this node owns (top level of its vault, no links)."""
    out = []
    try:
        with os.scandir(vault) as it:
            for e in it:
                if valid_file_name(e.name) and e.is_file(follow_symlinks=False):
                    out.append(e)
    except OSError:
        pass
    return sorted(out, key=lambda e: e.name)


def open_dir(parent_fd: int | None, name: str) -> int:
    """An fd for the real directory ``name`` (relative to ``parent_fd``); OSError for a link."""
    return os.open(name, DIR_FLAGS, dir_fd=parent_fd)


def make_dir_at(parent_fd: int, name: str) -> int:
    """An fd for the real directory ``name`` in ``parent_fd``, made owner-only if missing;
    Refused if it is a symlink or not a directory."""
    try:
        os.mkdir(name, 0o700, dir_fd=parent_fd)
    except FileExistsError:
        pass
    try:
        return open_dir(parent_fd, name)
    except OSError:
        raise Refused(f"{name} is a symlink or not a folder") from None


def read_fd(fd: int, limit: int, size: int) -> bytes:
    """At most ``limit`` + 1 bytes of open file ``fd``, whose size was ``size`` when stat'ed:
    one read of ``size`` + 1 bytes (the + 1 sees a file that grew), then to the end. A read
    asks for about what is there: Python allocates the whole request first, and
    ``open().read(MAX_FILE + 1)`` of 10,000 files was a 64 MiB mmap, mremap and munmap each
    (0.29 s a first sync, this 0.06). The read that finds the end asks for 64 KiB (under
    malloc's mmap threshold), more only while more comes."""
    chunks, left = [], limit + 1
    want = min(left, max(size, 0) + 1)
    while left > 0:
        b = os.read(fd, want)
        if not b:
            break
        chunks.append(b)
        left -= len(b)
        want = min(left, 1 << 16 if len(b) < want else 1 << 20)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_path(path: str, limit: int) -> bytes:
    """At most ``limit`` + 1 bytes of the file at ``path`` (:func:`read_fd`)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return read_fd(fd, limit, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def read_at(dir_fd: int, name: str, limit: int) -> bytes:
    """The bytes of regular file ``name`` in ``dir_fd``: never through a link, at most ``limit``."""
    fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{name} is not a regular file")
        if st.st_size > limit:
            raise Refused(f"{name}: {st.st_size} bytes (at most {limit})")
        data = read_fd(fd, limit, st.st_size)
        if len(data) > limit:
            raise Refused(f"{name}: more than {limit} bytes")
        return data
    finally:
        os.close(fd)


def write_at(dir_fd: int, name: str, data: bytes) -> list:
    """Write ``name`` in ``dir_fd`` atomically (temp file + rename), never through a link;
    returns its [size, mtime ns, inode]."""
    tmp = f".{name}.{os.getpid()}.part"
    stamp = create_at(dir_fd, tmp, data)
    # rename replaces a link at ``name`` itself (it never writes through it)
    os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    return stamp


def create_at(dir_fd: int, name: str, data: bytes) -> list:
    """Write ``name`` in ``dir_fd`` where nothing is (FileExistsError otherwise), never through
    a link; returns its [size, mtime ns, inode]. Not atomic: only for a file nobody reads
    before it is complete, or that is checked when read (a sealed blob on a shared medium,
    which no manifest names until it is written, and whose tag fails if it was cut short)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, _vault.FILE_MODE, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        os.unlink(name, dir_fd=dir_fd)
        raise
    os.close(fd)
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def peer_folder_fd(vault: str, name: str, own_name: str) -> int:
    """An fd for ``<vault>/peers/<name>``, created owner-only; Refused if a part is a link."""
    if not valid_name(name) or name == own_name:
        raise Refused(f"name {name!r} cannot be used for a peer folder")
    _vault.make_private_dirs(vault)
    fd = os.open(vault, DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        for part in (_vault.PEERS, name):
            sub = make_dir_at(fd, part)
            os.close(fd)
            fd = sub
        return fd
    except BaseException:
        os.close(fd)
        raise


def sha_at(dir_fd: int, name: str) -> str | None:
    try:
        return hashlib.sha256(read_at(dir_fd, name, MAX_FILE)).hexdigest()
    except (OSError, Refused):
        return None
