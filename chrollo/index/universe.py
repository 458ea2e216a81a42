"""The selection's view of a large vault: per query term, which files hold it.

:func:`indexed_universe` from the postings (files the index cannot vouch for are read by rg,
as a walk reads them); :func:`scanned_universe` the same answer from one rg pass when there is no
usable index. retrieval/select.py scores files from it and reads only the best.
"""
from __future__ import annotations

import os
import re
from array import array

from ..fileformat import FRONTMATTER_LINES, file_key, name_time

from .scope import Scope, unchanged
from .store import holding_all, open_reader, read_order, read_postings
from .terms import run_terms


class TermFiles:
    """The files of one search's scope as the selection (retrieval/select.py) sees them.

    ``n``: files in scope. ``sets[i]``: ids of the files the index vouches for that hold term
    i. ``order``, ``times``: every file the index lists, in file-key order (newest first), and
    its name's time (fileformat.name_time); ``pos``: id -> its place in ``order``. ``extras``:
    the files in scope the index does not vouch for, each ``(terms mask, file key, path,
    time)``. ``paths(ids)``: {id: (file key, path)}, and their frontmatter ends into ``fm_ends``.
    ``direct``: how many files in scope were read directly (the index could not vouch for them).
    """

    __slots__ = ("n", "sets", "order", "times", "pos", "extras", "paths", "fm_ends", "direct")

    def __init__(self, n: int, sets: list, order, times, pos, extras: list, paths, direct: int = 0):
        self.n, self.sets, self.order, self.times, self.pos = n, sets, order, times, pos
        self.extras, self.paths, self.direct = extras, paths, direct
        self.fm_ends: dict = {}

    def df(self) -> list:
        """Per term, the files in scope that hold it."""
        out = [len(s) for s in self.sets]
        for m, *_rest in self.extras:
            for i in range(len(out)):
                if m >> i & 1:
                    out[i] += 1
        return out


class Behind:
    """:func:`indexed_universe`'s answer for an index too far behind its vault to use: ``n``,
    the files in scope (counted by the folders' listings: the caller need not walk them)."""

    __slots__ = ("n",)

    def __init__(self, n: int):
        self.n = n


def _extra(path: bytes, mask: int) -> tuple:
    return mask, file_key(path), path, name_time(path[path.rfind(b"/") + 1:])


def scanned_universe(n: int, groups: list, paths: list, globs: tuple, timeout: float) -> TermFiles:
    """The selection's view of a folder without an index (see :class:`TermFiles`): ``n`` files
    in scope, the terms each holds from one rg pass over ``paths`` with ``globs``
    (:func:`rg_masks`) — the same answer as :func:`indexed_universe`."""
    fm_ends: dict = {}
    extras = [_extra(p, m) for p, m in rg_masks(groups, paths, globs, timeout, fm_ends)]
    u = TermFiles(n, [set() for _ in groups], array("I"), array("d"), array("i"), extras, dict)
    u.fm_ends = fm_ends
    return u


def rg_masks(groups: list, paths: list, globs: tuple, timeout: float, fm_ends: dict | None = None) -> list:
    """(path, terms mask) of each file holding one of ``groups``' terms, ripgrep reading
    ``paths`` (folders walked with ``globs``, files named; in batches its command line takes):
    it lists, in each file's body, every ASCII word that is one of the terms and every
    identifier holding one, and the terms a file holds are taken from those exactly as
    :func:`terms_of` would — each distinct text once per scan (:class:`_Masks`). (Also how the
    index's answer reads the files it cannot vouch for: at rg's speed, never slower than a walk
    of the folder.) ``fm_ends`` gets the frontmatter ends of the heads it read (path -> line,
    fileformat.frontmatter_end): the collector reads none of those again."""
    from ..fileformat import frontmatter_end
    from ..rg import rows_after, scan
    from ..textnorm import folded_regex

    runs = {t for g in groups for need in g for t in need}
    alt = "|".join(re.escape(r.decode("utf-8")) for r in sorted(runs, key=lambda r: (-len(r), r)))
    # (a run that is a term, or any run holding one: the pieces terms_of would take from it)
    # (and a run spelled with accents or in full width, as the search's folded alternatives
    # find it: its folded spelling is the term, as unicode_terms takes it)
    folded = "".join(f"|{f}" for r in sorted(runs) if (f := folded_regex(r.decode("utf-8"))))
    regex = rf"(?-u:(?i:\b(?:{alt})\b|[A-Za-z0-9_]*(?:{alt})[A-Za-z0-9_]*){folded})"
    mask_of = _Masks(groups, runs)
    out = []
    ends = {} if fm_ends is None else fm_ends
    for i in range(0, len(paths), RG_BATCH):
        for path, rows in scan([], paths[i:i + RG_BATCH], globs=globs, timeout=timeout, regex=regex):
            if int(rows[:rows.index(b":")]) <= FRONTMATTER_LINES:
                # (read as rg goes on: deferred until it was done — in threads or not — the
                # pass took longer on a loaded machine)
                end = ends[path] = frontmatter_end(path)
                rows = rows_after(rows, end)
            m = mask_of(set(_TEXT.findall(rows)))
            if m:
                out.append((path, m))
    return out


