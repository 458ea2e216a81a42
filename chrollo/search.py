"""The search pipeline (DESIGN §5): query → terms → one rg scan → rank → hits.

Ranking
    score = Σ idf(term) over the distinct query terms on the anchor line
            × recency multiplier in [1, 1 + RECENCY_BOOST]
    idf(t) = ln(1 + files searched / files containing t), so a term found in every session
    (a speaker's name, "test") weighs little and a rare one weighs a lot.
    Ties: newer session first, then path, then line.

Memory stays flat however many lines match: a line's score depends only on *which* terms
it holds (its mask) and its session's age, so candidates are kept in one bounded list per
mask and merged at the end, instead of holding every matched line.
"""
from __future__ import annotations

import bisect
import datetime as dt
import heapq
import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from . import rg as _rg
from . import vault as _vault
from .errors import ChrolloError, UsageError
from .session import HEADER_RE, TOOL_LINE_RE, parse_frontmatter
from .terms import identifiers, query_terms

MAX_LIMIT = 50
MAX_CONTEXT = 50
HITS_PER_FILE = 3
RECENCY_BOOST = 0.2          # newest sessions score up to ×1.2
RECENCY_HALF_LIFE_DAYS = 30.0
BUCKET_KEEP = 256            # candidates kept per term mask
FIRST_LINES_KEPT = 8         # per file, lines holding only the commonest term
_NAME_TS = re.compile(r"(\d{4})-(\d{2})-(\d{2})_(\d{2})(\d{2})(\d{2})_")

# A seam for the thesaurus (pipeline step 3): terms → {term: [synonym, ...]}.
Expander = Callable[[list], dict]


@dataclass
class Hit:
    path: str
    line: int
    score: float
    date: str | None
    session_id: str | None
    harness: str | None
    peer: str | None
    terms: list
    context: list = field(default_factory=list)  # [{"line", "text", "match"}]


@dataclass
class SearchResult:
    query: str
    terms: list
    expanded: dict
    total_matches: int
    hits: list
    warnings: list = field(default_factory=list)
    vault: str = ""

    def to_json(self) -> dict:
        out = {"query": self.query, "terms": self.terms, "expanded": self.expanded,
               "total_matches": self.total_matches, "hits": [asdict(h) for h in self.hits]}
        if self.warnings:
            out["warnings"] = self.warnings
        return out


# ----------------------------------------------------------------------------- helpers

def _session_time(path: str) -> dt.datetime:
    """A session's start from its file name; its mtime when the name has none."""
    m = _NAME_TS.search(os.path.basename(path))
    if m:
        try:
            return dt.datetime(*map(int, m.groups()))
        except ValueError:
            pass
    try:
        return dt.datetime.fromtimestamp(os.stat(path).st_mtime)
    except OSError:
        return dt.datetime(1970, 1, 1)


def recency_multiplier(session_time: dt.datetime, now: dt.datetime) -> float:
    age_days = max(0.0, (now - session_time).total_seconds() / 86400.0)
    return 1.0 + RECENCY_BOOST * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)


class _FileView:
    """A candidate file read once: lines, frontmatter, turn headers."""

    def __init__(self, path: str):
        with open(path, "rb") as fh:
            self.lines = fh.read().decode("utf-8", "replace").split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.meta, body = parse_frontmatter(self.lines)
        self.body_start = body + 1  # 1-based first line after the frontmatter
        default_date = str(self.meta.get("date") or "")
        self.headers: list[int] = []
        self.stamps: list[str] = []
        for i in range(body, len(self.lines)):
            ln = self.lines[i]
            if ln.startswith("[") and (m := HEADER_RE.match(ln)):
                self.headers.append(i + 1)
                self.stamps.append(f"{m.group(1) or default_date} {m.group(2)}".strip())

    def can_anchor(self, line: int) -> bool:
        if line < self.body_start or line > len(self.lines):
            return False
        text = self.lines[line - 1]
        return not (HEADER_RE.match(text) or TOOL_LINE_RE.match(text) or not text.strip())

    def stamp(self, line: int) -> str | None:
        i = bisect.bisect_right(self.headers, line) - 1
        return self.stamps[i] if i >= 0 else (str(self.meta.get("date")) if self.meta.get("date") else None)

    def window(self, line: int, context: int) -> list[dict]:
        lo, hi = max(1, line - context), min(len(self.lines), line + context)
        return [{"line": n, "text": self.lines[n - 1], "match": n == line} for n in range(lo, hi + 1)]


def resolve_roots(dir: str | os.PathLike | None = None, peer: str | None = None,
                  cwd: str | None = None) -> tuple[Path, Path]:
    """(vault, folder to scan) for the search options."""
    vault = Path(dir).expanduser().resolve() if dir else _vault.memories_dir(cwd)
    _vault.require_dir(vault, "memory folder" if dir else "vault")
    if peer is None:
        return vault, vault
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", peer):
        raise UsageError(f"not a peer name: {peer!r}", kind="bad_peer")
    folder = vault / _vault.PEERS / peer
    if not folder.is_dir():
        raise ChrolloError("peer_not_found", f"no files from peer {peer!r} in {vault}",
                           "`chrollo stats` lists the peers this vault holds.")
    return vault, folder


