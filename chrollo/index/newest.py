"""The recall hook's read plan: the newest files first, then the index's candidates.

Under a deadline the hook cannot read a large vault; the index tells which older files may
hold the prompt's words, rare words' files first (:func:`newest_plan`).
"""
from __future__ import annotations

import os
import time

from .plan import candidate_ids
from .scope import unchanged
from .store import open_reader
from .terms import needed_terms
from ..vaultfiles import hidden




class NewestPlan:
    """The batches of a search with a deadline, with the index (see :func:`newest_plan`):
    iterating it yields the newest files first, then asks the index for the rest (its SQL
    must not delay the newest, and is skipped once ``stop`` — a time.monotonic() — is past);
    ``done`` once all were taken; ``total`` files in scope; ``ruled_out`` of them the index
    says hold no form (not read); ``fm_ends`` (a dict to fill: the collector's) gets the
    frontmatter ends of the files past the newest it names (path bytes -> line, see Plan)."""

    def __init__(self, first: list, later, fallback, total: int, first_size: int):
        self.first, self.later, self.fallback = first, later, fallback
        self.total, self.first_size = total, first_size
        self.ruled_out, self.fm_ends, self.stop = 0, {}, None
        self.done = False

    def __iter__(self):
        size = self.first_size
        if self.first:
            yield self.first
        if self.stop is not None and time.monotonic() >= self.stop:
            return
        got = self.later(self.stop)
        if got is None:  # (the index failed, or the deadline passed: newest first, as without it)
            yield from self.fallback()
            return
        rest, older, ruled_out, covers_all, fm_ends = got
        self.fm_ends.update(fm_ends)
        while rest:
            size *= 4
            yield rest[:size]
            rest = rest[size:]
        if older is not None:
            yield from older()
        self.ruled_out, self.done = ruled_out, covers_all


def _to_path(folder: str):
    sep = folder + os.sep
    return lambda k: sep + k.rpartition("\0")[2]


def newest_plan(folder: str, forms: list, newest: list, total: int, include_peers: bool,
                first: int, older_batches, fallback, *, rare_files: int, most: int) -> NewestPlan | None:
    """The recall hook's files, with ``folder``'s index: the newest ``first`` of ``newest``
    (listing.cached keys, newest first; ``total`` files in all) as without an index, then the
    files the index says may hold one of ``forms`` plus those not in it, newest first.

    The hook trusts the index for files past the newest ``first`` (it stats none of them:
    a file edited in place since it was indexed is read only if it is a candidate; `chrollo
    search` checks every file). Files older than ``newest`` that the index does not hold are
    listed and read last (``older_batches(keys)``). None: no usable index, scan as before;
    ``fallback()``: the batches past the newest without it, should the index fail after them.
    ``rare_files``: a word in no more files than this (or 1/50 of them) is rare, its files read
    first; ``most``: all candidates are read only if there are no more than this (retrieval's
    knobs: chrollo.retrieval.tuning.HOOK_*).
    """
    need = needed_terms(forms)
    if need is None:
        return None
    con = open_reader(folder)
    if con is None:
        return None
    con.close()
    to_path = _to_path(folder)
    return NewestPlan([to_path(k) for k in newest[:first]],
                      lambda stop: _newest_rest(folder, need, newest, total, include_peers, first,
                                                older_batches, rare_files, most, stop),
                      fallback, total, first)


