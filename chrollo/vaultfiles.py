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
    out = []
    stack = [(os.fsencode(folder), False)]
    while stack:
        d, in_peers = stack.pop()
        stamp = dir_stamp(d)
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
                    if hidden(name) or (exclude_peers and name == b"peers") \
                            or (in_peers and os.fsdecode(name) in unsearchable):
                        continue
                    stack.append((e.path, name == b"peers"))
                elif name.endswith(b".md") and e.is_file(follow_symlinks=False):
                    out.append((e.path, e))
            except OSError:
                continue
    return out


def hidden(name: bytes) -> bool:
    """Whether rg skips a folder so named: a hidden one, unless chrollo's ``-g '*.md'``
    matches its name (``.notes.md/``: the glob whitelists the folder itself, and rg then
    reads its ``*.md`` files)."""
    return name.startswith(b".") and not name.endswith(b".md")


def dir_stamp(path: bytes):
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
