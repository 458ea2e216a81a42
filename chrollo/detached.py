"""Work a command leaves to a process of its own: started detached, found by its lock.

A hook or a search must answer at once; what can wait (settling a turn the harness has not
written yet, an index build, a listing of a large vault) runs in a new Python process in a
session of its own — its output nowhere, no descriptor of ours kept — and says it is under
way by holding an flock on a file, which the kernel lets go of however it ends.
Stdlib only.
"""
from __future__ import annotations

import os


def start(code: str, *args: str) -> bool:
    """Run ``python -c code args…`` detached (see the module doc); False if it could not be started."""
    import subprocess
    import sys

    try:
        subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError:
        return False
    return True


def held(lock: str) -> bool:
    """Whether a process holds the flock on ``lock`` (its work is under way); False when the
    file is not there."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)
