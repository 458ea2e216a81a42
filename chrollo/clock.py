"""The one clock (docs/design.md §12): what "now" is for capture, search, recall and forget.

``CHROLLO_NOW`` freezes it (tests, reproducible runs) in any ISO 8601 form Python reads:
``2026-11-25T10:00:00`` (naive: the machine's wall clock, as it always meant),
``2026-11-25T10:00:00Z``, ``2026-11-25T10:00:00+02:00``. :func:`now` is always aware, so an
offset and a naive clock never meet in one subtraction; :func:`local` turns an aware time into
the naive wall-clock time session files hold (their names, ``started:`` and turn headers).
"""
from __future__ import annotations

import datetime as dt
import os


def now(strict: bool = True) -> dt.datetime:
    """Now, aware (``CHROLLO_NOW`` if set). A ``CHROLLO_NOW`` that is not ISO 8601 is a usage
    error (``bad_clock``), or with ``strict=False`` (capture: a hook never fails) the real now."""
    env = os.environ.get("CHROLLO_NOW")
    if env:
        try:
            t = dt.datetime.fromisoformat(env)
            if not 1 < t.year < 9999:  # (a day from the ends of datetime's range: offsets and
                raise ValueError       # local time would overflow past them, in astimezone or later)
        except ValueError:
            if strict:
                from .errors import UsageError

                raise UsageError(f"CHROLLO_NOW is not an ISO date/time from year 2 to 9998: {env!r}",
                                 kind="bad_clock") from None
        else:
            return t if t.tzinfo else t.astimezone()
    return dt.datetime.now().astimezone()


def local(when: dt.datetime) -> dt.datetime:
    """``when`` as the machine's naive wall-clock time (a naive time is taken as one already)."""
    return when.astimezone().replace(tzinfo=None) if when.tzinfo else when
