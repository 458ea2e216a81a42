"""Which session files capture changed since the mesh last published: a journal, so that
publishing stats and reads those files, not the 10,000 others (docs/design.md §8).

The journal (``layout.mesh_changes(vault)``, 0600) is a first line holding a generation (random
hex), then one session file name per line. Capture appends a name after the bytes of the turn
are written (:func:`note`): a name in the journal means the change is already on disk. Only
publishing creates the journal (:func:`restart`), so a vault that is never published costs
capture one failed ``open`` per turn. Bounded: once it holds MAX_BYTES, capture stops writing
to it and the next publication reads every file (:func:`since` answers None).

A missed line — a crash between a turn's bytes and its note, a full disk, a journal deleted
or damaged — never hides a change for long: the reader answers None for a journal it cannot
trust, and a change no line names is found by publishing's bounded checks (the folder's
mtime, a sweep of files by stat, a full walk at least daily; chrollo/mesh/manifests.py).

Stdlib only and cheap: capture's hook calls :func:`note` on every turn.
"""
from __future__ import annotations

import os

from . import layout as _layout

MAX_BYTES = 1 << 20   # ~25,000 names; past it the next publication walks the vault
_FLAGS = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def note(vault: str, name: str) -> None:
    """Capture changed ``vault``/``name`` (its bytes are written). Never raises."""
    try:
        fd = os.open(_layout.mesh_changes(vault), os.O_WRONLY | os.O_APPEND | _FLAGS)  # (no O_CREAT: see above)
    except OSError:
        return
    try:
        if os.fstat(fd).st_size < MAX_BYTES and "\n" not in name:
            os.write(fd, (name + "\n").encode("utf-8", "surrogateescape"))
    except OSError:
        pass
    finally:
        os.close(fd)


def restart(vault: str, home: str | None = None) -> tuple[str, int]:
    """A fresh, empty journal for ``vault`` (a new generation); returns (generation, offset).
    Call it *before* reading the vault whole: a change noted in the old journal after this
    was written to its file before, so the walk that follows sees it."""
    from .homedir import write_private

    gen = os.urandom(8).hex()
    write_private(_layout.mesh_changes(vault, home), gen + "\n")
    return gen, len(gen) + 1


def since(vault: str, gen: str, offset: int, home: str | None = None) -> tuple[set, int] | None:
    """(the names noted after ``offset``, the offset after them) in ``vault``'s journal of
    generation ``gen``; None when it cannot be trusted to hold every change since (missing,
    another generation, full, a line that is not a name): the caller reads the vault whole."""
    if not isinstance(gen, str) or not isinstance(offset, int):
        return None
    try:
        fd = os.open(_layout.mesh_changes(vault, home), os.O_RDONLY | _FLAGS)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        head = os.pread(fd, 64, 0).split(b"\n", 1)[0]
        if size >= MAX_BYTES or head != gen.encode() or not len(head) < offset <= size:
            return None
        data = os.pread(fd, size - offset, offset)
    except OSError:
        return None
    finally:
        os.close(fd)
    end = data.rfind(b"\n") + 1  # (a line still being appended waits for the next read)
    names = set()
    for line in data[:end].split(b"\n")[:-1]:
        name = line.decode("utf-8", "surrogateescape")
        if not name.endswith(".md") or "/" in name or name.startswith("."):
            return None  # (a damaged journal: no line of it is trusted)
        names.add(name)
    return names, offset + end


def drop(home: str | None = None) -> None:
    """Delete every journal (they hold file names, and a format-2 name holds its title's first
    words): `chrollo forget` calls this; the next publication walks the vault and starts one."""
    folder = _layout.mesh_changes_dir(home)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for n in names:
        try:
            os.unlink(os.path.join(folder, n))
        except OSError:
            pass
