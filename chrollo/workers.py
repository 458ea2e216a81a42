"""Forked worker processes for a CPU-bound map (an index build's tokenising, a search's masks,
publishing's redaction).

A plain ``os.fork`` per worker and one pipe back — not ``multiprocessing.Pool`` nor a
``ProcessPoolExecutor``: a pool's ``terminate`` could wait forever on a queue lock a worker held when Ctrl-C reached it (the
parent then kept the index's write lock), and its workers each printed a traceback for it.
Here a worker ignores SIGINT (the parent alone answers Ctrl-C), dies with its parent (Linux:
PR_SET_PDEATHSIG, so a build killed with SIGKILL leaves no orphan holding an inherited lock),
and a parent that stops early for any reason kills its workers and reaps them before going on.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct

_HEAD = struct.Struct("<Q")


def imap_unordered(fn, items: list, workers: int):
    """``fn(item)`` for each of ``items`` in ``workers`` forked processes, results as they come
    (in no set order). An exception in a worker is raised here; leaving the loop early (an
    exception, Ctrl-C, ``close()``) kills the workers and waits for them."""
    run = Running(fn, items, workers)
    try:
        for _i, got in run.results():
            yield got
    finally:
        run.close()


def map_ordered(fn, items: list, workers: int) -> list:
    """``[fn(item) for item in items]``, worked out as :func:`imap_unordered` does."""
    run = Running(fn, items, workers)
    try:
        return run.ordered()
    finally:
        run.close()


class Running:
    """``fn`` over ``items`` in ``workers`` processes forked now (the caller goes on meanwhile:
    publishing reads the next files while these are redacted); :meth:`ordered` or
    :meth:`results` gives what they made, :meth:`close` — always called, ``finally`` — kills
    and reaps them, whatever they were doing."""

    def __init__(self, fn, items: list, workers: int):
        self.kids: list = []  # (pid, read end)
        self.n = len(items)
        parent = os.getpid()
        pairs = list(enumerate(items))
        try:
            for k in range(workers):
                r, w = os.pipe()
                # Ctrl-C is held back while forking: landing in the fork's own Python handlers
                # (logging's lock release) it is printed as "Exception ignored … KeyboardInterrupt"
                # and lost; held, it arrives in the parent once the child exists (the child
                # ignores it before letting it through, and a fork inherits no pending signal)
                held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
                try:
                    pid = os.fork()
                except BaseException:
                    signal.pthread_sigmask(signal.SIG_SETMASK, held)
                    raise
                if pid == 0:  # (never returns)
                    os.close(r)
                    for _, other in self.kids:
                        os.close(other)  # (a sibling's pipe: its reader must be the parent alone)
                    _child(lambda pair: (pair[0], fn(pair[1])), pairs[k::workers], w, parent, held)
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
                os.close(w)
                self.kids.append((pid, r))
        except BaseException:
            self.close()
            raise

    def results(self):
        """(index in ``items``, result) pairs as they come; a worker's exception raised here."""
        live = {r for _pid, r in self.kids}
        while live:
            for r in select.select(list(live), [], [])[0]:
                # (a worker writes a result whole once it has it: reading it blocks briefly)
                head = _read(r, _HEAD.size)
                if len(head) < _HEAD.size:
                    live.discard(r)
                    continue
                ok, got = pickle.loads(_read(r, _HEAD.unpack(head)[0]))
                if not ok:
                    raise got
                yield got

    def ordered(self) -> list:
        """Every result, in the order of ``items`` (a worker that died without one: KeyError)."""
        got = dict(self.results())
        return [got[i] for i in range(self.n)]

    def close(self) -> None:
        kids, self.kids = self.kids, []
        for pid, r in kids:
            os.close(r)
            try:
                os.kill(pid, signal.SIGKILL)  # (done already: it has exited, or is about to)
            except OSError:
                pass
        for pid, _r in kids:
            _reap(pid)


def _read(fd: int, n: int) -> bytes:
    """``n`` bytes from ``fd``, fewer only at its end."""
    parts, left = [], n
    while left:
        got = os.read(fd, min(left, 1 << 20))
        if not got:
            break
        parts.append(got)
        left -= len(got)
    return b"".join(parts)


def _reap(pid: int) -> None:
    while True:
        try:
            os.waitpid(pid, 0)
            return
        except InterruptedError:
            continue
        except ChildProcessError:
            return


def _child(fn, mine: list, w: int, parent: int, mask=None) -> None:
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _die_with_parent(parent)
        with os.fdopen(w, "wb") as out:
            for item in mine:
                try:
                    data, ok = pickle.dumps((True, fn(item)), protocol=pickle.HIGHEST_PROTOCOL), True
                except Exception as e:  # noqa: BLE001 — raised again in the parent
                    data, ok = _failure(e), False
                out.write(_HEAD.pack(len(data)))
                out.write(data)
                if not ok:
                    break
        code = 0
    except BaseException:  # noqa: BLE001 — the parent is gone or stopped reading: quietly
        pass
    finally:
        os._exit(code)


def _failure(e: Exception) -> bytes:
    try:
        return pickle.dumps((False, e))
    except Exception:  # noqa: BLE001 — an exception that cannot be pickled: its text
        return pickle.dumps((False, RuntimeError(f"{type(e).__name__}: {e}")))


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this worker when its parent dies (Linux), and exit now if it
    already has."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 — elsewhere a worker ends at its next write (EPIPE)
        pass
    if os.getppid() != parent:
        os._exit(1)