_TEXT = re.compile(rb"^[0-9]+:(.+)$", re.M)  # (a row's text)


class _Masks:
    """The groups' mask of the distinct texts rg listed in one file (see :func:`rg_masks`),
    each text's terms worked out once per scan: a term that is a form alone sets its groups'
    bits; the terms of forms of several runs (``auth-service``) are tracked as bits above the
    groups' and a form's bit is set when the file holds all of them."""

    def __init__(self, groups: list, runs: set):
        self.runs, k = runs, len(groups)
        self.single: dict = {}
        multi_terms = sorted({t for g in groups for need in g if len(need) > 1 for t in need})
        self.term_bit = {t: 1 << (k + j) for j, t in enumerate(multi_terms)}
        self.multi = []  # (the bits of a form's terms, its group's bit)
        for gi, g in enumerate(groups):
            for need in g:
                if len(need) == 1:
                    self.single[need[0]] = self.single.get(need[0], 0) | 1 << gi
                else:
                    self.multi.append((sum(self.term_bit[t] for t in set(need)), 1 << gi))
        self.low = (1 << k) - 1
        self.cache: dict = {}

    def text(self, text: bytes) -> int:
        from ..textnorm import fold

        if not text.isascii():
            text = fold(text.decode("utf-8", "replace")).encode("utf-8")
        m = 0
        for t in run_terms(text):
            if t in self.runs:
                m |= self.single.get(t, 0) | self.term_bit.get(t, 0)
        return m

    def __call__(self, texts: set) -> int:
        cache, m = self.cache, 0
        for t in texts:
            x = cache.get(t)
            if x is None:
                x = cache[t] = self.text(t)
            m |= x
        if self.multi:
            for need, bit in self.multi:
                if m & need == need:
                    m |= bit
        return m & self.low


RG_BATCH = 10_000  # paths on one rg command line (far below ARG_MAX)


