"""What a node offers (its manifest) and how received files land — only ever in peers/<node>/.

A manifest lists the sessions this node owns: the top-level session files of its vault (never
``peers/``: a node serves only its own), each as ``{"name", "sha256", "size"}`` of the
*redacted* bytes — what a peer will actually receive. Hashes are cached by (size, mtime).

Everything received is checked before a byte is written: the peer's node name and every file
name must match their patterns (no separators, no dot files, no traversal), sizes and counts
are bounded, the folder must not be a symlink, and a body must match its manifest's size and
sha256. A file is written to a temp file in the peer's folder and renamed into place, so a
killed transfer leaves nothing half-written. Local sessions are never touched.
"""
from __future__ import annotations

import hashlib
import json
import os

from .. import vault as _vault
from .config import valid_name

MAX_FILE = 64 << 20          # one session file
MAX_FILES = 100_000          # entries in a manifest
MAX_MANIFEST = 32 << 20      # bytes of a manifest


class Refused(Exception):
    """Something a peer sent that chrollo will not accept (the reason is the message)."""


def valid_file_name(name) -> bool:
    return (isinstance(name, str) and 0 < len(name) <= 255 and not name.startswith(".")
            and "/" not in name and "\\" not in name and "\x00" not in name
            and bool(_vault.SESSION_NAME_RE.match(name)))


def own_files(vault: str) -> list:
    """The session files this node owns (top level of its vault, no links)."""
    out = []
    try:
        with os.scandir(vault) as it:
            for e in it:
                if e.is_file(follow_symlinks=False) and valid_file_name(e.name):
                    out.append(e)
    except OSError:
        pass
    return sorted(out, key=lambda e: e.name)


def manifest(vault: str, redactor, cache_path: str | None = None) -> list:
    """[{name, sha256, size}] of this node's sessions as they are sent (redacted)."""
    cache = _vault.read_json(cache_path) if cache_path else {}
    fresh, out = {}, []
    for e in own_files(vault):
        st = e.stat(follow_symlinks=False)
        if st.st_size > MAX_FILE:
            continue
        stamp = [st.st_size, st.st_mtime_ns]
        hit = cache.get(e.name)
        if hit and hit[:2] == stamp:
            sha, size = hit[2], hit[3]
        else:
            data = outgoing(os.path.join(vault, e.name), redactor)
            sha, size = hashlib.sha256(data).hexdigest(), len(data)
        fresh[e.name] = stamp + [sha, size]
        out.append({"name": e.name, "sha256": sha, "size": size})
    if cache_path and fresh != cache:
        _vault.write_private(cache_path, json.dumps(fresh))
    return out


def outgoing(path: str, redactor) -> bytes:
    """A session file's bytes as they leave this machine."""
    with open(path, "rb") as fh:
        return redactor.redact_bytes(fh.read(MAX_FILE + 1))


def check_manifest(node, entries) -> list:
    """The entries of a peer's manifest, or Refused (nothing of a bad manifest is used)."""
    if not valid_name(node):
        raise Refused(f"bad node name {str(node)[:40]!r}")
    if not isinstance(entries, list):
        raise Refused("manifest is not a list")
    if len(entries) > MAX_FILES:
        raise Refused(f"manifest lists {len(entries)} files (at most {MAX_FILES})")
    seen = set()
    for x in entries:
        if not isinstance(x, dict):
            raise Refused("manifest entry is not an object")
        name, sha, size = x.get("name"), x.get("sha256"), x.get("size")
        if not valid_file_name(name):
            raise Refused(f"file name refused: {str(name)[:80]!r}")
        if name in seen:
            raise Refused(f"file listed twice: {name}")
        seen.add(name)
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_FILE:
            raise Refused(f"size refused for {name}: {str(size)[:20]}")
        if not isinstance(sha, str) or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise Refused(f"sha256 refused for {name}")
    return entries


def peer_folder(vault: str, node: str, own_name: str) -> str:
    """``<vault>/peers/<node>``, created owner-only; Refused if it would be anything else."""
    if not valid_name(node) or node == own_name:
        raise Refused(f"node name {node!r} cannot be used for a peer folder")
    peers = os.path.join(vault, _vault.PEERS)
    folder = os.path.join(peers, node)
    for p in (peers, folder):
        if os.path.islink(p):
            raise Refused(f"{p} is a symlink")
    _vault.make_private_dirs(folder)
    real = os.path.realpath(folder)
    if os.path.dirname(real) != os.path.realpath(peers) or os.path.dirname(os.path.realpath(peers)) != os.path.realpath(vault):
        raise Refused(f"{folder} does not resolve inside the vault")
    return folder


def receive(folder: str, entry: dict, data: bytes) -> str:
    """Write one verified file into the peer's folder, atomically; returns its path."""
    name = entry["name"]
    if not valid_file_name(name):
        raise Refused(f"file name refused: {name!r}")
    if len(data) != entry["size"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise Refused(f"{name}: body does not match the manifest (size or sha256)")
    dest = os.path.join(folder, name)
    if os.path.islink(dest):
        raise Refused(f"{dest} is a symlink")
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.part")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, _vault.FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, dest)
    return dest


def local_sha(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None
