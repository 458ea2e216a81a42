"""Dates a query names ("in July", "on 9 November, 2022", "2023-06-03"), and whether a session
is from one of them (see tuning.DATE_WEIGHT)."""
from __future__ import annotations

import datetime as dt
import re

from . import tuning

_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
_FULL_MONTHS = frozenset(_MONTHS)
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())}, sept=9)
_ORD = r"(?:st|nd|rd|th)?"
_DATE_RE = re.compile(
    r"\b(?P<iso>(?P<iy>\d{4})-(?P<im>\d{2})(?:-(?P<id>\d{2}))?)\b"
    r"|(?<![\d.\/])(?P<na>\d{1,2})(?P<sep>[./])(?P<nb>\d{1,2})(?P=sep)(?P<ny>(?:19[7-9]|20\d)\d)\b(?![.\/]\d)"
    r"|(?:\b(?P<d1>\d{1,2})" + _ORD + r"\s+(?:of\s+)?)?\b(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True))
    + r")\b\.?(?:\s+(?P<d2>\d{1,2})" + _ORD + r"\b(?![.:\d]))?(?:(?:,\s*|\s+)(?P<y>\d{4})\b)?"
    r"|\b(?:in|of|since|during|from|until|before|after|year)\s+(?P<yo>(?:19[7-9]|20\d)\d)\b(?!-\d)", re.I)
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split()
                      + "mon tue tues wed thu thur thurs fri sat sun".split())
# (words that make "may" or "march" a month: "in May", not "what may happen")
_MAY = re.compile(r"(?:in|of|since|during|from|until|before|after|early|late|mid|last|this|next|by)\W*$", re.I)


def calendar_word(word: str) -> bool:
    """Whether ``word`` names a month or a weekday ("July", "Sept", "Friday"): capitalized in
    English, yet not a name the memory must know."""
    w = word.lower()
    return w in _MONTHS or w in _WEEKDAYS


def named_dates(query: str) -> list:
    """The dates a query names, as (year or None, month or None, day or None): "in July",
    "on 9 November, 2022", "August 11 and August 15 2023", "2023-06-03", "21.01.2024" (and
    "10.01.2024" both ways: 10 January and 1 October), "in 2022". A
    mention without a year takes the query's one other year, if it names exactly one."""
    out = []
    for m in _DATE_RE.finditer(query[:1000]):
        if m["iso"]:
            y, mo, d = int(m["iy"]), int(m["im"]), int(m["id"]) if m["id"] else None
            if not 1 <= mo <= 12:
                continue
        elif m["na"]:
            # 21.01.2024 (day first, as Europe writes it with dots) or 01/21/2024 (month
            # first, the US's): a date either way it can be read is named
            a, b, y = int(m["na"]), int(m["nb"]), int(m["ny"])
            out += [(y, mo, d) for d, mo in dict.fromkeys([(a, b), (b, a)]) if 1 <= mo <= 12 and 1 <= d <= 31]
            continue
        elif m["mon"]:
            word = m["mon"].lower()
            day = m["d1"] or m["d2"]
            if not (day or m["y"]) and (word not in _FULL_MONTHS or word in ("may", "march")
                                         and not _MAY.search(query[:m.start()])):
                continue  # alone, abbreviations ("Jan"), "may" and "march" are more often words
            y, mo, d = int(m["y"]) if m["y"] else None, _MONTHS[word], int(day) if day else None
        else:
            y, mo, d = int(m["yo"]), None, None
        out.append((y, mo, d))
    years = {y for y, _m, _d in out if y}
    if len(years) == 1:
        (year,) = years
        out = [(y or (year if mo else None), mo, d) for y, mo, d in out]
    return out


def on_dates(when: dt.datetime, dates: list) -> bool:
    """Whether a session started at ``when`` is from one of ``dates`` (see named_dates)."""
    for y, mo, d in dates:
        if d:
            try:
                named = dt.date(y or when.year, mo, d)
            except ValueError:
                continue
            if abs((when.date() - named).days) <= tuning.DATE_SLACK:
                return True
        elif (y is None or when.year == y) and (mo is None or when.month == mo):
            return True
    return False
