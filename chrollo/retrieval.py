"""The search pipeline (DESIGN §5): query → terms → ripgrep → rank → hits.

Ranking
    score = (Σ idf(term) over the distinct query terms on the anchor line
             + NEIGHBOR_WEIGHT × Σ idf(term) over the other exact terms within NEIGHBOR_LINES)
            × a recency multiplier in [1, 1 + RECENCY_BOOST]
            × its session's factor in [1/(1 + SESSION_WEIGHT), 1] (a file-level BM25 of the
              query terms, see _by_session) × its turn's length factor (see TURN_POWER)
            × 1 / (1 + DATE_WEIGHT) if the query names dates and its session is from none
    idf(t) = ln(1 + sessions searched / sessions containing t): a term found in every
    session (a speaker's name, "test") weighs little, a rare one a lot. Ties: newer session
    first, then path, then line.

Engine (why it is shaped like this: on a 100 MB vault a name or a common word matches
100,000 lines, and handling each of them in Python costs more than ripgrep's whole scan)
    1. ripgrep lists each occurrence as a compact ``LINE:term`` row (those in a file's
       frontmatter are dropped: see FRONTMATTER_LINES); a file's rows are folded
       into per-line term masks with C-level bytes operations, and candidates are kept in
       one bounded list per mask (memory stays flat however much matches).
    2. Vaults of thousands of sessions are sampled first: ~1/64 of the sessions (picked by
       the last hex digits of their names) are searched for every term. That estimates each
       term's document frequency and singles out the "common" terms (more than COMMON_RATE
       occurrences per session), which the main scan then leaves out.
    3. The best POOL candidates are rescored exactly: the common terms found on the line
       itself (the file is read anyway to show the hit) are added back into its mask.
    4. If that yields fewer hits than asked for, or a line holding only common terms (as
       seen in the sample) could still outrank the last hit, the search is repeated without
       the shortcut, so a sparse answer is never lost to it.
"""
from __future__ import annotations

import bisect
import datetime as dt
import heapq
import math
import os
import re
import time
from functools import reduce
from itertools import filterfalse, islice, repeat
from operator import or_

from . import clock as _clock
from . import listing as _listing
from . import rg as _rg
from . import vault as _vault
from .errors import ChrolloError, UsageError
from .fileformat import HEADER_RE, TOOL_LINE_RE, file_date, parse_frontmatter, read_frontmatter
from .terms import _parts, identifiers, inflections, query_terms

MAX_LIMIT = 50
MAX_TERMS = 100              # searchable words of one query at most (the rest are ignored, with a warning)
MAX_CONTEXT = 50
HITS_PER_FILE = 8            # (5 dropped the further answers a long session held: docs/ranking.md)
MERGE_FACTOR = 1             # a candidate whose line is inside a hit's window merges into it
MAX_LINE_CHARS = 2000        # context lines are clipped to this in hits (not in `chrollo read`)
RECENCY_BOOST = 0.2          # newest sessions score up to ×1.2
RECENCY_HALF_LIFE_DAYS = 30.0
BUCKET_KEEP = 256            # candidates kept per term mask
LINES_PER_FILE_MASK = 8      # per file, candidates kept per term mask
POOL = 300                   # candidates rescored exactly when common terms were left out
# The sample: among the first SAMPLE_AFTER entries of the vault folder (directory order,
# unrelated to names), the sessions whose names end in [0-3]0.md — the last hex digits of
# their session ids, so ~1/64 of them, uniformly. Only vaults with more entries than that
# are sampled (measured: below ~8,000 sessions one full listing is faster).
SAMPLE_AFTER = 8_000
SAMPLE_ENDINGS = ("00.md", "10.md", "20.md", "30.md")
COMMON_RATE = 0.15           # occurrences per session (in the sample) that make a term "common"
_NAME_TS = re.compile(r"(\d{4})-(\d{2})-(\d{2})_(\d{2})(\d{2})(\d{2})_")

# A search with a deadline (the recall hook) lists the vault, scans its newest sessions first
# in batches (DEADLINE_BATCH files, always in full, then 4× more each time until the
# deadline); files
# over DEADLINE_MAX_FILE bytes (a pasted multi-megabyte log, a vocabulary-stuffed peer file)
# are skipped there. Explicit searches have no deadline and stay complete.
DEADLINE_BATCH = 1000
DEADLINE_MAX_BATCH = 12_000  # (paths go on rg's command line: stay far below ARG_MAX)
DEADLINE_MAX_FILE = 4 << 20
SCAN_RESERVE = 0.3           # share of the deadline kept for ranking and reading the hits
# (the vault's listing is cached: see chrollo/listing.py)

# Turn-length normalisation (BM25's document-length idea, with the turn as the document): a
# line of a turn longer than TURN_PIVOT lines weighs (TURN_PIVOT / turn lines) ** TURN_POWER.
# A coding agent's long replies restate what the short prompt asked; the prompt is what is
# recalled (docs/ranking.md: code dev hit@1 0.47 -> 0.66). Conversations of short turns
# (LoCoMo) are unchanged. Applied to the best RERANK_POOL candidates, whose files are read
# anyway to show them.
TURN_PIVOT = 6
TURN_POWER = float(os.environ.get("CHROLLO_TURN_POWER", "0.2"))
RERANK_POOL = 60

# Session score (docs/ranking.md, "Sessions"): a question's words are often spread over a
# session, not gathered on one line. A file's BM25 over the query terms (term frequency
# saturating with SESSION_K1, no length normalisation), from the counts the one rg scan already
# gives, scales its lines by (1 + SESSION_WEIGHT × score / best possible) / (1 + SESSION_WEIGHT)
# (at most 1, so the lazy ranking stays as exact as _by_turn_length's), for the best POOL
# candidates. Half weight: at 1.0 code dev loses a question.
SESSION_WEIGHT = 0.5
SESSION_K1 = 1.2
# Named dates (docs/ranking.md, "Sessions"): a query naming a month, a day or a year ("in July",
# "on 9 November, 2022", "2023-06-03") is about what was said then. A session started outside
# every date the query names has its lines scaled by 1 / (1 + DATE_WEIGHT), from the session's
# own time (its file name), for the same POOL candidates as the session score. A named day
# covers DATE_SLACK days either side (people misremember by a day or two).
DATE_WEIGHT = 1.0
DATE_SLACK = 3
FRONTMATTER_LINES = 400      # (parse_frontmatter looks this far for the closing ---)
SYNONYM_WEIGHT = 0.5         # a synonym's idf counts half an exact term's
# Terms on the lines around a line (the question it answers, the answer it got) count half:
# a line is scored with the distinct query terms on it, plus NEIGHBOR_WEIGHT × the idf of
# the other query terms within NEIGHBOR_LINES lines (docs/ranking.md: +0.097 hit@10 on dev).
NEIGHBOR_WEIGHT = float(os.environ.get("CHROLLO_NEIGHBOR_WEIGHT", "0.5"))
NEIGHBOR_LINES = 8
INFLECT = os.environ.get("CHROLLO_INFLECT", "1") != "0"  # match plural/-ed/-ing forms (ablation knob)
# A query word found only as a part of an identifier (``config`` in ``parse_config``,
# ``settings`` in ``loadSettings``) counts PART_WEIGHT of a whole-word match: it is the same
# thing named, but a line that says the word itself is the better answer (docs/ranking.md).
PART_WEIGHT = 0.8
PART_MIN = 3                 # words shorter than this never match inside identifiers
# A seam for other synonym sources (pipeline step 3): (terms, only) -> {term: [synonym, ...]}.
Expander = "Callable[[list, set | None], dict]"


