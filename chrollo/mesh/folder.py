"""Transport: any folder a sync tool already replicates (Syncthing, iCloud Drive, Dropbox,
Obsidian Sync, a NAS or rclone mount). Moves bytes only; the trust layer decides.

This node writes its signed manifest and its redacted sessions to ``<folder>/<its node ID>/``
(``manifest.json`` last, so a peer never sees a manifest before the files it lists are
written here) and reads only ``<folder>/<paired ID>/`` of its paired peers, through
directory fds opened with ``O_NOFOLLOW``: a symlink, a foreign file or an unsigned manifest in
the folder is never followed and never taken.
"""
from __future__ import annotations

import bisect
import hashlib
import os
import stat

from .. import vault as _vault
from .files import (BATCH_BYTES, BATCH_FILES, MAX_OUTER, Refused, create_at, make_dir_at, open_dir, read_at,
                    valid_blob_name, write_at)
from . import records as _records
from .manifests import Source, TransportError, batches

READERS = 4  # threads reading a peer's files (a file's open and read wait on the disk, not on Python)

MANIFEST = "manifest.json"


def _root_fd(folder: str) -> int:
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        raise TransportError(f"cannot open the shared folder {folder}: {e.strerror}") from None


def reachable(folder: str) -> str | None:
    """Why the shared ``folder`` cannot be used at all (it cannot be opened), or None."""
    try:
        os.close(_root_fd(folder))
    except TransportError as e:
        return str(e)
    return None


SWEEP = 1000  # own files on the medium a publication stats even in a folder nobody else touched
INDEX = 2     # the format of the record of what this node wrote there


def publish(folder: str, node_id: str, pub, home: str) -> int:
    """Bring ``<folder>/<node_id>/`` to ``pub`` (a sealed publication); returns how many files
    were written. What this node wrote is remembered ({name: [file on the medium, token,
    size, mtime]}, and the folder's mtime after its last write): an unchanged file is not
    rewritten, one someone else changed is. While the folder's mtime is the one this node
    left (nobody added, removed or replaced a file there) an unchanged file is not even
    stat'ed, except for a sweep of SWEEP files a publication (an edit in place)."""
    try:
        return _publish(folder, node_id, pub, home)
    except OSError as e:  # (its name is relative to the folder: the node's id, a blob's — say the folder)
        raise TransportError(f"cannot write the shared folder {folder}: {e.strerror}") from None


def _publish(folder: str, node_id: str, pub, home: str) -> int:
    root = _root_fd(folder)
    try:
        fd = make_dir_at(root, node_id)
    except Refused:
        raise TransportError(f"{os.path.join(folder, node_id)} is a symlink or not a folder: "
                             "remove it (chrollo recreates it)") from None
    finally:
        os.close(root)
    written = 0
    from ..layout import mesh_folder_index, mesh_folder_log

    key = hashlib.sha256(os.path.realpath(folder).encode()).hexdigest()[:16]
    path, log = mesh_folder_index(key, home), mesh_folder_log(key, home)
    index, log_lines = _records.load(path, log, INDEX)
    whole, index = index is None, index or {}
    head = index.get("") if isinstance(index.get(""), dict) else {}  # ("": not a file name)
    index[""], changed = {}, {""}  # (until it is done: a publication that fails midway trusts nothing)
    try:
        trusted = not whole and head.get("dir") == os.fstat(fd).st_mtime_ns
        order = sorted(e["name"] for e in pub.entries)
        at = bisect.bisect_right(order, head.get("sweep") or "") if trusted else 0
        swept = (order[at:] + order[:at])[:SWEEP]
        sweep = set(swept)
        for e in pub.entries:
            real, token = e["name"], e["token"]
            rec = index.get(real)
            if trusted and rec and rec[1] == token and real not in sweep:
                continue  # as this node wrote it, in a folder nobody else touched
            name = rec[0] if rec and rec[1] == token else pub.blob(real)
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                stamp = [name, token, st.st_size, st.st_mtime_ns]
            except FileNotFoundError:
                stamp = False  # (nothing there)
            except OSError:
                stamp = None
            if not stamp or rec != stamp:
                try:
                    data = pub.data(real)
                    try:
                        if stamp is not False:
                            raise FileExistsError
                        # a new blob: written in place, no temp file and rename (a first sync
                        # writes 10,000 of them; a rename is a second journal entry each). No
                        # manifest names it until it is whole, and a cut one fails its tag.
                        got = create_at(fd, name, data)
                    except FileExistsError:
                        _clear(fd, name, dirs_only=True)
                        got = write_at(fd, name, data)
                except Refused:
                    continue  # changed while publishing: the next round carries it
                stamp = [name, token, got[0], got[1]]
                written += 1
            if rec != stamp:
                index[real] = stamp
                changed.add(real)
        listed = set(order)
        for real in [n for n in index if n and n not in listed]:  # no longer published: its file goes
            _clear(fd, index.pop(real)[0])
            changed.add(real)
        if not trusted:
            mine = {index[n][0] for n in listed if n in index}
            for name in os.listdir(fd):
                if name != MANIFEST and name not in mine and not name.startswith("."):
                    _clear(fd, name)  # ours to tidy: someone else's file, or an old one
        try:
            current = read_at(fd, MANIFEST, MAX_OUTER)
        except (OSError, Refused):
            current = None
        if current != pub.envelope:
            _clear(fd, MANIFEST, dirs_only=True)
            write_at(fd, MANIFEST, pub.envelope)
        index[""] = {"dir": os.fstat(fd).st_mtime_ns, "sweep": swept[-1] if swept else ""}
    finally:
        os.close(fd)
        _vault.make_private_dirs(os.path.dirname(path))
        _records.keep(path, log, INDEX, index, changed, whole, log_lines)
    return written