# ----------------------------------------------------------------------------- search

def search(query: str, *, limit: int = 10, context: int = 3, dir: str | os.PathLike | None = None,
           since: str | dt.date | None = None, harness: str | None = None, peer: str | None = None,
           peers: bool = True, now: dt.datetime | None = None, expander: Expander | None = None,
           timeout: float = 30.0, cwd: str | None = None) -> SearchResult:
    """Search the vault (or ``dir``) for ``query``; see the module doc for the ranking."""
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}", kind="bad_limit")
    if not 0 <= context <= MAX_CONTEXT:
        raise UsageError(f"--context must be between 0 and {MAX_CONTEXT}, got {context}",
                         kind="bad_context")
    since_d = _parse_since(since)
    now = now or _now()
    vault, folder = resolve_roots(dir, peer, cwd)
    terms = query_terms(query)
    result = SearchResult(query, terms, {}, 0, [], vault=str(vault))
    if not terms:
        return result
    weights_extra: dict[str, float] = {}
    idents = identifiers(query)
    _run(result, terms, idents, weights_extra, folder, vault, limit, context, since_d, harness,
         peers and peer is None, now, timeout)
    # Step 3 (thesaurus) plugs in here: when exact terms find too little, search again
    # with synonyms weighing less. The expander issue fills this seam.
    if expander is not None and len(result.hits) < limit:
        expanded = {t: s for t, s in (expander(terms) or {}).items() if s}
        if expanded:
            result.expanded = expanded
            syn = [s for ss in expanded.values() for s in ss if s not in terms]
            weights_extra = {s: 0.5 for s in syn}
            result.hits, result.warnings = [], []
            _run(result, terms + syn, idents, weights_extra, folder, vault, limit, context, since_d,
                 harness, peers and peer is None, now, timeout)
    return result


def _now() -> dt.datetime:
    env = os.environ.get("CHROLLO_NOW")  # a frozen clock for tests and reproducible runs
    if env:
        try:
            return dt.datetime.fromisoformat(env)
        except ValueError:
            raise UsageError(f"CHROLLO_NOW is not an ISO date/time: {env!r}", kind="bad_clock")
    return dt.datetime.now()


def _parse_since(since) -> dt.date | None:
    if since is None or isinstance(since, dt.date):
        return since
    try:
        return dt.date.fromisoformat(str(since))
    except ValueError:
        raise UsageError(f"--since takes a date like 2026-06-01, got {since!r}", kind="bad_date")


def _run(result: SearchResult, terms: list, idents: dict, synonym_weight: dict, folder: Path, vault: Path,
         limit: int, context: int, since: dt.date | None, harness: str | None,
         include_peers: bool, now: dt.datetime, timeout: float) -> None:
    n_terms = len(terms)
    term_index = {t.encode(): i for i, t in enumerate(terms)}
    index = {t: i for i, t in enumerate(terms)}
    compounds = [(index[t], [index[p] for p in parts]) for t, (_a, parts) in idents.items()
                 if t in index and parts]
    patterns = list(terms)
    term_index = {t.encode(): i for i, t in enumerate(terms)}
    for t, (aliases, _p) in idents.items():
        for a in aliases:
            if t in index and a.encode() not in term_index:
                patterns.append(a)
                term_index[a.encode()] = index[t]
    df = [0] * n_terms
    buckets: dict[int, list] = {}
    total = 0
    seen_files = 0
    since_ts = dt.datetime.combine(since, dt.time()).timestamp() if since else None
    info = _rg.Scan()
    globs = ("*.md",) if include_peers or folder != vault else ("*.md", f"!{_vault.PEERS}/")
    for path, rows in _rg.scan(patterns, [str(folder)], globs=globs, timeout=timeout, info=info):
        seen_files += 1
        if since_ts is not None:
            try:
                if os.stat(path).st_mtime < since_ts:
                    continue  # nothing in this file was written on or after --since
            except OSError:
                continue
        if harness is not None and str(_head_meta(path).get("harness", "")).lower() != harness.lower():
            continue
        low = rows.lower() if rows.isascii() else \
            rows.decode("utf-8", "replace").casefold().encode("utf-8")
        by_text: dict[bytes, list] = {}
        for row in low.split(b"\n"):  # b"LINE:match"
            ln, _, text = row.partition(b":")
            got = by_text.get(text)
            if got is None:
                by_text[text] = [ln]
            else:
                got.append(ln)
        sets = [set()] * n_terms
        for text, lns in by_text.items():
            i = term_index.get(text)
            if i is not None:
                sets[i] = set(lns) if not sets[i] else sets[i].union(lns)
        for i, parts in compounds:  # rg reports "auth-service" once: credit "auth", "service"
            if sets[i]:
                for j in parts:
                    sets[j] |= sets[i]
        order = sorted((i for i in range(n_terms) if sets[i]), key=lambda i: -len(sets[i]))
        if not order:
            continue
        for i in order:
            df[i] += 1
        key_ts = _key_ts(path)
        # Lines holding only the most frequent term all score alike: keep just the first few.
        # Every other line gets its full mask. This keeps per-line Python work off the
        # common term (a speaker's name, a project's name) that matches half the vault.
        big = order[0]
        rest = order[1:]
        masks: dict[bytes, int] = {}
        for i in rest:
            bit = 1 << i
            for ln in sets[i]:
                masks[ln] = masks.get(ln, 0) | bit
        big_set = sets[big]
        bigbit = 1 << big
        for ln in masks:
            if ln in big_set:
                masks[ln] |= bigbit
        alone = big_set.difference(masks) if masks else big_set
        total += len(alone) + len(masks)
        if alone:
            b = buckets.setdefault(bigbit, [])
            b.extend((key_ts, path, ln) for ln in sorted(map(int, alone))[:FIRST_LINES_KEPT])
            if len(b) > 2 * BUCKET_KEEP:
                b.sort()
                del b[BUCKET_KEEP:]
        for ln, m in masks.items():
            b = buckets.setdefault(m, [])
            b.append((key_ts, path, int(ln)))
            if len(b) > 2 * BUCKET_KEEP:
                b.sort()
                del b[BUCKET_KEEP:]
    if info.errors:
        result.warnings.extend(info.errors[:20])
    if info.timed_out:
        result.warnings.append(f"search stopped after {timeout:g}s; results are partial")
    if info.truncated:
        result.warnings.append("too many matching lines; results are from the first part of the vault")
    if total == 0 and info.errors and not info.timed_out:
        raise ChrolloError("rg_error", "ripgrep could not search the memory folder: " + info.errors[0],
                           "Check the folder's permissions; `chrollo stats` lists what it can read.")
    result.total_matches = total
    n_files = max(info.files_searched, seen_files, 1)
    idf = [math.log(1.0 + n_files / d) if d else 0.0 for d in df]
    for i, t in enumerate(terms):
        idf[i] *= synonym_weight.get(t, 1.0)
    result.hits = _select(buckets, idf, terms, limit, context, since, now, vault)


