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
import re
import time


def now(strict: bool = True) -> dt.datetime:
    """Now, aware (``CHROLLO_NOW`` if set). A ``CHROLLO_NOW`` that is not ISO 8601 is a usage
    error (``bad_clock``), or with ``strict=False`` (capture: a hook never fails) the real now."""
    env = os.environ.get("CHROLLO_NOW")
    if env:
        try:
            t = dt.datetime.fromisoformat(_calendar(env))
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


def _calendar(text: str) -> str:
    """An ISO 8601 ordinal date (``2026-330``, ``2026330T10:00``) as a calendar date, the one
    ISO form Python 3.11's ``fromisoformat`` does not read; anything else unchanged."""
    m = re.match(r"(\d{4})-?(\d{3})(?=$|T)", text)
    if not m or not 1 <= int(m.group(2)) <= 366:
        return text
    day = dt.date(int(m.group(1)), 1, 1) + dt.timedelta(days=int(m.group(2)) - 1)
    if day.year != int(m.group(1)):  # day 366 of a common year
        return text
    return day.isoformat() + text[m.end():]


def local(when: dt.datetime) -> dt.datetime:
    """``when`` as the machine's naive wall-clock time (a naive time is taken as one already)."""
    return when.astimezone().replace(tzinfo=None) if when.tzinfo else when


def process_started() -> float:
    """When this process started, on time.monotonic()'s scale: the recall hook's deadline counts
    from there — the harness waits from the moment it started the process, and the interpreter's
    start and chrollo's imports (40–60 ms) come before any line of chrollo runs. From the
    kernel's start time (Linux ``/proc/self/stat``, in clock ticks: up to one tick early, never
    late); elsewhere, now."""
    mono = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read()
        ticks = int(stat[stat.rindex(b")") + 2:].split()[19])  # (field 22; the name may hold spaces)
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return mono
    return mono - age if 0 <= age < 60 else mono  # (a clock that disagrees: trust none of it)