def _clear(fd: int, name: str, dirs_only: bool = False) -> None:
    """Remove whatever is at ``name`` in this node's own folder — a file, a link (never
    followed) or a directory someone planted there (a folder where ``manifest.json`` belongs
    made every sync die); it is this node's folder, nobody else's to fill."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return
    try:
        if stat.S_ISDIR(st.st_mode):
            import shutil  # (here: its import, with bz2 and lzma, was ~2 ms of every sync)

            shutil.rmtree(name, dir_fd=fd)  # (fd-based: never follows a link inside)
        elif not dirs_only:  # (a file or link at a name about to be written is replaced by the rename)
            os.unlink(name, dir_fd=fd)
    except OSError:
        pass


class FolderSource(Source):
    def __init__(self, folder: str):
        self.folder = folder

    def _peer_dir(self, peer_id: str) -> int | None:
        root = _root_fd(self.folder)
        try:
            return open_dir(root, peer_id)
        except FileNotFoundError:
            return None
        except OSError:
            raise Refused(f"{peer_id}/ in the shared folder is a symlink or not a folder") from None
        finally:
            os.close(root)

    def manifest(self, peer_id: str) -> bytes | None:
        fd = self._peer_dir(peer_id)
        if fd is None:
            return None
        try:
            return read_at(fd, MANIFEST, MAX_OUTER)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise Refused(f"{peer_id}/{MANIFEST}: {e.strerror} (a symlink?)") from None
        finally:
            os.close(fd)

    def file(self, peer_id: str, name: str, size: int) -> bytes:
        fd = self._peer_dir(peer_id)
        if fd is None:
            raise TransportError(f"{peer_id}/ vanished from the shared folder")
        try:
            return _read(fd, name, size)
        finally:
            os.close(fd)

    def files(self, peer_id: str, entries: list):
        """The peer's folder opened once (not once a file) and its files read by READERS
        threads, a batch at a time (memory stays bounded)."""
        try:
            fd = self._peer_dir(peer_id)
        except Refused as err:
            fd = err
        if not isinstance(fd, int):
            err = fd or TransportError(f"{peer_id}/ vanished from the shared folder")
            for e in entries:
                yield e, err
            return

        def one(e):
            try:
                return _read(fd, e["name"], e["size"])
            except (Refused, TransportError, OSError) as err:
                return err
        try:
            if len(entries) <= READERS:  # (a new turn: one file; threads, their import included, cost more)
                for e in entries:
                    yield e, one(e)
                return
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(READERS) as pool:
                for run in batches(entries, BATCH_BYTES, BATCH_FILES):
                    yield from zip(run, pool.map(one, run))
        finally:
            os.close(fd)


def _read(fd: int, name: str, size: int) -> bytes:
    if not valid_blob_name(name):
        raise Refused(f"file name refused: {name!r}")
    try:
        return read_at(fd, name, size)
    except FileNotFoundError:
        raise TransportError(f"{name}: not in the shared folder yet") from None
    except OSError as e:
        raise Refused(f"{name}: {e.strerror} (a symlink?)") from None
