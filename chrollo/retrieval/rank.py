"""Rank: the collected candidates in score order, lazily (a k-way merge), then the re-rankers.

    score = (Σ idf(term) over the distinct query terms on the anchor line
             + NEIGHBOR_WEIGHT × Σ idf(term) over the other exact terms within NEIGHBOR_LINES)
            × a recency multiplier in [1, 1 + RECENCY_BOOST]
            × its session's factor in [1/(1 + SESSION_WEIGHT), 1] (a file-level BM25 of the
              query terms, see by_session) × its turn's length factor (see TURN_POWER)
            × 1 / (1 + DATE_WEIGHT) if the query names dates and its session is from none
            × sqrt(LONG_LINE / its length) for a line longer than LONG_LINE
    idf(t) = ln(1 + sessions searched / sessions containing t): a term found in every
    session (a speaker's name, "test") weighs little, a rare one a lot. Ties: newer session
    first, then path, then line.

A candidate is ``(-score, file key, path, line, mask)``. Every re-ranker only lowers a score
(its factor is at most 1), so it re-sorts a pool of the best candidates and merges the rest in
where they belong: the order stays exact without scoring every candidate.
"""
from __future__ import annotations

import datetime as dt
import heapq
import math
import os
from itertools import islice

from . import tuning
from ..fileformat import NAME_EPOCH, name_time
from ..textnorm import has_hiragana
from .collect import Collector
from .dates import on_dates
from .query import present
from .views import lines_of, view_of

class Idf(list):
    """Per-term weights (idf × synonym weight); ``near``: what a term weighs near a line."""

    near: list = []
    exact = -1  # the bits of the exact (non-synonym) terms


def idf_of(df: list, n_files: int, terms: list, synonyms: dict) -> Idf:
    """The weights of ``terms`` found in ``df`` of ``n_files`` files. Only exact terms lift
    their neighbours, and only lines holding an exact term are lifted: a line of synonyms must
    never catch up with a line of the words asked for."""
    idf = Idf(math.log(1.0 + n_files / d) if d else 0.0 for d in df)
    for i, t in enumerate(terms):
        idf[i] *= synonyms.get(t, 1.0)
        if not t.isascii() and has_hiragana(t):  # (Japanese grammar, see HIRAGANA_WEIGHT)
            idf[i] *= tuning.HIRAGANA_WEIGHT
    idf.near = [0.0 if t in synonyms else w * tuning.NEIGHBOR_WEIGHT for t, w in zip(terms, idf)]
    idf.exact = sum(1 << i for i, t in enumerate(terms) if t not in synonyms)
    return idf


def weight(mask: int, idf: Idf) -> float:
    """The terms of a line (bits 0..n-1) count fully, terms found only inside its identifiers
    (bits 2n..3n-1) PART_WEIGHT; terms only near it (bits n..2n-1, see NEIGHBOR_WEIGHT)
    count ``idf.near``."""
    n = len(idf)
    w = sum(idf[i] for i in range(n) if mask >> i & 1)
    parts = mask >> 2 * n & ~mask
    if parts:
        w += tuning.PART_WEIGHT * sum(idf[i] for i in range(n) if parts >> i & 1)
    near = mask >> n & ((1 << n) - 1)
    if near and present(mask, n) & idf.exact:  # (a line of synonyms only is not lifted)
        w += sum(idf.near[i] for i in range(n) if near >> i & 1)
    return w


def recency_multiplier(session_time: dt.datetime, now: dt.datetime) -> float:
    return recency(max(0.0, (now - session_time).total_seconds() / 86400.0))


def recency(age_days: float) -> float:
    """The recency multiplier of a session ``age_days`` old: 1 + RECENCY_BOOST, halving
    toward 1 every RECENCY_HALF_LIFE_DAYS."""
    return 1.0 + tuning.RECENCY_BOOST * 0.5 ** (age_days / tuning.RECENCY_HALF_LIFE_DAYS)


