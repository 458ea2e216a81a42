"""Programs chrollo starts, found on PATH — never in the working folder (docs/design.md §3).

An empty PATH entry (``PATH=:/usr/bin``, a leading, trailing or doubled ``:``) or a relative
one means "the current folder" to the shell, ``shutil.which`` and ``execvp``: a downloaded
repository holding an executable ``git``, ``rg`` or ``chrollo`` would run in their place
when chrollo is started from it (a hook's cwd is the agent's). :func:`which` skips every
entry that is not absolute. Stdlib only, no shutil (its import costs the hook path).
"""
from __future__ import annotations

import os


def which(name: str) -> str | None:
    """The absolute path of the executable ``name`` in PATH's absolute folders, or None."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isabs(folder):
            continue  # (empty or relative: the working folder)
        found = os.path.join(folder, name)
        if os.path.isfile(found) and os.access(found, os.X_OK):
            return found
    return None
