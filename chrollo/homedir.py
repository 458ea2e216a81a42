"""chrollo's home and the owner-only primitives every module shares (docs/design.md §3).

``CHROLLO_HOME`` (default ``~/.chrollo``) and its ``state/`` and ``logs/``; folders made 0700
and files written 0600, atomically; state keys, logs, lock files; the project a folder belongs
to (its nearest ``.chrollo``, up to the git root); the session files of a folder.

Below :mod:`chrollo.vault` (which vault is used) and :mod:`chrollo.project_trust` (whether a
project's own vault may be): both build on this, so neither needs the other's internals and
the two do not import each other. Stdlib only, cheap to import (the hooks load it on every call).
"""
from __future__ import annotations

import os

from .layout import home_path, log_file, state_key  # noqa: F401  (home_path, state_key: re-exported)

TYPE_CHECKING = False  # (not typing.TYPE_CHECKING: importing typing costs the hot path too)
if TYPE_CHECKING:
    from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
PEERS = "peers"  # <vault>/peers/<peer>/: the files other machines shared


def home() -> "Path":
    """chrollo's home folder (not created)."""
    from pathlib import Path

    return Path(home_path())


def walk_up(start: str, found, to_git_root: bool = False) -> str | None:
    """The nearest folder at or above ``start`` for which ``found(folder)`` is true, or None.

    The one upward walk (docs/design.md §3). Stop rules: the filesystem root; with
    ``to_git_root``, the nearest folder holding ``.git`` — looked at, then not passed (a
    repository's settings never come from the folders that hold it)."""
    d = start
    while True:
        if found(d):
            return d
        parent = os.path.dirname(d)
        if parent == d or (to_git_root and os.path.exists(os.path.join(d, ".git"))):
            return None
        d = parent


def nearest_holding(start: str, name: str, test=os.path.exists) -> str | None:
    """The nearest folder at or above ``start`` holding ``name`` (``test``: what must hold of
    it, e.g. os.path.isdir), or None."""
    return walk_up(start, lambda d: test(os.path.join(d, name)))


def git_root(start: str) -> str | None:
    return nearest_holding(start, ".git")


def working_folder() -> str | None:
    """The process's working folder (real path), or None when it was deleted since: then no
    project vault is found there and the global vault is used, as from any folder outside one."""
    try:
        return os.path.realpath(os.getcwd())
    except OSError:
        return None


def find_project(start: str) -> str | None:
    """The folder holding the nearest ``.chrollo`` (of any kind, links too) from the real path
    ``start`` up to its git root; ``~`` itself does not count (``~/.chrollo`` is the home)."""
    user_home = os.path.realpath(os.path.expanduser("~"))
    return walk_up(start, lambda d: d != user_home and os.path.lexists(os.path.join(d, ".chrollo")),
                   to_git_root=True)


def ensure_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents owner-only."""
    make_private_dirs(str(path))
    return path


def make_private_dirs(path: str) -> str:
    """:func:`ensure_dir` on a plain string (``os.makedirs`` would give parents the umask's
    mode). Only the folders created here are made 0700: chrollo never changes the mode of a
    folder it did not create (``chrollo doctor`` reports a vault others can read)."""
    missing = []
    p = path
    while not os.path.exists(p) and os.path.dirname(p) != p:
        missing.append(p)
        p = os.path.dirname(p)
    for d in reversed(missing):
        try:
            os.mkdir(d, DIR_MODE)
        except FileExistsError:
            continue
        try:
            if os.stat(d).st_mode & 0o077:  # (mkdir's mode is only a ceiling under the umask)
                os.chmod(d, DIR_MODE)
        except OSError:
            pass
    return path


def write_private(path: str, text: str | bytes) -> None:
    """Replace ``path`` with ``text`` (or bytes) atomically (temp file + rename), owner-only,
    creating its folders owner-only: every file of chrollo's state is written through here."""
    make_private_dirs(os.path.dirname(path))
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        # (surrogateescape: a path from argv may hold bytes that are not UTF-8; they go back
        # to disk as the same bytes, and read_json reads them back as the same path)
        with (os.fdopen(fd, "wb") if isinstance(text, bytes) else
              os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape")) as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:  # (a full disk): no half-written temp file stays behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_json(path, comments: bool = False) -> dict:
    """The JSON object a file holds — a state file (some are caches of tens of MB: read whole),
    or a harness's settings or manifest (``comments``: ``//`` and ``/* */`` allowed, as
    harnesses read theirs). {} if it is missing, unreadable, not a regular file, not JSON or
    not an object: state is disposable and a harness file that is none of these is no settings
    at all. Opened non-blocking, so a FIFO or a device at that path is refused, never waited
    on; a link is followed (dotfile managers link settings files)."""
    import json
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}
            raw = fh.read()
        text = raw.decode("utf-8", "surrogateescape")
        if comments:
            from . import jsonc

            data = jsonc.loads(text)
        else:
            data = json.loads(text)
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


LOG_MAX = 1 << 20


def append_log(name: str, message: str, who: str = "chrollo") -> None:
    """Append a stamped entry to ``$CHROLLO_HOME/logs/<name>.log`` (0600, rotated to ``.1``
    past 1 MiB). Never raises: if the log cannot be written, its first line goes to stderr."""
    import sys
    import time

    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message.rstrip()}\n"
    try:
        path = log_file(name)
        make_private_dirs(os.path.dirname(path))
        try:
            if os.path.getsize(path) > LOG_MAX:
                os.replace(path, path + ".1")
        except OSError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001
        try:
            sys.stderr.write(f"{who}: " + line.splitlines()[0][:300] + "\n")
        except Exception:  # noqa: BLE001
            pass


def open_lock(path) -> int:
    """A lock file's descriptor; created (owner-only) only the first time. Opening an existing
    file without O_CREAT skips the directory update that costs ~0.3 ms on a busy disk."""
    try:
        return os.open(path, os.O_RDWR)
    except FileNotFoundError:
        make_private_dirs(os.path.dirname(str(path)))
        return os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)


def iter_session_files(vault: "Path", peers: bool = True):
    """Every ``*.md`` session file under the vault, sorted — the files a search reads
    (:func:`chrollo.vaultfiles.walk`, the one walk: symlinks and hidden folders skipped but
    for a hidden folder named ``*.md``; ``peers``: with the peers' copies)."""
    from pathlib import Path

    from .vaultfiles import walk

    return sorted(Path(os.fsdecode(p)) for p, _e in walk(os.fspath(vault), exclude_peers=not peers))
