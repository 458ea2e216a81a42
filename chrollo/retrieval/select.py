"""Select: on a large vault, the sessions a search reads — the best SELECT_FILES by what they hold.

A vault of more than SELECT_AFTER session files is not read whole. Each file in scope gets a
*file score* from what it holds, and ripgrep reads only the best SELECT_FILES files; the line
ranking (rank.py) then runs on those, with the vault's own statistics:

    holds(f, t)  f's index terms (index.terms_of of its bytes after its frontmatter: every
                 lowercase ASCII word and identifier piece) hold every word of one of t's
                 forms (whole words, inflections, identifier spellings, identifier parts)
    N            the session files in scope; df(t) the files that hold t
    file score   Σ idf(t) over the terms f holds × r(f), r = 1 + RECENCY_BOOST ×
                 0.5 ^ (age / RECENCY_HALF_LIFE_DAYS) from the session time in its name
                 (1 for a name without one); ties: newer file key first, then path

The index (chrollo/index/universe.py) gives holds() for the files it vouches for without reading
them (postings, and the files in file-key order); the files it does not vouch for, and the
whole vault when there is no index, are read and tokenised the same way. Both give the same
selection, so a search gives the same JSON with and without the index — only the time differs.
"""
from __future__ import annotations

import datetime as dt
import heapq
import os

from ..fileformat import NAME_EPOCH
from . import tuning
from .rank import recency


class Recency:
    """r(t) of the file score (see the module doc), for one search's clock: the ranking's
    recency multiplier of a session whose name's time is ``t`` (fileformat.name_time)."""

    __slots__ = ("now",)

    def __init__(self, now: dt.datetime):
        self.now = (now - NAME_EPOCH).total_seconds()  # (now, naive as names are, in name_time's seconds)

    def __call__(self, t: float) -> float:
        if t != t:  # NaN: no time in the name
            return 1.0
        return recency(max(0.0, self.now - t) / 86400.0)


def best(u, weights: list, now: dt.datetime, want: int, keep=None) -> list:
    """The paths of the ``want`` best files of ``u`` (an index.TermFiles) by file score (see
    the module doc), best first; ``keep(path)`` (the search's filters) passes over the files
    it refuses."""
    r = Recency(now)
    k = len(weights)
    wcache: dict = {}

    def w(m: int) -> float:
        got = wcache.get(m)
        if got is None:
            got = wcache[m] = sum(weights[i] for i in range(k) if m >> i & 1)
        return got

    extras = sorted((-w(m) * r(t), key, path, False) for m, key, path, t in u.extras if m)
    take = want
    while True:
        ranked = _vouched_best(u, weights, w, r, take)
        named = u.paths([i for _s, _p, i in ranked])
        vouched = [(s, *named[i], True) for s, _p, i in ranked if i in named]
        cut = len(ranked) == take  # (more vouched files than were ranked)
        out, left = [], len(vouched)
        for _s, _key, path, is_vouched in heapq.merge(vouched, extras):
            if keep is None or keep(path):
                out.append(path)
                if len(out) == want:
                    return out
            left -= is_vouched
            if cut and not left:
                break  # (what follows could come after vouched files not ranked yet)
        else:
            return out  # (every file holding a term was looked at)
        take *= 4


def _vouched_best(u, weights: list, w, r, want: int) -> list:
    """The ``want`` best vouched files as ``(-score, place in order, id)``, best first.

    The files are split into parts by the terms they hold (a mask each), by set operations
    only: term at a time, the rarest (the heaviest) first, each part is split into the files
    that hold the term and those that do not, and the term's files in no part yet make a
    part of their own. Once ``want`` files are sure to score more than a file holding only
    the terms left could (a score is its weight × r, r ≥ 1, ≤ the largest r), the common
    terms left only split the parts, they add no files. Then only the files of the parts
    whose weight could reach the ``want``-th best are scored (r needs each one's time).
    (Sets, not a mask per file: a file is touched by C code, never by a Python loop, until
    it is scored: on a 1 GB vault's common words about a third less time.)"""
    sets, times, pos = u.sets, u.times, u.pos
    terms = sorted((i for i in range(len(weights)) if sets[i]), key=lambda i: (len(sets[i]), i))
    r_max = next((r(t) for t in times if t == t), 1.0)  # (no vouched file is newer than the order's first)
    parts: dict = {}  # mask -> the files holding exactly those of the terms taken so far
    seen: set = set()
    adding = True
    for j, i in enumerate(terms):
        if adding and len(seen) >= want and _wanted_weight(parts, w, want) > \
                sum(weights[x] for x in terms[j:]) * r_max * (1 + 1e-9):
            adding = False  # (no file holding only the terms left can reach the `want`-th best)
        s, bit = sets[i], 1 << i
        split = {}
        for m, files in parts.items():
            both = files & s
            if both:
                files -= both
                split[m | bit] = both
        parts.update(split)
        if adding:
            new = s - seen
            if new:
                parts[bit] = new
                seen |= new
    parts = {m: files for m, files in parts.items() if files}
    if not parts:
        return []
    floor = _wanted_weight(parts, w, want) / r_max  # (a weight under it cannot reach the `want`-th best)
    best = heapq.nlargest(want, ((wm * r(times[pos[f]]), -pos[f], f)
                                 for m, files in parts.items() if (wm := w(m)) >= floor * (1 - 1e-9)
                                 for f in files))
    return [(-sc, -negp, f) for sc, negp, f in best]


