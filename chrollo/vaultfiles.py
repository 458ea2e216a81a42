"""Which files are a vault's sessions: the one walk every reader shares (docs/design.md §3).

What ripgrep searches under a folder with chrollo's globs: ``*.md`` files, hidden folders and
symlinks skipped, hidden ``*.md`` files kept (rg's ``-g '*.md'`` whitelists them), ``peers/``
left out on request and unsearchable peers' folders always. The index builds from it, keeps
in step by listing folders as it does (:func:`folder_listing`), and counts a vault with it.
Stdlib only.
"""
from __future__ import annotations

import os
import time


def walk(folder: str, exclude_peers: bool = False, unsearchable: frozenset = frozenset(),
         dirs: list | None = None) -> list:
    """The files rg searches under ``folder`` with chrollo's globs (``*.md``, ``!peers/`` when
    ``exclude_peers``, ``!**/peers/NAME/**`` for the ``unsearchable`` peers), as
    ``(path bytes, DirEntry)``: hidden folders (see :func:`hidden`) and symlinks skipped,
    hidden ``*.md`` files kept (rg's ``-g '*.md'`` whitelists them). ``dirs`` gets each folder walked as
    ``(path bytes, its mtime_ns taken before it was listed, when)`` (see :func:`dir_stamp`)."""
    return list(files(os.fsencode(folder), exclude_peers, unsearchable, dirs))


def files(folder, exclude_peers: bool = False, unsearchable: frozenset = frozenset(),
          dirs: list | None = None, stop: float | None = None):
    """:func:`walk`'s files one by one as ``(path, DirEntry)``, paths of ``folder``'s type (str
    or bytes), each folder read as it is reached (a caller that stops early — :func:`more_than`
    — lists no further; a folder that fails mid-listing gives the files listed before and is
    not in ``dirs``). ``stop`` (a time.monotonic()): TimeoutError once it passes — a search with
    a deadline must not finish listing 250,000 names (~0.45 s) after it."""
    text = isinstance(folder, str)
    seen = 0
    md, peers = (".md", "peers") if text else (b".md", b"peers")
    skip = hidden_name if text else hidden
    stack = [(folder, False)]
    while stack:
        d, in_peers = stack.pop()
        if stop is not None and time.monotonic() >= stop:
            raise TimeoutError("the walk's deadline passed")
        stamp = dir_stamp(d, follow=d is folder)  # (rg follows the folder it is given, not those below)
        if stamp is None:
            continue
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            while True:
                try:
                    e = next(it)
                except StopIteration:
                    if dirs is not None:
                        dirs.append((d, *stamp))
                    break
                except OSError:  # a folder can fail mid-listing (/proc's per-process folders: EINVAL)
                    break
                seen += 1
                if stop is not None and not seen & 1023 and time.monotonic() >= stop:
                    raise TimeoutError("the walk's deadline passed")
                name = e.name
                try:
                    if name.endswith(md) and e.is_file(follow_symlinks=False):
                        yield e.path, e
                    elif e.is_dir(follow_symlinks=False):
                        if skip(name) or (exclude_peers and name == peers) \
                                or (in_peers and os.fsdecode(name) in unsearchable):
                            continue
                        stack.append((e.path, name == peers))
                except OSError:
                    continue


def more_than(folder: str, most: int) -> bool:
    """Whether rg would read more than ``most`` files under ``folder`` (peers included)."""
    for n, _f in enumerate(files(folder), 1):
        if n > most:
            return True
    return False


def keys(folder: str, exclude_peers: bool = False, dirs: dict | None = None, stop: float | None = None) -> list:
    """:func:`walk`'s files as sort keys (str): the file name — sessions are named by their
    start time — and, below the top folder, ``name\\0relpath``. ``dirs`` gets each folder
    walked, relative (``""`` the top), and its mtime_ns. ``stop``: see :func:`files`."""
    cut = len(folder.rstrip("/")) + 1
    walked: list | None = [] if dirs is not None else None
    out = [p[cut:] for p, _e in files(folder, exclude_peers, dirs=walked, stop=stop)]
    for i, rel in enumerate(out):
        if "/" in rel:
            out[i] = f"{rel[rel.rfind('/') + 1:]}\0{rel}"
    if dirs is not None:
        for d, mtime, _now in walked:
            dirs[d[cut:]] = mtime
    return out


def hidden(name: bytes) -> bool:
    """Whether rg skips a folder so named: a hidden one, unless chrollo's ``-g '*.md'``
    matches its name (``.notes.md/``: the glob whitelists the folder itself, and rg then
    reads its ``*.md`` files)."""
    return name.startswith(b".") and not name.endswith(b".md")


def hidden_name(name: str) -> bool:
    """:func:`hidden` for a name as str."""
    return name.startswith(".") and not name.endswith(".md")


def dir_stamp(path: bytes, follow: bool = False):
    """(mtime_ns, now) of a folder, taken before it is listed: a name added, removed or renamed
    in it later moves its mtime. None if it is not a folder (a symlink is not, unless ``follow``)."""
    now = time.time_ns()
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None
    if (st.st_mode & 0o170000) != 0o040000:
        return None
    return st.st_mtime_ns, now


def folder_listing(path: bytes):
    """One folder as rg would see it: ((mtime_ns, now) taken before listing, {name: inode} of
    its ``*.md`` regular files, [its subfolders' names, hidden ones left out]), or None."""
    stamp = dir_stamp(path)
    if stamp is None:
        return None
    files, subs = {}, []
    try:
        with os.scandir(path) as it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        if not hidden(e.name):
                            subs.append(e.name)
                    elif e.name.endswith(b".md") and e.is_file(follow_symlinks=False):
                        files[e.name] = e.inode()
                except OSError:
                    continue
    except OSError:
        return None
    return stamp, files, subs