class Hit:
    """One search hit: an anchor line, its session, and the lines around it.

    (Plain classes rather than dataclasses here: this module is on the recall hot path and
    dataclasses pulls in ``inspect``.)
    """

    __slots__ = ("path", "line", "score", "date", "session_id", "harness", "peer", "terms", "context")

    def __init__(self, path: str, line: int, score: float, date: str | None, session_id: str | None,
                 harness: str | None, peer: str | None, terms: list, context: list):
        self.path, self.line, self.score, self.date = path, line, score, date
        self.session_id, self.harness, self.peer = session_id, harness, peer
        self.terms = terms
        self.context = context  # [{"line", "text", "match"}]

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}

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

    def to_json(self) -> dict:
        out = {"query": self.query, "terms": self.terms, "expanded": self.expanded,
               "total_matches": self.total_matches, "hits": [h.to_json() for h in self.hits]}
        if self.warnings:
            out["warnings"] = self.warnings
        return out


# ----------------------------------------------------------------------------- helpers

def _mtime(path: str) -> dt.datetime:
    """When a file without a timestamp in its name was last written (its session's age)."""
    try:
        return dt.datetime.fromtimestamp(os.stat(path).st_mtime)
    except OSError:
        return dt.datetime(1970, 1, 1)


def recency_multiplier(session_time: dt.datetime, now: dt.datetime) -> float:
    age_days = max(0.0, (now - session_time).total_seconds() / 86400.0)
    return 1.0 + RECENCY_BOOST * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)


class _FileView:
    """A candidate file read once: lines, frontmatter, turn headers."""

    def __init__(self, path: str, lines: list | None = None):
        self.lines = lines if lines is not None else _read_lines(path)
        self.meta, body = parse_frontmatter(self.lines)
        self.body_start = body + 1  # 1-based first line after the frontmatter
        default_date = str(self.meta.get("date") or "") or file_date(path) or ""
        self.headers: list[int] = []
        self.stamps: list[str] = []
        self.inline: set = set()  # legacy headers with the user's text on the same line
        for i in range(body, len(self.lines)):
            ln = self.lines[i]
            if ln.startswith(("[", "## [")) and (m := HEADER_RE.match(ln)):
                self.headers.append(i + 1)
                self.stamps.append(f"{m.group(1) or default_date} {m.group(2)}".strip())
                if m.group(4):
                    self.inline.add(i + 1)

    def can_anchor(self, line: int) -> bool:
        if line < self.body_start or line > len(self.lines):
            return False
        text = self.lines[line - 1]
        if line in self.inline:
            return True
        return not (HEADER_RE.match(text) or TOOL_LINE_RE.match(text) or not text.strip())

    def turn_lines(self, line: int) -> int:
        """How many lines the turn holding ``line`` spans (header to the next header)."""
        i = bisect.bisect_right(self.headers, line) - 1
        start = self.headers[i] if i >= 0 else self.body_start
        end = self.headers[i + 1] if i + 1 < len(self.headers) else len(self.lines) + 1
        return end - start

    def stamp(self, line: int) -> str | None:
        i = bisect.bisect_right(self.headers, line) - 1
        return self.stamps[i] if i >= 0 else (str(self.meta.get("date")) if self.meta.get("date") else None)

    def window(self, line: int, context: int) -> list[dict]:
        # (never into the frontmatter: a hit shows the conversation, not the properties)
        lo, hi = max(self.body_start, line - context), min(len(self.lines), line + context)
        return [{"line": n, "text": _clip(self.lines[n - 1]), "match": n == line} for n in range(lo, hi + 1)]