def _mtime(path: str) -> dt.datetime:
    """When a file without a timestamp in its name was last written (its session's age)."""
    try:
        return dt.datetime.fromtimestamp(os.stat(path).st_mtime)
    except OSError:
        return dt.datetime(1970, 1, 1)


def session_time(path: bytes) -> dt.datetime:
    """When a session started: its name's timestamp (fileformat.name_time), else the file's mtime."""
    t = name_time(path[path.rfind(b"/") + 1:])
    if t == t:
        return NAME_EPOCH + dt.timedelta(seconds=t)
    return _mtime(os.fsdecode(path))


def _entry(mask: int, pos: int, cand: tuple, w: float, now: dt.datetime) -> tuple:
    key, path, ln = cand
    return (-w * recency_multiplier(session_time(path), now), key, path, ln, mask, pos)


def ranked(buckets: dict, idf: Idf, now: dt.datetime, optimistic: int = 0):
    """Yield candidates ``(-score, key, path, line, mask)`` best first (a k-way merge).

    With ``optimistic`` (the terms left out of the scan), a candidate is ranked as if its
    line held all of them: an upper bound that rescore then makes exact.
    """
    heap, lists = [], {}
    for m, b in buckets.items():
        b.sort()
        del b[tuning.BUCKET_KEEP:]
        lists[m] = (b, weight(m | optimistic, idf))
        heapq.heappush(heap, _entry(m, 0, b[0], lists[m][1], now))
    while heap:
        neg, key, path, ln, m, pos = heapq.heappop(heap)
        b, w = lists[m]
        if pos + 1 < len(b):
            heapq.heappush(heap, _entry(m, pos + 1, b[pos + 1], w, now))
        yield neg, key, path, ln, m


def rescore(ranked, col: Collector, idf: Idf, now: dt.datetime, views: dict):
    """Score the best POOL candidates (by upper bound) exactly, with the common terms found
    on their lines, and re-sort them; the rest follow, scored by what the scan saw."""
    forms = col.q.forms(col.common)
    rx = col.q.matcher(forms)
    common = {f: col.q.mask[f] for f in forms}
    pool = []
    for neg, key, path, ln, m in islice(ranked, tuning.POOL):
        lines = lines_of(views, path)
        if path not in col.sampled and lines is not None and ln <= len(lines):
            for f in rx.findall(lines[ln - 1]):
                m |= common.get(f.lower(), 0) or common.get(f.casefold(), 0)
        pool.append((-weight(m, idf) * recency_multiplier(session_time(path), now), key, path, ln, m))
    pool.sort()
    yield from pool
    for neg, key, path, ln, m in ranked:  # beyond the pool: scored without the common terms
        yield -weight(m, idf) * recency_multiplier(session_time(path), now), key, path, ln, m


def by_session(ranked, col: Collector, idf: Idf, dates: list = ()):
    """The best POOL candidates scaled by their file's session score (see SESSION_WEIGHT)
    and, when the query names dates, by whether the session is from one of them (see
    DATE_WEIGHT), re-sorted; the rest follow as they come (the factor is at most 1, as in
    by_turn_length)."""
    # (the terms a sampled scan left out are counted in the sample's files only: not used)
    idf = [0.0 if col.common >> i & 1 else w for i, w in enumerate(idf)]
    best = sum(idf) * (tuning.SESSION_K1 + 1)
    factors: dict = {}
    pool = []
    for neg, key, path, ln, m in islice(ranked, tuning.POOL):
        f = factors.get(path)
        if f is None:
            f = factors[path] = _session_factor(col, path, idf, best) * (
                1.0 if not dates or on_dates(session_time(path), dates) else 1 / (1 + tuning.DATE_WEIGHT))
        pool.append((neg * f, key, path, ln, m))
    pool.sort()
    yield from heapq.merge(pool, ranked)


