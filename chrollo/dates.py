"""The one date grammar of every option that takes a date (``--since``, ``--until``, …).

Accepted, case-insensitively:

* ``today``, ``yesterday`` — the start of that day (as an upper bound: its end);
* ``Nd``, ``Nw``, ``Nm``, ``Ny`` — N days, weeks, calendar months or years before now
  (``7d``, ``2w``, ``3m``; ``1y``);
* an ISO date ``2026-06-01`` — its start (as an upper bound: its end, so ``--until
  2026-06-01`` includes that day);
* an ISO date-time ``2026-06-01T14:30[:00]``, naive (local time) or with an offset
  (``Z``, ``+02:00``), which is converted to local time.

Everything returned is a naive local datetime, as session files are stamped. Dates before
1970 are refused (a file time cannot hold them); dates up to 9999-12-31 are accepted (one
whose local time is past it is the last instant there is). Errors are usage errors
(``bad_date``).
"""
from __future__ import annotations

import datetime as dt
import re

from .errors import UsageError

_RELATIVE = re.compile(r"(\d{1,5})\s*(d|w|m|y)", re.I)
FORMS = "today, yesterday, 7d, 2w, 3m, 1y, 2026-06-01 or 2026-06-01T14:30+02:00"


def now() -> dt.datetime:
    """The one clock (:mod:`chrollo.clock`), as naive local time like session files' stamps."""
    from .clock import local, now as _now

    return local(_now())


def parse(value, *, end: bool = False, option: str = "--since", at: dt.datetime | None = None) -> dt.datetime | None:
    """``value`` as a naive local datetime (None for None/""). ``end``: the value is an upper
    bound, so a day stands for its last instant. ``at``: now (default: :func:`now`)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, dt.datetime):
        when = _local(value)
    elif isinstance(value, dt.date):
        when = _day(value, end)
    else:
        when = _parse_text(str(value).strip(), end, option, at)
    if when.year < 1970:
        raise UsageError(f"{option} must be a date from 1970-01-01 on, got {value!s}", kind="bad_date")
    return when


def _parse_text(text: str, end: bool, option: str, at) -> dt.datetime:
    low = text.lower()
    if low in ("today", "yesterday", "now"):
        ref = at or now()
        if low == "now":
            return ref
        return _day(ref.date() - dt.timedelta(days=low == "yesterday"), end)
    m = _RELATIVE.fullmatch(low)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        ref = at or now()
        if unit in "dw":
            return ref - dt.timedelta(days=n * (7 if unit == "w" else 1))
        months = n * (12 if unit == "y" else 1)
        y, mo = divmod(ref.month - 1 - months, 12)
        year, month = ref.year + y, mo + 1
        if year < 1:
            raise UsageError(f"{option}: {text} reaches before year 1", kind="bad_date")
        import calendar

        return ref.replace(year=year, month=month, day=min(ref.day, calendar.monthrange(year, month)[1]))
    try:
        if len(text) == 10:
            return _day(dt.date.fromisoformat(text), end)
        return _local(dt.datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00")))
    except ValueError:
        raise UsageError(f"{option} takes a date ({FORMS}), got {text!r}", kind="bad_date") from None


def _day(d: dt.date, end: bool) -> dt.datetime:
    return dt.datetime.combine(d, dt.time.max if end else dt.time())


def _local(when: dt.datetime) -> dt.datetime:
    """``when`` as naive local time; a time whose local reading is past year 9999
    (``9999-12-31T23:59:59-14:00``) is the last instant there is (before year 1: the first,
    which :func:`parse` refuses as before 1970)."""
    if not when.tzinfo:
        return when
    try:
        return when.astimezone().replace(tzinfo=None)
    except (OverflowError, OSError):
        return dt.datetime.max if when.year > 1 else dt.datetime.min


def name_stamp(when: dt.datetime) -> str:
    """``when`` as a session file name starts (``YYYY-MM-DD_HHMMSS``): names compare as times."""
    return when.strftime("%Y-%m-%d_%H%M%S")