def _clip(text: str) -> str:
    """A context line of reasonable length (a pasted log can be megabytes on one line)."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]} …[{len(text) - MAX_LINE_CHARS} more characters; chrollo read shows all]"


def resolve_roots(dir: str | os.PathLike | None = None, peer: str | None = None,
                  cwd: str | None = None) -> tuple[str, str]:
    """(vault, folder to scan) for the search options, as absolute paths."""
    vault = os.path.realpath(os.path.expanduser(os.fspath(dir))) if dir else _vault.memories_path(cwd)
    _vault.require_dir(vault, "memory folder" if dir else "vault")
    if peer is None:
        return vault, vault
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", peer):
        raise UsageError(f"not a peer name: {peer!r}", kind="bad_peer")
    folder = os.path.join(vault, _vault.PEERS, peer)
    if not os.path.isdir(folder):
        raise ChrolloError("peer_not_found", f"no files from peer {peer!r} in {vault}",
                           "`chrollo stats` lists the peers this vault holds.")
    return vault, folder


# ----------------------------------------------------------------------------- search

def search(query: str, *, limit: int = 10, context: int = 3, dir: str | os.PathLike | None = None,
           since: str | dt.date | None = None, harness: str | None = None, peer: str | None = None,
           peers: bool = True, now: dt.datetime | None = None, expand: str = "auto",
           expander: Expander | None = None, timeout: float = 30.0,
           cwd: str | None = None, deadline: float | None = None) -> SearchResult:
    """Search the vault (or ``dir``) for ``query``; see the module doc for the ranking.

    ``expand``: "auto" adds synonyms (weighing SYNONYM_WEIGHT of an exact term) when exact
    terms find too little — a term found nowhere, or fewer hits than ``limit``; "always"
    expands every term; "never" does not. ``expander`` replaces the bundled thesaurus:
    ``expander(terms, only) -> {term: [synonyms]}``.

    ``deadline`` (seconds): answer within about that long however large the vault, from its
    newest sessions (see DEADLINE_BATCH); what was left unsearched is said in ``warnings``.
    Without it the search is complete (up to ``timeout``).
    """
    start = time.monotonic()
    stop = start + deadline * (1 - SCAN_RESERVE) if deadline else None
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}", kind="bad_limit")
    if not 0 <= context <= MAX_CONTEXT:
        raise UsageError(f"--context must be between 0 and {MAX_CONTEXT}, got {context}",
                         kind="bad_context")
    if expand not in ("auto", "always", "never"):
        raise UsageError(f"expand must be auto, always or never, got {expand!r}", kind="usage")
    since_d = parse_since(since)
    now = _clock.local(now or _clock.now())  # (naive wall-clock time, as the file names hold)
    vault, folder = resolve_roots(dir, peer, cwd)
    terms = query_terms(query)
    cut = len(terms) > MAX_TERMS  # a pasted log is not a query: bounded work whatever its size
    terms = terms[:MAX_TERMS]
    result = SearchResult(query, terms, {}, 0, [], vault=str(vault))
    if cut:
        result.warnings.append(f"the query has more than {MAX_TERMS} searchable words: "
                               f"only the first {MAX_TERMS} were searched")
    if not terms:
        return result
    idents = identifiers(query, terms)  # (the cut terms: a kept identifier's parts may be past it)
    args = (folder, vault, limit, context, since_d, harness, peers and peer is None, now, timeout, stop)
    memo: dict = {}  # (what a search's passes share: the index's view of the vault)
    df = _run(result, terms, idents, {}, *args, memo=memo)
    # Step 3: synonyms, only when exact terms find too little (or when asked to).
    missing = {t for t, d in zip(terms, df) if d == 0}
    if expand == "never" or (expand == "auto" and len(result.hits) >= limit and not missing):
        return result
    if stop is not None and time.monotonic() >= stop:
        return result  # no time left for a second pass
    only = missing if expand == "auto" and len(result.hits) >= limit else None
    if expander is None:
        from .thesaurus import expand as expander
    tried = {t: [s for s in ss if s not in terms] for t, ss in (expander(terms, only) or {}).items()}
    syns = list(dict.fromkeys(s for ss in tried.values() for s in ss))
    if not syns:
        return result
    wider = SearchResult(query, terms, {}, 0, [], result.warnings[:1] if cut else None, vault=str(vault))
    df2 = _run(wider, terms + syns, idents, {s: SYNONYM_WEIGHT for s in syns}, *args, memo=memo)
    found = {s for s, d in zip(terms + syns, df2) if d}
    expanded = {t: [s for s in ss if s in found] for t, ss in tried.items()}
    expanded = {t: ss for t, ss in expanded.items() if ss}
    if not expanded:
        return result  # no synonym occurs anywhere: the exact result stands
    wider.expanded = expanded
    return wider


def parse_since(since) -> dt.date | None:
    """``--since``'s value as a date; a usage error (``bad_date``) unless it is a real date
    from 1970 to 9999 (earlier ones cannot be turned into file times)."""
    if since is None:
        return None
    try:
        d = since if isinstance(since, dt.date) else dt.date.fromisoformat(str(since))
    except ValueError:
        raise UsageError(f"--since takes a date like 2026-06-01, got {since!r}", kind="bad_date") from None
    if d.year < 1970:
        raise UsageError(f"--since must be a date from 1970-01-01 on, got {since!s}", kind="bad_date")
    return d


class _Query:
    """A query compiled for one search: each spelling ("form") of a term and its mask."""

    def __init__(self, terms: list, idents: dict):
        index = {t: i for i, t in enumerate(terms)}
        self.terms = terms
        # A form's mask: its term's bit, plus its parts' bits for an identifier (a line with
        # "auth-service" credits "auth" and "service" too). Aliases share the mask.
        self.mask: dict[str, int] = {}
        for t, i in index.items():
            aliases, parts = idents.get(t, ([], []))
            m = (1 << i) | sum(1 << index[p] for p in parts)
            for form in [t, *aliases, *(inflections(t) if INFLECT else ())]:
                self.mask.setdefault(form, m)
        self.ascii = all(f.isascii() for f in self.mask)
        # The spellings that also match inside identifiers: plain ASCII words (the parts of
        # an identifier the query spelled out are query terms of their own already).
        # A part match sets the term's bit shifted by 2n (see _weight).
        n = len(terms)
        self.part: dict[str, int] = {}
        for t, i in index.items():
            if len(t) >= PART_MIN and t.isascii() and t.isalnum() and t not in idents:
                for form in [t, *(inflections(t) if INFLECT else ())]:
                    self.part.setdefault(form, 1 << (2 * n + i))

    def forms(self, terms_mask: int = -1) -> list:
        """The spellings of the terms in ``terms_mask`` (by their own term bit)."""
        return [f for f, m in self.mask.items() if (m & -m) & terms_mask]

    def part_forms(self, terms_mask: int = -1) -> list:
        n2 = 2 * len(self.terms)
        return [f for f, m in self.part.items() if (m >> n2) & terms_mask]


def _present(mask: int, n: int) -> int:
    """The terms (bits 0..n-1) a mask holds, whether as whole words or as identifier parts."""
    return (mask | mask >> (2 * n)) & ((1 << n) - 1)


# Frontmatter rows never count (not in a document frequency, a mask, a neighbourhood, a total,
# a hit or an excerpt): the properties (a title repeating the first prompt, tags, the project,
# another session's title slug in a `previous` link, format 1's cwd and date) are not the
# conversation. rg's rows carry no hint of where a file's frontmatter ends, so a file whose
# first row lies within FRONTMATTER_LINES (parse_frontmatter's limit: a later line is never
# frontmatter) has its head read once per search (FRONTMATTER_HEAD bytes, more only for a
# frontmatter that long) and its rows up to the closing ``---`` dropped.
FRONTMATTER_HEAD = 4096
FRONTMATTER_MAX = 64 << 10   # (a "frontmatter" longer than this is not one chrollo wrote: it counts)
_CLOSING = re.compile(rb"\n---\r*\n")
_OPENING = re.compile(rb"---\r*(?:\n|\Z)")          # a first line "---" (trailing CRs aside)
_CLOSING_LINE = re.compile(rb"\n---\r*(?:\n|\Z)")  # a later line "---"


def _frontmatter_end(path: bytes) -> int:
    """The line (1-based) of the ``---`` closing the file's frontmatter, 0 if it has none —
    where fileformat.parse_frontmatter puts it, from the file's head only."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            head = os.read(fd, FRONTMATTER_HEAD)
            if head.startswith(b"---") and len(head) == FRONTMATTER_HEAD and not _CLOSING.search(head):
                head += os.read(fd, FRONTMATTER_MAX - FRONTMATTER_HEAD)  # (a long frontmatter: rare)
        finally:
            os.close(fd)
    except OSError:
        return 0
    # (regexes, not a split into lines: this runs for most matching files of a search)
    opening = _OPENING.match(head)
    closing = opening and _CLOSING_LINE.search(head, opening.end() - 1)
    if not closing:
        return 0
    k = head.count(b"\n", 0, closing.start() + 1)  # the closing line's index
    return k + 1 if k < FRONTMATTER_LINES else 0