def _wanted_weight(parts: dict, w, want: int) -> float:
    """The ``want``-th largest weight of the files of ``parts`` (mask -> files; 0 when there
    are fewer files)."""
    seen = 0
    for m in sorted(parts, key=w, reverse=True):
        seen += len(parts[m])
        if seen >= want:
            return w(m)
    return 0.0


class Selected:
    """A selection: the ``paths`` rg reads (best first), ``n`` files in scope, ``df`` per term."""

    __slots__ = ("paths", "n", "df")

    def __init__(self, paths: list, n: int, df: list):
        self.paths, self.n, self.df = paths, n, df


def _term_forms(q) -> list:
    """Each term's forms, whole and as identifier parts (what holds(f, t) looks for)."""
    n = len(q.terms)
    return [list(dict.fromkeys([f for f, m in q.mask.items() if m >> i & 1]
                               + [f for f, m in q.part.items() if m >> (2 * n + i) & 1])) for i in range(n)]


def _far_behind(vault: str, include_peers: bool) -> bool:
    """(A search with a deadline.) Whether the vault's folder moved since the index listed it
    and its listing — cached, the hook reads it next — holds more than DIRECT_SCAN_SHARE of
    files the index has no row for (another program wrote them): the index's Scope would list
    the folder again to say as much, a fifth of the hook's deadline at 25,000 files."""
    from ..index.store import rows_if_moved

    held = rows_if_moved(vault)
    if held is None:
        return False  # (the folder as the index listed it — the usual case: no listing read)
    from .. import listing as _listing

    total = _listing.cached(vault, include_peers, deadline=True)[1]
    return total - held > tuning.DIRECT_SCAN_SHARE * total


def _universe(scope, spec, groups: list, has_index: bool):
    """:func:`choose`'s view of the search's folder (a TermFiles): from the index; from one rg
    pass when there is none usable or it is far behind (a complete search); None when a
    search with a deadline cannot have it from the index, or the folder holds no more than
    SELECT_AFTER files. Sets ``scope.memo``'s "unindexed" when a build is due."""
    from ..index import enabled
    from ..index.universe import Behind, indexed_universe, scanned_universe
    from ..vaultfiles import walk
    from .scan import _unsearchable_names

    folder, vault = scope.folder, scope.vault
    whole = scope.include_peers and folder == vault
    exclude = not scope.include_peers and folder == vault
    unsearchable = _unsearchable_names(vault) if whole else frozenset()
    u = indexed_universe(vault, folder, groups, exclude, unsearchable, scope.memo,
                         tuning.DIRECT_HOOK_BYTES if scope.stop is not None else None,
                         least=tuning.SELECT_AFTER, direct_share=tuning.DIRECT_SCAN_SHARE,
                         timeout=scope.timeout) if has_index else None
    n = None
    if isinstance(u, Behind):  # (its folders' listings counted the files: no walk for that)
        n, u = u.n, None
        scope.memo["unindexed"] = True
    elif u is not None and u.direct > tuning.CATCHUP_SHARE * u.n:
        scope.memo["unindexed"] = True  # (files another program wrote: have them indexed)
    if u is not None:
        return u
    if scope.stop is not None:
        # (the index could not answer within a deadline — its order file or many files to
        # read directly: a build brings it up to date, see SearchResult.unindexed)
        scope.memo["unindexed"] = has_index
        return None
    if n is None:
        n = len(walk(folder, exclude, unsearchable))
    if n <= tuning.SELECT_AFTER:
        return None
    scope.memo["unindexed"] = enabled()  # (a large vault without a usable index, or far behind: build)
    return scanned_universe(n, groups, [folder], tuple(spec.globs), scope.timeout)


def choose(q, scope, spec, idf_of) -> Selected | None:
    """The files a search of a large vault reads (see the module doc), or None: the vault
    holds no more than SELECT_AFTER files, a form is one the index cannot answer (non-ASCII,
    too long), or — a search with a deadline — the vault has no usable index (the hook then
    reads the newest sessions first). A complete search of a large vault without one, or with
    one far behind it (more than DIRECT_SCAN_SHARE of its files to read directly), gets the
    same files from one rg pass over the vault. Either way, and whenever more than
    CATCHUP_SHARE of the files are not indexed as they are now, the search says a build is
    due (``scope.memo``'s "unindexed"). ``idf_of(df, n)``: the ranking's term weights."""
    from ..index import available
    from .scan import _filtered, large

    folder, vault = scope.folder, scope.vault
    if not tuning.SELECT_FILES or not large(scope):
        return None  # (and the index's modules are not imported: a small vault's search needs none of them)
    has_index = available(vault)
    if not has_index and scope.stop is not None:
        return None
    if has_index and scope.stop is not None and folder == vault and _far_behind(vault, scope.include_peers):
        scope.memo["unindexed"] = True  # (have it caught up; the hook reads newest first meanwhile)
        return None
    from ..index.terms import term_groups

    groups = term_groups(_term_forms(q))
    if groups is None:
        return None
    u = _universe(scope, spec, groups, has_index)
    if u is None or u.n <= tuning.SELECT_AFTER:
        return None
    df = u.df()
    keep = (lambda p: not _filtered(p, spec)) if spec.filtering else None
    paths = best(u, list(idf_of(df, u.n)), scope.now, tuning.SELECT_FILES, keep)
    scope.fm_ends.update(u.fm_ends)  # (the collector reads no head for these)
    return Selected([os.fsdecode(p) for p in paths], u.n, df)
