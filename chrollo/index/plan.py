"""The read plan of a complete search: the files that may hold a query's forms.

A superset: rg still reads every candidate (and every file the index cannot vouch for) and
produces every row, so results are those of a walk of the folder (docs/design.md §13).
"""
from __future__ import annotations

import os

from .scope import Scope
from .store import count_ids, holding_all, open_reader, read_postings
from .terms import needed_terms


class Plan:
    """What a search reads with the index's help: ``paths`` (the candidate files plus every
    file the index cannot vouch for; None: most files are, rg walks the folder), ``files``
    (how many files rg would have searched), ``stale`` (how many were read directly),
    ``fm_ends``: path -> the line its frontmatter ends on, for the files among them the index
    vouches for (the collector reads no head for those; see fileformat.frontmatter_end)."""

    def __init__(self, paths: list | None, files: int, stale: int, candidates: int, fm_ends: dict):
        self.paths, self.files, self.stale, self.candidates = paths, files, stale, candidates
        self.fm_ends = fm_ends


def plan(vault: str, folder: str, forms: list, exclude_peers: bool = False,
         unsearchable: frozenset = frozenset(), memo: dict | None = None, *, min_files: int,
         scan_share: float) -> Plan | None:
    """The files a scan of ``folder`` for ``forms`` must read (None: let rg walk the folder).

    No file is stat'ed for it but a slice of SWEEP (see :class:`Scope`): folders are, and a
    folder whose mtime moved is listed. ``memo`` (a dict a search keeps for its passes)
    spares doing that twice. When most files may hold a form, the plan's ``paths`` is None
    (rg walks the folder) and its ``fm_ends`` holds every vouched file's, once per search.
    ``min_files``, ``scan_share``: retrieval's knobs (chrollo.retrieval.tuning.INDEX_*).
    """
    need = needed_terms(forms)
    if need is None:
        return None
    memo = {} if memo is None else memo
    key = ("scope", folder, exclude_peers, unsearchable)
    con = open_reader(vault)
    if con is None:
        return None
    try:
        if min_files and memo.get("files") is None:  # (a small vault: nothing to stat or list)
            memo["files"] = con.execute("SELECT count(*) FROM files").fetchone()[0]
        if memo.get("files", min_files) < min_files:
            return None
        scope = memo.get(key)
        if scope is None:
            scope = memo[key] = Scope.of(con, os.path.realpath(vault), folder, exclude_peers, unsearchable) \
                or False
        if not scope or scope.files < min_files:
            return None
        try:
            cand = candidate_ids(con, need, most=int(scan_share * scope.files))
            if cand is None:
                return None
            paths, fm_ends = scope.paths(con, cand)
        except TooMany:
            cand, paths = (), None
        if paths is not None and len(paths) > scan_share * scope.files:
            paths = None  # most files: rg's own walk is faster than a list of them
        if paths is None:
            fm_ends = {} if memo.get(("fm_ends", key)) else scope.vouched(con, folder)
            memo[("fm_ends", key)] = True
    except Exception:  # noqa: BLE001 — locked, damaged: rg walks as before
        return None
    finally:
        con.close()
    return Plan(None if paths is None else [os.fsdecode(p) for p in paths], scope.files, len(scope.direct),
                len(cand), fm_ends)


class TooMany(Exception):
    """A form's files number more than the caller can use (see candidate_ids' ``most``)."""


def candidate_ids(con, need: list, groups: list | None = None, most: int | None = None) -> set | None:
    """The ids of the files that may hold every term of one of ``need``'s term lists
    (``groups`` gets each list's own set). With ``most``: a list whose files number more is
    not decoded (turning 250,000 ids into a set costs the hook its deadline): raises TooMany
    without ``groups``; with ``groups`` it is left out of the union and its set is None."""
    blobs = read_postings(con, sorted({t for ts in need for t in ts}))
    if blobs is None:
        return None  # a damaged row: not to be trusted
    size = {t: sum(map(count_ids, bs)) for t, bs in blobs.items()}
    all_of = holding_all(blobs)
    cand: set = set()
    for ts in need:
        if most is not None and min(size.get(t, 0) for t in ts) > most:
            if groups is None:
                raise TooMany()
            groups.append(None)
            continue
        got = all_of(ts)
        cand |= got
        if groups is not None:
            groups.append(got)
    return cand