def _rows_after(rows: bytes, end: int) -> bytes:
    """``rows`` (in line order) without those on lines up to ``end``."""
    pos, n = 0, len(rows)
    while pos < n and int(rows[pos:rows.index(b":", pos)]) <= end:
        pos = rows.index(b"\n", pos) + 1
    return rows[pos:]


class _Collector:
    """Folds ripgrep's per-file rows into document counts and bounded candidate lists.

    This is the hot loop of a search (once per matching file, 10⁴–10⁵ times on a large
    vault), so it sticks to C-level bytes operations: the rows of a file's most frequent
    form become bare line numbers through one ``replace``, and only the rows of the other
    forms are looked at one by one.
    """

    def __init__(self, q: _Query, fm_ends: dict | None = None):
        self.q = q
        self.fm_ends = {} if fm_ends is None else fm_ends  # path -> _frontmatter_end, once per search
        self.n = len(q.terms)
        self.masks = {f.encode(): m for f, m in q.mask.items()}
        self.total = 0                       # term occurrences listed
        self.files = 0                       # files with a match
        self.doc_masks: dict[int, int] = {}  # terms present in a file -> number of files
        self.buckets: dict[int, list] = {}   # mask -> [(file key, path, line)]
        self.cut: dict[int, bytes] = {}      # mask -> the oldest file key kept once full
        self.sampled: set = set()            # files of the sample (their masks are exact)
        self.common = 0                      # mask of the terms the main scan leaves out
        self.rows: list | None = None        # occurrences per term, while sampling
        self.idents: dict[bytes, int] = {}   # identifier seen -> the part bits it holds
        # file -> (its forms' (suffix, mask)s, their counts in its body): the session score's
        # input (SESSION_WEIGHT), kept for the files that have a candidate (memory stays flat
        # however many files match)
        self.tf: dict[bytes, tuple] = {}
        self.counted: tuple = ()             # the file being added
        self.use(q.forms())

    def ident_mask(self, ident: bytes) -> int:
        """The part bits of an identifier rg reported (``loadSettings`` -> "settings")."""
        m = self.idents.get(ident)
        if m is None:
            part = self.q.part
            m = 0
            for p in _parts(ident.decode("ascii", "replace")):
                m |= part.get(p.lower(), 0)
            self.idents[ident] = m
        return m

    def use(self, forms: list) -> None:
        """The forms the next scan lists."""
        self.all_suffixes = [(b":" + f.encode() + b"\n", self.masks[f.encode()]) for f in forms]
        self.seen(b"".join(s for s, _m in self.all_suffixes))

    def seen(self, buffer: bytes) -> None:
        """Narrow the per-file work to the forms in this buffer of rg output (most inflected
        forms and synonyms occur nowhere: counting them in every file is wasted time)."""
        self.suffixes = [(s, m) for s, m in self.all_suffixes if s in buffer]
        self.sfxs = [s for s, _m in self.suffixes]

    def df(self) -> list:
        """Per term: the number of files it occurs in."""
        out = [0] * self.n
        for m, k in self.doc_masks.items():
            m = _present(m, self.n)
            for i in range(self.n):
                if m >> i & 1:
                    out[i] += k
        return out

    def fold(self, rows: bytes) -> bytes:
        """Lowercase rows (ASCII fast path; casefold when the query has other letters)."""
        if self.q.ascii or rows.isascii():
            return rows.lower()
        return rows.decode("utf-8", "replace").casefold().encode("utf-8")

    def add(self, path: bytes, rows: bytes) -> None:
        c = rows.find(b":")
        if 0 < c and (first := int(rows[:c])) <= FRONTMATTER_LINES:  # (see FRONTMATTER_LINES)
            end = self.fm_ends.get(path)
            if end is None:
                end = self.fm_ends[path] = _frontmatter_end(path)
            if end >= first and not (rows := _rows_after(rows, end)):
                return
        low = self.fold(rows)
        counts = list(map(low.count, self.sfxs))
        n_big = max(counts, default=0)
        if n_big == 0:
            if not self.q.part:
                return  # only case variants we do not map (e.g. "ß" vs "SS"): ignore
            sfx_big, big = b"\n", 0  # identifiers only (or nothing we map, see below)
        else:
            sfx_big, big = self.suffixes[counts.index(n_big)]
        if self.rows is not None:
            for c, (_s, m) in zip(counts, self.suffixes):
                self.rows[(m & -m).bit_length() - 1] += c
        self.files += 1
        self.total += sum(counts)
        self.counted = (self.suffixes, counts)  # (no frontmatter row is left to count)
        key = _file_key(path)
        rows_l = low.replace(sfx_big, b"\n").split(b"\n")  # big rows become bare b"LINE"
        big_lines = set(filter(bytes.isdigit, rows_l))
        masks: dict[bytes, int] = {}
        if n_big != len(rows_l) - 1:  # other forms too: their rows one by one
            get = self.masks.get
            idents = False
            for r in filterfalse(bytes.isdigit, rows_l):
                ln, _, text = r.partition(b":")
                m = get(text)
                if m:
                    masks[ln] = masks.get(ln, 0) | m
                elif text:
                    idents = True
            if idents and self.q.part:  # identifiers holding a part: split them as written
                for r in rows.split(b"\n"):
                    ln, _, text = r.partition(b":")
                    if text and text.lower() not in self.masks and (m := self.ident_mask(text)):
                        masks[ln] = masks.get(ln, 0) | m
                        self.total += 1
            if not (big_lines or masks):
                return
        present = big if big_lines else 0
        alone = big_lines.difference(masks) if masks else big_lines
        if NEIGHBOR_WEIGHT and masks:  # (one form alone: no line has a neighbour of another term)
            self._add_with_neighbors(key, path, big, alone, masks, big_lines)
            for m in masks.values():
                present |= m
            self.doc_masks[present] = self.doc_masks.get(present, 0) + 1
            return
        if alone:
            self._push(big, key, path, sorted(map(int, alone))[:LINES_PER_FILE_MASK])
        by_mask: dict[int, list] = {}
        for ln, m in masks.items():
            if ln in big_lines:
                m |= big
            present |= m
            by_mask.setdefault(m, []).append(int(ln))
        for m, lns in by_mask.items():
            lns.sort()
            self._push(m, key, path, lns[:LINES_PER_FILE_MASK])
        self.doc_masks[present] = self.doc_masks.get(present, 0) + 1

    def _add_with_neighbors(self, key, path, big, alone, masks, big_lines) -> None:
        """Bucket each line by (its terms, the other terms within NEIGHBOR_LINES lines).

        Most matched lines of a file hold only its most frequent form ("big", e.g. a name):
        they keep their plain key and go in bulk unless another form is near. Only the few
        lines with other forms are visited one by one (this is the per-file hot loop).
        """
        n, w = self.n, NEIGHBOR_LINES
        other = {int(ln): (m | big if ln in big_lines else m) for ln, m in masks.items()}
        ol, al = sorted(other), sorted(map(int, alone))
        lo, hi = bisect.bisect_left, bisect.bisect_right
        by_key: dict[int, list] = {}
        near: dict[int, int] = {}  # big-only line near another form -> the terms near it
        of, low = other.__getitem__, (1 << n) - 1
        for ln, m in other.items():
            # the terms of the other-form lines in the window, its own included (they drop
            # out with ~pm below), OR-ed in C; then the big-only lines in it, one by one
            nm = reduce(or_, map(of, ol[lo(ol, ln - w):hi(ol, ln + w)]))
            a, b = lo(al, ln - w), hi(al, ln + w)
            if a < b:
                nm |= big
                for x in al[a:b]:
                    near[x] = near.get(x, 0) | m
            pm = m | m >> 2 * n
            by_key.setdefault(m | (((nm | nm >> 2 * n) & ~pm & low) << n), []).append(ln)
        if al:
            plain = [x for x in al if x not in near] if near else al
            if plain:
                by_key.setdefault(big, []).extend(plain[:LINES_PER_FILE_MASK])
            for x, nm in near.items():
                by_key.setdefault(big | ((_present(nm, n) & ~big) << n), []).append(x)
        for k, lns in by_key.items():
            lns.sort()
            self._push(k, key, path, lns[:LINES_PER_FILE_MASK])

    def _push(self, mask: int, key: bytes, path: bytes, lines: list) -> None:
        b = self.buckets.get(mask)
        if b is None:
            b = self.buckets[mask] = []
        elif key > self.cut.get(mask, b"\xff"):
            return  # older than everything this mask keeps
        self.tf[path] = self.counted
        b.extend(zip(repeat(key), repeat(path), lines))
        if len(b) > 2 * BUCKET_KEEP:
            b.sort()
            del b[BUCKET_KEEP:]
            self.cut[mask] = b[-1][0]