def indexed_universe(vault: str, folder: str, groups: list, exclude_peers: bool = False,
                     unsearchable: frozenset = frozenset(), memo: dict | None = None,
                     direct_bytes: int | None = None, least: int = 0, direct_share: float | None = None,
                     timeout: float = 30.0):
    """The selection's view of ``folder`` from ``vault``'s index: the files it vouches for from
    their postings, every other file in scope read by rg (:func:`rg_masks`; see :class:`TermFiles`). None
    when the index cannot be used (none, locked, damaged, the folder not in it) or, with
    ``direct_bytes``, when more than that would have to be read directly; a :class:`Behind`
    when more than ``direct_share`` of the files would (an index that far behind its vault
    costs more than a walk of the folder: retrieval's tuning.DIRECT_SCAN_SHARE). A scope of
    no more than ``least`` files gives a Universe of its size alone."""
    got = _read_index(vault, folder, groups, exclude_peers, unsearchable, memo, direct_bytes, least,
                      direct_share)
    if got is None or isinstance(got, (TermFiles, Behind)):
        return got
    scope, (ids, dirs, times, pos, dead, newer), blobs = got
    rels = {fid: (rel, did) for fid, rel, did in newer}
    trusted, alive, skip = scope.trusted, scope.alive, scope.direct_ids
    # (the ids a posting may name that are not a vouched file in scope: rows deleted, read
    # directly, added since the order file, or in folders out of scope — usually few, so
    # taking them out of each term's files costs little)
    excluded = set(dead) | skip | set(rels)
    if alive or not trusted.issuperset(set(dirs)):
        from itertools import compress

        excluded.update(i for i in compress(ids, (d not in trusted for d in dirs)) if i not in alive)
    extras_ids = [fid for fid, (rel, did) in rels.items()
                  if fid not in skip and (did in trusted or fid in alive)]
    sets = _term_sets(groups, blobs)
    extras = []
    for fid in extras_ids:
        m = sum(1 << i for i, s in enumerate(sets) if fid in s)
        if m:
            extras.append(_extra(scope.vb + b"/" + rels[fid][0], m))
    for s in sets:  # (in place: a set two terms share is pruned once, the same way)
        s.difference_update(excluded)
    direct = sorted(scope.direct)
    if direct_bytes is not None:
        size = 0
        for p in direct:
            try:
                size += os.lstat(p).st_size
            except OSError:
                pass
            if size > direct_bytes:  # (no need to stat the rest: thousands of them, on the hook's clock)
                return None
    read_ends: dict = {}
    if direct:  # (rg reads them as a walk would: see rg_masks)
        extras += [_extra(p, m) for p, m in rg_masks(groups, direct, (), timeout, read_ends)]
    u = TermFiles(scope.files, sets, ids, times, pos, extras, None, len(direct))
    u.fm_ends.update(read_ends)
    u.paths = _paths_of(vault, scope.vb, u)
    return u


def _read_index(vault: str, folder: str, groups: list, exclude_peers: bool, unsearchable: frozenset,
                memo: dict | None, direct_bytes: int | None, least: int, direct_share: float | None):
    """(the folder's Scope, the order file's arrays, the groups' posting blobs) from the
    index; a TermFiles of the scope's size alone when it holds no more than ``least`` files;
    None when the index cannot answer (see :func:`indexed_universe`)."""
    memo = {} if memo is None else memo
    con = open_reader(vault)
    if con is None:
        return None
    try:
        key = ("scope", folder, exclude_peers, unsearchable)
        scope = memo.get(key)
        if scope is None:
            scope = memo[key] = Scope.of(con, os.path.realpath(vault), folder, exclude_peers, unsearchable) \
                or False
        if not scope:
            return None
        if scope.files <= least:
            return TermFiles(scope.files, [], array("I"), array("d"), array("i"), [], dict)
        if direct_share is not None and len(scope.direct) > direct_share * scope.files:
            return Behind(scope.files)  # (before the order file and the postings are read: unused)
        order = read_order(con, vault, write=direct_bytes is None)
        if order is None:
            return None
        blobs = read_postings(con, sorted({t for g in groups for need in g for t in need}))
        return None if blobs is None else (scope, order, blobs)
    except Exception:  # noqa: BLE001 — locked, damaged: the caller reads the files
        return None
    finally:
        con.close()


def _term_sets(groups: list, blobs: dict) -> list:
    """Per group (a query term), the ids of the files holding one of its forms."""
    all_of = holding_all(blobs)
    sets = []
    for g in groups:
        s: set | None = None
        for need in g:
            got = all_of(need)
            s = got if s is None else (s | got)
        sets.append(set() if s is None else s)
    return sets


def _paths_of(vault: str, vb: bytes, u: TermFiles):
    """``u.paths``: {id: (file key, path)} of the ids asked for; their frontmatter ends go to
    ``u.fm_ends`` (see Plan)."""

    def paths(want: list) -> dict:
        con = open_reader(vault)
        if con is None:
            return {}
        try:
            out = {}
            for i in range(0, len(want), 500):
                chunk = want[i:i + 500]
                for fid, rel, fm, *stat in con.execute(
                        "SELECT id, rel, CASE ok WHEN 1 THEN fm END, size, mtime, ctime, ino FROM files "
                        f"WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                    p = vb + b"/" + rel
                    out[fid] = (file_key(p), p)
                    if fm is not None and unchanged(p, stat):
                        u.fm_ends[p] = fm
            return out
        finally:
            con.close()

    return paths