def _newest_rest(folder: str, need: list, newest: list, total: int, include_peers: bool, first: int,
                 older_batches, rare_files: int, most: int, stop: float | None = None):
    """The part of :func:`newest_plan` past the newest ``first``: (paths, newest first — the
    rare words' files, then the other candidates and the files the index does not hold —,
    the batches of older files to list or None, how many the index rules out, whether that
    covers every file, the frontmatter ends of the named files); None if the index fails or
    ``stop`` (a time.monotonic()) passes between its steps (on a loaded machine its SQL alone
    can take a deadline's length)."""

    def late() -> bool:
        return stop is not None and time.monotonic() >= stop

    got = _asked(folder, need, newest[first:], total, rare_files, most, late)
    if got is None or late():
        return None
    indexed, rare, big, missing, rels = got
    head = newest[:first]
    in_head = set(head)
    keys = {k for k in newest[first:] if k.rpartition("\0")[2] in missing} if missing else set()
    first_keys, fm_ends = _sorted_out(folder, rels, rare, in_head, include_peers, keys)
    rest = sorted(first_keys, reverse=True) + sorted(keys - first_keys, reverse=True)
    to_path = _to_path(folder)
    if big:
        seen = in_head.union(first_keys, keys)
        rest_all = [k for k in newest[first:] if k not in seen]
        return [to_path(k) for k in rest], lambda: older_batches(rest_all), 0, False, fm_ends
    older = None
    if total > indexed + len(missing):
        # (files older than the cached listing that the index does not hold: list them)
        oldest = min(newest) if newest else None

        def older():
            from .. import listing as _listing

            have = set(keys)
            return older_batches([k for k in _listing.older_keys(folder, include_peers, oldest, stop) if k not in have])
    ruled_out = max(0, total - len(head) - len(rest))
    return [to_path(k) for k in rest], older, ruled_out, True, fm_ends


def _asked(folder: str, need: list, past: list, total: int, rare_files: int, most: int, late):
    """What the index says of the files ``past`` the newest: (files it holds, the ids of the
    rare words' files, whether most files are candidates, the names of ``past`` it does not
    hold, the rows (id, rel, vouched frontmatter end, stat) to read); None if it fails."""
    import json

    con = open_reader(folder)
    if con is None:
        return None
    try:
        indexed = con.execute("SELECT count(*) FROM files").fetchone()[0]
        rare_max = max(rare_files, indexed // 50)
        groups: list = []
        cand = candidate_ids(con, need, groups, most=max(most, rare_max))
        if cand is None or late():
            return None
        # Files holding the query's rare words come first (they weigh most in the ranking and
        # are few); then the other candidates, newest first.
        rare = set().union(*(g for g in groups if g is not None and len(g) <= rare_max))
        # Most files hold one of the words (a name, a common word): the hook could not read
        # them all anyway — after the rare words' files it goes on newest first, as without
        # an index.
        big = len(cand) > most or None in groups
        missing: set = set()
        if total != indexed:
            # (the names of the listing the index does not hold, in one statement; a name
            # that is not valid UTF-8 simply counts as not held)
            missing = {r[0] for r in con.execute(
                "SELECT value FROM json_each(?) WHERE NOT EXISTS "
                "(SELECT 1 FROM files WHERE rel = CAST(value AS BLOB))",
                (json.dumps([k.rpartition("\0")[2] for k in past]),))}
        rels = con.execute("SELECT id, rel, CASE ok WHEN 1 THEN fm END, size, mtime, ctime, ino FROM files "
                           "WHERE id IN (SELECT value FROM json_each(?))",
                           (json.dumps(sorted(rare if big else cand)),)).fetchall()
        # (files the index holds but does not vouch for are read like those it does not hold)
        rels += [(None, rel, None, None, None, None, None)
                 for (rel,) in con.execute("SELECT rel FROM files WHERE ok <> 1")]
        return indexed, rare, big, missing, rels
    except Exception:  # noqa: BLE001
        return None
    finally:
        con.close()


def _sorted_out(folder: str, rels: list, rare: set, in_head: set, include_peers: bool, keys: set) -> tuple:
    """``rels``' file keys past the newest: the rare words' files (returned) and the others
    (added to ``keys``); the frontmatter ends of those whose stat the index vouches for (the
    collector reads no head for those)."""
    first_keys, fm_ends, pre = set(), {}, os.fsencode(folder) + b"/"
    for fid, rel, fm, *stat in rels:
        parts = rel.split(b"/")
        if len(parts) > 1 and (any(map(hidden, parts[:-1]))
                               or (not include_peers and parts[0] == b"peers")):
            continue
        name = os.fsdecode(parts[-1])
        k = name if len(parts) == 1 else f"{name}\0{os.fsdecode(rel)}"
        if k not in in_head:
            (first_keys if fid in rare else keys).add(k)
            if fm is not None and unchanged(pre + rel, stat):
                fm_ends[pre + rel] = fm
    return first_keys, fm_ends