def _run(result: SearchResult, terms: list, idents: dict, synonym_weight: dict, folder: str,
         vault: str, limit: int, context: int, since: dt.date | None, harness: str | None,
         include_peers: bool, now: dt.datetime, timeout: float, stop: float | None,
         shortcut: bool = True, fm_ends: dict | None = None, memo: dict | None = None) -> list:
    """Scan and rank into ``result``; returns each term's document frequency."""
    q = _Query(terms, idents)
    col = _Collector(q, fm_ends)
    # (unanchored: a vault's only folders named "peers" are its peers/ — see DESIGN §3)
    globs = ["*.md"] if include_peers or folder != vault else ["*.md", f"!{_vault.PEERS}/"]
    if include_peers and folder == vault:
        globs += _unsearchable_peers(vault)
    since_ts = dt.datetime.combine(since, dt.time()).timestamp() if since else None
    scan = dict(since_ts=since_ts, harness=harness, timeout=timeout, warnings=result.warnings)
    common = 0
    n_sample = 0
    sample = _sample_files(folder) if shortcut and stop is None and len(terms) > 1 else []
    errors: list = []
    if sample:
        col.rows = [0] * len(terms)
        n_sample, errors = _scan_into(col, q.forms(), q.part_forms(), sample, globs, **scan)
        col.sampled = {os.fsencode(p) for p in sample}
        sample_df = col.df()
        n_sample = max(n_sample, 1)
        common = sum(1 << i for i in range(len(terms)) if col.rows[i] > COMMON_RATE * n_sample)
        if not any(col.rows[i] for i in range(len(terms)) if not common >> i & 1):
            common = 0  # nothing else occurs: the shortcut would list nothing
        col.rows = None
        col.common = common
        col.use(q.forms(~common))
    # the main scan (sampled files come round again and are skipped: they are complete)
    if stop is None:
        n_main, err = _scan_indexed(col, q, common, folder, vault, include_peers, globs, scan, memo)
    else:
        n_main, err = _scan_newest(col, q, folder, globs, include_peers, stop, scan)
    errors += err
    if col.total == 0 and errors and not any("stopped after" in w for w in result.warnings):
        raise ChrolloError("rg_error", "ripgrep could not search the memory folder: " + errors[0],
                           "Check the folder's permissions; `chrollo stats` lists what it can read.")
    n_files = max(n_main, col.files, 1)
    df = col.df()
    for i in range(len(terms)):
        if common >> i & 1:  # listed in the sample only: its rate, scaled up
            df[i] = max(1, round(sample_df[i] * n_files / max(n_sample, 1)))
    idf = _Idf(math.log(1.0 + n_files / d) if d else 0.0 for d in df)
    for i, t in enumerate(terms):
        idf[i] *= synonym_weight.get(t, 1.0)
    # Only exact terms lift, and only lines holding an exact term are lifted: a line of
    # synonyms must never catch up with a line of the words asked for.
    idf.near = [0.0 if t in synonym_weight else w * NEIGHBOR_WEIGHT for t, w in zip(terms, idf)]
    idf.exact = sum(1 << i for i, t in enumerate(terms) if t not in synonym_weight)
    result.total_matches = col.total
    result.weights = dict(zip(terms, idf))
    result.sessions = n_files
    views: dict = {}
    ranked = _ranked(col.buckets, idf, now, common)
    if common:
        ranked = _rescore(ranked, col, idf, now, views)
    dates = _named_dates(result.query) if DATE_WEIGHT else []
    if SESSION_WEIGHT or dates:
        ranked = _by_session(ranked, col, idf, dates)
    if TURN_POWER:
        ranked = _by_turn_length(ranked, views)
    result.hits = _emit(ranked, terms, limit, context, since, vault, views)
    if common:
        # Lines holding only common terms were listed in the sample alone. If the hits do not
        # all beat the best such line the sample saw, list everything (exact, slower, rare).
        # (Bucket keys carry neighbour terms above a line's own; the bound counts a line's own
        # terms only: a line of common terms next to a listed line is not worth a full pass.)
        n = len(terms)
        own = ((1 << n) - 1) * (1 | 1 << 2 * n)  # a line's own terms, whole or as parts
        bound = max((_weight(m & own, idf) for m in col.buckets if not _present(m, n) & ~common),
                    default=0.0)
        if len(result.hits) < limit or result.hits[-1].score < bound * (1 + RECENCY_BOOST):
            del result.warnings[:]
            return _run(result, terms, idents, synonym_weight, folder, vault, limit, context,
                        since, harness, include_peers, now, timeout, stop, shortcut=False,
                        fm_ends=col.fm_ends, memo=memo)
    return df