def _key_ts(path: str) -> int:
    """Sort key: newer sessions first (negated YYYYMMDDHHMMSS of the session start)."""
    m = _NAME_TS.search(os.path.basename(path))
    if m:
        return -int("".join(m.groups()))
    return -int(_session_time(path).strftime("%Y%m%d%H%M%S"))


def _head_meta(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return {}
    return parse_frontmatter(head.split("\n"))[0]


def _select(buckets: dict, idf: list, terms: list, limit: int, context: int,
            since: dt.date | None, now: dt.datetime, vault: Path) -> list:
    """Merge the per-mask candidate lists in global score order, validating as we go."""
    weight = {m: sum(idf[i] for i in range(len(idf)) if m >> i & 1) for m in buckets}
    heap = []
    lists = {}
    for m, b in buckets.items():
        b.sort()
        del b[BUCKET_KEEP:]
        lists[m] = b
        heapq.heappush(heap, _entry(m, 0, b[0], weight[m], now))
    views: dict[str, _FileView | None] = {}
    per_file: dict[str, list] = {}
    hits: list[Hit] = []
    since_s = since.isoformat() if since else None
    while heap and len(hits) < limit:
        neg, key_ts, path, ln, m, pos = heapq.heappop(heap)
        if pos + 1 < len(lists[m]):
            heapq.heappush(heap, _entry(m, pos + 1, lists[m][pos + 1], weight[m], now))
        taken = per_file.setdefault(path, [])
        if len(taken) >= HITS_PER_FILE or any(abs(ln - t) <= 2 * context for t in taken):
            continue  # at most 3 per file; overlapping windows merge into the better hit
        if path not in views:
            try:
                views[path] = _FileView(path)
            except OSError:
                views[path] = None
        v = views[path]
        if v is None or not v.can_anchor(ln):
            continue  # tool lines, headers and frontmatter are context, never anchors
        stamp = v.stamp(ln)
        if since_s and stamp and stamp[:10] < since_s:
            continue
        taken.append(ln)
        hits.append(Hit(path=path, line=ln, score=round(-neg, 4), date=stamp,
                        session_id=_str(v.meta.get("session_id")), harness=_str(v.meta.get("harness")),
                        peer=_vault.peer_of(Path(path), vault), terms=[t for i, t in enumerate(terms) if m >> i & 1],
                        context=v.window(ln, context)))
    return hits


def _str(v) -> str | None:
    return None if v is None else str(v)


def _entry(mask: int, pos: int, cand: tuple, w: float, now: dt.datetime) -> tuple:
    key_ts, path, ln = cand
    st = dt.datetime.strptime(str(-key_ts), "%Y%m%d%H%M%S")
    return (-w * recency_multiplier(st, now), key_ts, path, ln, mask, pos)
