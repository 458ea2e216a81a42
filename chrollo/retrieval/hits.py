"""Hits: ranked candidates turned into what a search returns (:class:`SearchResult`).

(Plain classes rather than dataclasses here: this is on the recall hot path and dataclasses
pulls in ``inspect``.)
"""
from __future__ import annotations

import os

from .. import vault as _vault
from . import tuning
from .query import present
from .views import view_of


class Hit:
    """One search hit: an anchor line, its session, and the lines around it."""

    __slots__ = ("path", "line", "score", "date", "session_id", "harness", "peer", "terms", "context", "vault")

    def __init__(self, path: str, line: int, score: float, date: str | None, session_id: str | None,
                 harness: str | None, peer: str | None, terms: list, context: list):
        self.path, self.line, self.score, self.date = path, line, score, date
        self.session_id, self.harness, self.peer = session_id, harness, peer
        self.terms = terms
        self.context = context  # [{"line", "text", "match"}]
        self.vault = None  # with --all-vaults: "project" or "global", the vault it came from

    def to_json(self) -> dict:
        out = {k: getattr(self, k) for k in self.__slots__}
        if out["vault"] is None:
            del out["vault"]
        return out

    def __repr__(self) -> str:
        return f"Hit({self.path!r}:{self.line}, score={self.score})"


class SearchResult:
    """What a search returns; ``to_json`` is the `chrollo search --json` object."""

    def __init__(self, query: str, terms: list, expanded: dict, total_matches: int, hits: list,
                 warnings: list | None = None, vault: str = ""):
        self.query, self.terms, self.expanded = query, terms, expanded
        self.total_matches, self.hits = total_matches, hits
        self.warnings = warnings if warnings is not None else []
        self.vault = vault
        self.weights: dict = {}  # term -> the weight (idf) it carried; recall gates on it
        self.sessions = 0        # session files searched (the N of the idf); recall weighs unseen terms by it
        self.df: dict = {}       # term -> this vault's files holding it (--all-vaults pools them)
        self.unindexed = None    # a large vault read (or not reached) without a usable index: build one there

    def to_json(self) -> dict:
        out = {"query": self.query, "terms": self.terms, "expanded": self.expanded,
               "total_matches": self.total_matches, "hits": [h.to_json() for h in self.hits]}
        if self.warnings:
            out["warnings"] = self.warnings
        return out


def emit(ranked, terms: list, limit: int, context: int, scope, vault: str, views: dict,
         distinct: bool = False) -> list:
    """Turn ranked candidates into hits: validate anchors (in --since/--until, holding a
    quoted phrase), cap per file, merge windows; ``distinct``: no anchor line repeats a better
    hit's word for word (tuning: a query beyond ASCII). Past the first BROAD_AFTER hits a file's
    hits beyond BROAD_PER_FILE wait until no other session has one (a long list names more
    sessions; when few sessions match, their further lines still fill it)."""
    per_file: dict[bytes, list] = {}
    hits: list[Hit] = []
    waiting: list = []
    shown = set() if distinct else None
    since_s = scope.since.strftime("%Y-%m-%d %H:%M:%S") if scope.since else None
    until_s = scope.until.strftime("%Y-%m-%d %H:%M:%S") if scope.until else None
    phrase = scope.phrases.line if scope.phrases is not None else None
    reach = tuning.MERGE_FACTOR * context
    for cand in ranked:
        neg, key, path, ln, m = cand
        taken = per_file.setdefault(path, [])
        # (merging counts lines, blank or not, as it always did: a line -C now shows past
        # blank lines stays a hit of its own, and hits stay what the evaluations measure)
        if len(taken) >= tuning.HITS_PER_FILE or any(abs(ln - t) <= reach for t in taken):
            continue  # at most HITS_PER_FILE per file; a line within a hit's ±reach lines merges into it
        if len(hits) >= tuning.BROAD_AFTER and len(taken) >= tuning.BROAD_PER_FILE:
            waiting.append(cand)
            continue
        if _take(hits, taken, neg, path, ln, m, terms, context, vault, views, since_s, until_s, phrase, shown) \
                and len(hits) >= limit:
            break
    for neg, key, path, ln, m in waiting:
        if len(hits) >= limit:
            break
        taken = per_file[path]
        if len(taken) < tuning.HITS_PER_FILE and not any(abs(ln - t) <= reach for t in taken):
            _take(hits, taken, neg, path, ln, m, terms, context, vault, views, since_s, until_s, phrase, shown)
    return hits


def _take(hits, taken, neg, path, ln, m, terms, context, vault, views, since_s, until_s, phrase, shown) -> bool:
    """Add the candidate as a hit if its line may anchor one; whether it was added."""
    v = view_of(views, path)
    if v is None or not v.can_anchor(ln):
        return False  # tool lines, headers and frontmatter are context, never anchors
    stamp = v.stamp(ln)
    if stamp and ((since_s and stamp < since_s) or (until_s and stamp > until_s)):
        return False
    if phrase is not None and not phrase.search(v.lines[ln - 1]):
        return False  # the query's "quoted phrase" is not on this line
    if shown is not None:
        if v.lines[ln - 1] in shown:
            return False  # a copy (an export restating its prompts) shows nothing new
        shown.add(v.lines[ln - 1])
    taken.append(ln)
    spath = os.fsdecode(path)
    hits.append(Hit(path=spath, line=ln, score=round(-neg, 4), date=stamp,
                    session_id=_str(v.meta.get("session_id")), harness=_str(v.meta.get("harness")),
                    peer=_vault.peer_of(spath, vault),
                    terms=[t for i, t in enumerate(terms) if present(m, len(terms)) >> i & 1],
                    context=v.window(ln, context)))
    return True


def _str(v) -> str | None:
    return None if v is None else str(v)