def _unsearchable_peers(vault: str) -> list:
    """rg globs leaving out the peers switched off with `chrollo mesh peers set NAME --no-searchable`."""
    return [f"!**/{_vault.PEERS}/{name}/**" for name in _unsearchable_names(vault)]


def _unsearchable_names(vault: str) -> frozenset:
    if not os.path.isdir(os.path.join(vault, _vault.PEERS)):
        return frozenset()
    from .mesh.config import peer_settings

    return frozenset(name for name, s in peer_settings().items() if not s["searchable"])


def _scan_indexed(col: _Collector, q: _Query, common: int, folder: str, vault: str,
                  include_peers: bool, globs: list, scan: dict, memo: dict | None) -> tuple[int, list]:
    """The main scan of a complete search: with the vault's index (chrollo/index.py), rg
    reads only the files that may hold a form plus every file not indexed as it is now —
    the same rows as a walk of ``folder``, and the same count of files searched; without
    one (or when most files are candidates), rg walks ``folder``."""
    forms, parts = q.forms(~common), q.part_forms(~common)
    plan = None
    if os.environ.get("CHROLLO_INDEX", "1") != "0":
        from . import index as _index

        plan = _index.plan(vault, folder, forms + parts, exclude_peers=not include_peers and folder == vault,
                           unsearchable=_unsearchable_names(vault) if include_peers and folder == vault
                           else frozenset(), memo=memo)
    if plan is None:
        return _scan_into(col, forms, parts, [folder], globs, **scan)
    errors: list = []
    for i in range(0, len(plan.paths), DEADLINE_MAX_BATCH):
        _n, err = _scan_into(col, forms, parts, plan.paths[i:i + DEADLINE_MAX_BATCH], globs, **scan)
        errors += err
    return plan.files, errors


def _sample_files(folder: str) -> list:
    """The sampled session files of a large vault (see SAMPLE_AFTER), or [] for a small one."""
    picked = []
    n = 0
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                n += 1
                if n > SAMPLE_AFTER:
                    return picked
                # (rg opens a path it is given even if it is a FIFO or a symlink: regular files only)
                if e.name.endswith(SAMPLE_ENDINGS) and e.is_file(follow_symlinks=False):
                    picked.append(e.path)
    except OSError:
        pass
    return []


def _newest_first(folder: str, files: list, total: int | None = None, include_peers: bool = True):
    """Paths of ``files`` (listing.session_files keys) in batches, newest first (see
    listing.newest_keys);
    when ``files`` holds only the newest of ``total`` (a cached listing), the vault is listed
    once they are done, for the older ones."""
    sep = folder + os.sep
    for batch in _listing.newest_keys(files, DEADLINE_BATCH):
        paths = [sep + (f.rpartition("\0")[2]) for f in batch]
        for i in range(0, len(paths), DEADLINE_MAX_BATCH):
            yield paths[i:i + DEADLINE_MAX_BATCH]
    if total is not None and total > len(files) and files:
        oldest = min(files)
        older = [f for f in _listing.session_files(folder, include_peers) if f < oldest]
        yield from _newest_first(folder, older)