def _session_factor(col: Collector, path: bytes, idf: list, best: float) -> float:
    """(1 + SESSION_WEIGHT × the file's BM25 over the query terms / ``best``) / (1 + SESSION_WEIGHT)."""
    if not best or not tuning.SESSION_WEIGHT:
        return 1.0
    n, k1 = len(idf), tuning.SESSION_K1
    sfx, counts = col.tf.get(path, ((), ()))
    tf = [0] * n
    for (_s, fm), c in zip(sfx, counts):
        for i in range(n):
            if fm >> i & 1:
                tf[i] += c
    score = sum(w * t * (k1 + 1) / (t + k1) for w, t in zip(idf, tf) if t > 0)
    return (1 + tuning.SESSION_WEIGHT * score / best) / (1 + tuning.SESSION_WEIGHT)


def by_turn_length(ranked, views: dict, size: int = 0):
    """The best ``size`` (default RERANK_POOL) candidates weighed by the length of their turn
    (see TURN_POWER), re-sorted; the rest follow as they come, unweighed (a bound on the
    files read: a candidate beyond the pool keeps its full score)."""
    pivot, power = tuning.TURN_PIVOT, tuning.TURN_POWER
    pool = []
    for neg, key, path, ln, m in islice(ranked, size or tuning.RERANK_POOL):
        v = view_of(views, path)
        if v is not None and (tl := v.turn_lines(ln)) > pivot:
            neg *= (pivot / tl) ** power
        pool.append((neg, key, path, ln, m))
    pool.sort()
    yield from heapq.merge(pool, ranked)


def by_spelling(ranked, q, spelled: dict, views: dict, size: int = 0):
    """The best ``size`` (default RERANK_POOL) candidates whose line holds a query word only in another spelling
    than the user's (``café`` for a search of ``cafe``, ``cafe`` for ``café``: found through
    textnorm.fold) weighed by FOLDED_WEIGHT, re-sorted: the exact spelling ranks first. An
    ASCII line of a query spelled in ASCII is exact by construction and is not looked at (an
    English search is unchanged)."""
    import unicodedata

    from ..terms import whole_words
    from ..textnorm import fold

    about = q.about()
    words = [f for f in about if not q.cjk.get(f)]
    exact = [f for f in words if not any(t in spelled for t in about[f])]
    exact += [s for ss in spelled.values() for s in ss]
    if not words:
        yield from ranked
        return

    as_typed, folded = whole_words(exact), whole_words(words)
    pool = []
    for neg, key, path, ln, m in islice(ranked, size or tuning.RERANK_POOL):
        lines = lines_of(views, path)
        line = lines[ln - 1] if lines and 0 < ln <= len(lines) else ""
        if line and (spelled or not line.isascii()):
            typed = unicodedata.normalize("NFKC", line).casefold()
            if not (as_typed and as_typed.search(typed)) and folded.search(fold(line)):
                neg *= tuning.FOLDED_WEIGHT
        pool.append((neg, key, path, ln, m))
    pool.sort()
    yield from heapq.merge(pool, ranked)


def length_bounded(ranked, views: dict):
    """``ranked`` with each line's score bounded by its length, still best first.

    A line stuffed with vocabulary (a crafted peer file: one payload, then thousands of
    words) holds every query term and would outrank any genuine match; scaled by
    sqrt(LONG_LINE / length) above LONG_LINE characters it cannot. Exact and lazy: the factor
    is ≤ 1, so a candidate is released once no later (unscaled) score can beat it.
    """
    pending: list = []
    for cand in ranked:
        while pending and pending[0][0] <= cand[0]:
            yield heapq.heappop(pending)
        lines = lines_of(views, cand[2])
        n = len(lines[cand[3] - 1]) if lines and 0 < cand[3] <= len(lines) else 0
        long = tuning.LONG_LINE
        heapq.heappush(pending, (cand[0] * (long / n) ** 0.5, *cand[1:]) if n > long else cand)
    while pending:
        yield heapq.heappop(pending)