def _small_regular(path: str) -> bool:
    """A regular file (never a link: rg would follow one given by name) of a size worth
    reading within a deadline."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_mode & 0o170000) == 0o100000 and st.st_size <= DEADLINE_MAX_FILE


def _scan_newest(col: _Collector, q: _Query, folder: str, globs: list, include_peers: bool,
                 stop: float, scan: dict) -> tuple[int, list]:
    """The scan of a search with a deadline: newest sessions first, in growing batches,
    until the deadline (the batch running then is cut short, its rows so far kept)."""
    files, total = _listing.cached(folder, include_peers)
    searched, errors, complete, skipped = 0, [], 0, 0
    batches = None
    if os.environ.get("CHROLLO_INDEX", "1") != "0":
        # With the vault's index: the newest DEADLINE_BATCH files, then — of all the others,
        # whatever their age — only those that may hold a form or are not indexed: every
        # indexed session is within reach (chrollo/index.py, newest_plan).
        from . import index as _index

        batches = _index.newest_plan(folder, q.forms() + q.part_forms(), files, total, include_peers,
                                     DEADLINE_BATCH, lambda older: _newest_first(folder, older))
    if batches is not None:
        total = batches.total
    for batch in batches or _newest_first(folder, files, total, include_peers):
        # The first batch (the newest DEADLINE_BATCH sessions) is always searched in full —
        # a loaded machine must not cost the prompt its recent memory; the rest until `stop`.
        left = stop - time.monotonic() if complete else scan["timeout"]
        if left <= 0:
            break
        todo = [p for p in batch if _small_regular(p)]
        n, err = _scan_into(col, q.forms(), q.part_forms(), todo, globs, **dict(
            scan, timeout=left, quiet_timeout=True, until=stop if complete else None)) if todo else (0, [])
        errors += err
        if n or not todo:  # (a scan cut short prints no count)
            searched, complete = searched + n, complete + len(batch)
            skipped += len(batch) - len(todo)
    if batches is not None and batches.done:  # the files the index rules out count as searched
        searched, complete = searched + batches.ruled_out, total
    if complete < total or time.monotonic() >= stop:
        scan["warnings"].append(f"deadline: searched the newest {complete} session files "
                                f"(of {total} listed) in full")
    if skipped:
        scan["warnings"].append(f"deadline: skipped {skipped} files over {DEADLINE_MAX_FILE >> 20} MiB "
                                "(or not regular files); a search without a deadline reads them")
    return searched, errors


def _scan_into(col: _Collector, forms: list, parts: list, paths: list, globs: list, *, since_ts,
               harness, timeout, warnings: list, quiet_timeout: bool = False,
               until: float | None = None) -> tuple[int, list]:
    """Feed one rg scan into the collector; returns (files searched, rg errors).

    ``until`` (a time.monotonic()): stop reading there, rows rg has written but the collector
    not yet taken included (folding them could overrun a deadline by a tenth of a second);
    the scan then counts as cut short (0 files searched).
    """
    info = _rg.Scan()
    fold = col.fold
    rows_of = _rg.scan(forms, [str(p) for p in paths], globs=tuple(globs), timeout=timeout,
                       info=info, on_data=lambda b: col.seen(fold(b)), parts=parts)
    for path, rows in rows_of:
        if until is not None and time.monotonic() >= until:
            rows_of.close()  # (kills rg)
            info.files_searched = 0
            break
        if since_ts is not None:
            try:
                if os.stat(path).st_mtime < since_ts:
                    continue  # nothing in this file was written on or after --since
            except OSError:
                continue
        if harness is not None and str(read_frontmatter(path).get("harness", "")).lower() != harness.lower():
            continue
        if path in col.sampled:
            continue
        col.add(path, rows)
    for e in info.errors[:20]:
        if e not in warnings:
            warnings.append(e)
    if info.timed_out and not quiet_timeout:
        warnings.append(f"search stopped after {timeout:g}s; results are partial")
    if info.truncated:
        warnings.append("too many matching lines; results are from the first part of the vault")
    return info.files_searched, info.errors


def _ranked(buckets: dict, idf: list, now: dt.datetime, optimistic: int = 0):
    """Yield candidates ``(-score, key, path, line, mask)`` best first (a k-way merge).

    With ``optimistic`` (the terms left out of the scan), a candidate is ranked as if its
    line held all of them: an upper bound that _rescore then makes exact.
    """
    heap, lists = [], {}
    for m, b in buckets.items():
        b.sort()
        del b[BUCKET_KEEP:]
        lists[m] = (b, _weight(m | optimistic, idf))
        heapq.heappush(heap, _entry(m, 0, b[0], lists[m][1], now))
    while heap:
        neg, key, path, ln, m, pos = heapq.heappop(heap)
        b, w = lists[m]
        if pos + 1 < len(b):
            heapq.heappush(heap, _entry(m, pos + 1, b[pos + 1], w, now))
        yield neg, key, path, ln, m


def _forms_regex(forms: list) -> re.Pattern:
    """Python's reading of rg's whole-word, case-insensitive match of ``forms``."""
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(forms, key=len, reverse=True)))
                      + r")(?!\w)", re.I)


def _rescore(ranked, col: _Collector, idf: list, now: dt.datetime, views: dict):
    """Score the best POOL candidates (by upper bound) exactly, with the common terms found
    on their lines, and re-sort them; the rest follow, scored by what the scan saw."""
    forms = col.q.forms(col.common)
    rx = _forms_regex(forms)
    common = {f: col.q.mask[f] for f in forms}
    pool = []
    for neg, key, path, ln, m in islice(ranked, POOL):
        lines = _lines(views, path)
        if path not in col.sampled and lines is not None and ln <= len(lines):
            for f in rx.findall(lines[ln - 1]):
                m |= common.get(f.lower(), 0) or common.get(f.casefold(), 0)
        pool.append((-_weight(m, idf) * recency_multiplier(_key_time(key, path), now), key, path, ln, m))
    pool.sort()
    yield from pool
    for neg, key, path, ln, m in ranked:  # beyond the pool: scored without the common terms
        yield -_weight(m, idf) * recency_multiplier(_key_time(key, path), now), key, path, ln, m


def _by_session(ranked, col: _Collector, idf: list, dates: list = ()):
    """The best POOL candidates scaled by their file's session score (see SESSION_WEIGHT)
    and, when the query names dates, by whether the session is from one of them (see
    DATE_WEIGHT), re-sorted; the rest follow as they come (the factor is at most 1, as in
    _by_turn_length)."""
    # (the terms a sampled scan left out are counted in the sample's files only: not used)
    idf = [0.0 if col.common >> i & 1 else w for i, w in enumerate(idf)]
    best = sum(idf) * (SESSION_K1 + 1)
    factors: dict = {}
    pool = []
    for neg, key, path, ln, m in islice(ranked, POOL):
        f = factors.get(path)
        if f is None:
            f = factors[path] = _session_factor(col, path, idf, best) * (
                1.0 if not dates or _on_dates(_key_time(key, path), dates) else 1 / (1 + DATE_WEIGHT))
        pool.append((neg * f, key, path, ln, m))
    pool.sort()
    yield from heapq.merge(pool, ranked)


def _session_factor(col: _Collector, path: bytes, idf: list, best: float) -> float:
    """(1 + SESSION_WEIGHT × the file's BM25 over the query terms / ``best``) / (1 + SESSION_WEIGHT)."""
    if not best or not SESSION_WEIGHT:
        return 1.0
    n, k1 = len(idf), SESSION_K1
    sfx, counts = col.tf.get(path, ((), ()))
    tf = [0] * n
    for (_s, fm), c in zip(sfx, counts):
        for i in range(n):
            if fm >> i & 1:
                tf[i] += c
    score = sum(w * t * (k1 + 1) / (t + k1) for w, t in zip(idf, tf) if t > 0)
    return (1 + SESSION_WEIGHT * score / best) / (1 + SESSION_WEIGHT)


_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
_FULL_MONTHS = frozenset(_MONTHS)
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())}, sept=9)
_ORD = r"(?:st|nd|rd|th)?"
_DATE_RE = re.compile(
    r"\b(?P<iso>(?P<iy>\d{4})-(?P<im>\d{2})(?:-(?P<id>\d{2}))?)\b"
    r"|(?:\b(?P<d1>\d{1,2})" + _ORD + r"\s+(?:of\s+)?)?\b(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True))
    + r")\b\.?(?:\s+(?P<d2>\d{1,2})" + _ORD + r"\b(?![.:\d]))?(?:(?:,\s*|\s+)(?P<y>\d{4})\b)?"
    r"|\b(?:in|of|since|during|from|until|before|after|year)\s+(?P<yo>(?:19[7-9]|20\d)\d)\b(?!-\d)", re.I)
# (words that make "may" or "march" a month: "in May", not "what may happen")
_MAY = re.compile(r"(?:in|of|since|during|from|until|before|after|early|late|mid|last|this|next|by)\W*$", re.I)


def _named_dates(query: str) -> list:
    """The dates a query names, as (year or None, month or None, day or None): "in July",
    "on 9 November, 2022", "August 11 and August 15 2023", "2023-06-03", "in 2022". A
    mention without a year takes the query's one other year, if it names exactly one."""
    out = []
    for m in _DATE_RE.finditer(query[:1000]):
        if m["iso"]:
            y, mo, d = int(m["iy"]), int(m["im"]), int(m["id"]) if m["id"] else None
            if not 1 <= mo <= 12:
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


def _on_dates(when: dt.datetime, dates: list) -> bool:
    """Whether a session started at ``when`` is from one of ``dates`` (see _named_dates)."""
    for y, mo, d in dates:
        if d:
            try:
                named = dt.date(y or when.year, mo, d)
            except ValueError:
                continue
            if abs((when.date() - named).days) <= DATE_SLACK:
                return True
        elif (y is None or when.year == y) and (mo is None or when.month == mo):
            return True
    return False


def _by_turn_length(ranked, views: dict):
    """The best RERANK_POOL candidates weighed by the length of their turn (see TURN_POWER),
    re-sorted; the rest follow as they come (a weight only lowers a score, so a candidate
    beyond the pool is merged in where it belongs)."""
    pool = []
    for neg, key, path, ln, m in islice(ranked, RERANK_POOL):
        v = _view(views, path)
        if v is not None and (tl := v.turn_lines(ln)) > TURN_PIVOT:
            neg *= (TURN_PIVOT / tl) ** TURN_POWER
        pool.append((neg, key, path, ln, m))
    pool.sort()
    yield from heapq.merge(pool, ranked)


def _read_lines(path) -> list:
    with _vault.open_regular(path) as fh:
        lines = fh.read().decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _lines(views: dict, path: bytes) -> list | None:
    """A candidate file's lines, read once per search (None if it vanished)."""
    got = views.get(path, False)
    if got is False:
        try:
            got = views[path] = _read_lines(path)
        except OSError:
            got = views[path] = None
    return got.lines if isinstance(got, _FileView) else got


def _view(views: dict, path: bytes):
    """The file behind a hit, parsed (headers, frontmatter) once per search."""
    got = views.get(path, False)
    if not isinstance(got, _FileView):
        lines = _lines(views, path)
        got = views[path] = None if lines is None else _FileView(os.fsdecode(path), lines)
    return got


class _Idf(list):
    """Per-term weights (idf × synonym weight); ``near``: what a term weighs near a line."""

    near: list = []
    exact = -1  # the bits of the exact (non-synonym) terms


def _weight(mask: int, idf: _Idf) -> float:
    """The terms of a line (bits 0..n-1) count fully, terms found only inside its identifiers
    (bits 2n..3n-1) PART_WEIGHT; terms only near it (bits n..2n-1, see NEIGHBOR_WEIGHT)
    count ``idf.near``."""
    n = len(idf)
    w = sum(idf[i] for i in range(n) if mask >> i & 1)
    parts = mask >> 2 * n & ~mask
    if parts:
        w += PART_WEIGHT * sum(idf[i] for i in range(n) if parts >> i & 1)
    near = mask >> n & ((1 << n) - 1)
    if near and _present(mask, n) & idf.exact:  # (a line of synonyms only is not lifted)
        w += sum(idf.near[i] for i in range(n) if near >> i & 1)
    return w


_INVERT_DIGITS = bytes.maketrans(b"0123456789", b"9876543210")


def _file_key(path: bytes) -> bytes:
    """Sorts newer sessions first: the file name with its digits inverted (9→0, …).

    Session names start with their start time, so inverting the digits turns "newest
    first" into plain ascending order. Names without a timestamp sort last (as oldest).
    """
    name = path[path.rfind(b"/") + 1:]
    if len(name) >= 17 and name[:4].isdigit():
        return name.translate(_INVERT_DIGITS)
    return b"~" + name


def _key_time(key: bytes, path: bytes) -> dt.datetime:
    m = None if key.startswith(b"~") else \
        _NAME_TS.match(key[:18].translate(_INVERT_DIGITS).decode("ascii", "replace"))
    if m:
        try:
            return dt.datetime(*map(int, m.groups()))
        except ValueError:
            pass
    return _mtime(os.fsdecode(path))


def _emit(ranked, terms: list, limit: int, context: int, since: dt.date | None,
          vault: str, views: dict) -> list:
    """Turn ranked candidates into hits: validate anchors, cap per file, merge windows."""
    per_file: dict[bytes, list] = {}
    hits: list[Hit] = []
    since_s = since.isoformat() if since else None
    for neg, key, path, ln, m in _length_bounded(ranked, views):
        taken = per_file.setdefault(path, [])
        if len(taken) >= HITS_PER_FILE or any(abs(ln - t) <= MERGE_FACTOR * context for t in taken):
            continue  # at most HITS_PER_FILE per file; a line shown in a hit's window merges into it
        v = _view(views, path)
        if v is None or not v.can_anchor(ln):
            continue  # tool lines, headers and frontmatter are context, never anchors
        stamp = v.stamp(ln)
        if since_s and stamp and stamp[:10] < since_s:
            continue
        taken.append(ln)
        spath = os.fsdecode(path)
        hits.append(Hit(path=spath, line=ln, score=round(-neg, 4), date=stamp,
                        session_id=_str(v.meta.get("session_id")), harness=_str(v.meta.get("harness")),
                        peer=_vault.peer_of(spath, vault),
                        terms=[t for i, t in enumerate(terms) if _present(m, len(terms)) >> i & 1],
                        context=v.window(ln, context)))
        if len(hits) >= limit:
            break
    return hits


LONG_LINE = 2000  # characters: a longer line's score shrinks by sqrt(LONG_LINE / its length)


def _length_bounded(ranked, views: dict):
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
        lines = _lines(views, cand[2])
        n = len(lines[cand[3] - 1]) if lines and 0 < cand[3] <= len(lines) else 0
        heapq.heappush(pending, (cand[0] * (LONG_LINE / n) ** 0.5, *cand[1:]) if n > LONG_LINE else cand)
    while pending:
        yield heapq.heappop(pending)


def _str(v) -> str | None:
    return None if v is None else str(v)


def _entry(mask: int, pos: int, cand: tuple, w: float, now: dt.datetime) -> tuple:
    key, path, ln = cand
    return (-w * recency_multiplier(_key_time(key, path), now), key, path, ln, mask, pos)
