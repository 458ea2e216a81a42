"""What a search is asked (:class:`SearchOptions`) and what it resolves to (:class:`Scope`).

(Plain classes with slots rather than dataclasses: this is on the recall hot path and
dataclasses pulls in ``inspect``.)
"""
from __future__ import annotations

import datetime as dt
import os
import re
import time

from .. import clock as _clock
from .. import dates as _dates
from .. import vault as _vault
from ..errors import ChrolloError, UsageError
from . import tuning

# A seam for other synonym sources: (terms, only) -> {term: [synonym, ...]}.
Expander = "Callable[[list, set | None], dict]"


class SearchOptions:
    """The options of one search; every field has the CLI's default.

    ``expand``: "auto" adds synonyms (weighing SYNONYM_WEIGHT of an exact term) when exact
    terms find too little — a term found nowhere, or fewer hits than ``limit``; "always"
    expands every term; "never" does not. ``expander`` replaces the bundled thesaurus:
    ``expander(terms, only) -> {term: [synonyms]}``.

    ``deadline`` (seconds): answer within about that long however large the vault, from its
    newest sessions (see tuning.DEADLINE_BATCH); what was left unsearched is said in the
    result's ``warnings``. Without it the search is complete (up to ``timeout``).
    ``dir``: a memory folder instead of the vault (found from ``cwd``); ``peer``: only that
    peer's files; ``peers``: False leaves every peer's files out.
    """

    __slots__ = ("limit", "context", "dir", "since", "until", "project", "harness", "peer", "peers", "now",
                 "expand", "expander", "timeout", "cwd", "deadline", "all_vaults", "corpus")

    def __init__(self, *, limit: int = 10, context: int = 3, dir: str | os.PathLike | None = None,
                 since: str | dt.date | None = None, until: str | dt.date | None = None,
                 project: str | None = None, harness: str | None = None, peer: str | None = None,
                 peers: bool = True, now: dt.datetime | None = None, expand: str = "auto",
                 expander: Expander | None = None, timeout: float = 30.0,
                 cwd: str | None = None, deadline: float | None = None, all_vaults: bool = False,
                 corpus: dict | None = None):
        self.limit, self.context, self.dir, self.since = limit, context, dir, since
        self.until, self.project = until, project
        self.harness, self.peer, self.peers, self.now = harness, peer, peers, now
        self.expand, self.expander, self.timeout = expand, expander, timeout
        self.cwd, self.deadline, self.all_vaults = cwd, deadline, all_vaults
        # (the counts of the other vaults searched with this one, {"df": {term: files}, "files": n},
        # added to this vault's in the terms' weights: --all-vaults' scores then compare)
        self.corpus = corpus

    def resolve(self, start: float) -> "Scope":
        """The options checked (a usage error names the bad one) and resolved for a search
        that started at ``start`` (a time.monotonic())."""
        if not 1 <= self.limit <= tuning.MAX_LIMIT:
            raise UsageError(f"--limit must be between 1 and {tuning.MAX_LIMIT}, got {self.limit}",
                             kind="bad_limit")
        if not 0 <= self.context <= tuning.MAX_CONTEXT:
            raise UsageError(f"--context must be between 0 and {tuning.MAX_CONTEXT}, got {self.context}",
                             kind="bad_context")
        if self.expand not in ("auto", "always", "never"):
            raise UsageError(f"expand must be auto, always or never, got {self.expand!r}", kind="usage")
        now = _clock.local(self.now or _clock.now())  # (naive wall-clock time, as the file names hold)
        since = _dates.parse(self.since, option="--since", at=now)
        until = _dates.parse(self.until, end=True, option="--until", at=now)
        if since and until and since > until:
            raise UsageError(f"--since ({self.since}) is after --until ({self.until})", kind="bad_date")
        vault, folder = resolve_roots(self.dir, self.peer, self.cwd)
        stop = start + self.deadline * (1 - tuning.SCAN_RESERVE) if self.deadline else None
        scope = Scope(folder, vault, self.limit, self.context, since, self.harness,
                      self.peers and self.peer is None, now, self.timeout, stop)
        scope.until = until
        scope.corpus = self.corpus
        if self.project:
            from ..catalog import Filters

            scope.project = Filters(project=self.project)
        return scope


class Scope:
    """A search's resolved options: what to scan (``folder`` of ``vault``, peers or not), the
    filters, the clock, and when to stop (``stop``, a time.monotonic(), or None: complete).
    ``fm_ends`` caches each file's frontmatter end for the whole search (every pass), ``memo``
    what the index saw of the vault (chrollo/index/)."""

    __slots__ = ("folder", "vault", "limit", "context", "since", "until", "project", "harness",
                 "include_peers", "now", "timeout", "stop", "fm_ends", "memo", "phrases", "corpus")

    def __init__(self, folder: str, vault: str, limit: int, context: int, since: dt.datetime | None,
                 harness: str | None, include_peers: bool, now: dt.datetime, timeout: float,
                 stop: float | None):
        self.folder, self.vault, self.limit, self.context = folder, vault, limit, context
        self.since, self.harness, self.include_peers, self.now = since, harness, include_peers, now
        self.timeout, self.stop = timeout, stop
        self.fm_ends: dict = {}
        self.memo: dict = {}
        self.until: dt.datetime | None = None  # turns up to then (since: from then)
        self.project = None   # a catalog.Filters holding --project's test, or None
        self.phrases = None   # the query's "quoted phrases": pipeline.Phrases, or None
        self.corpus = None    # SearchOptions.corpus: other vaults' counts the weights include

    def out_of_time(self) -> bool:
        return self.stop is not None and time.monotonic() >= self.stop


def parse_since(since) -> dt.date | None:
    """``--since``'s value as a date (the one date grammar, :mod:`chrollo.dates`)."""
    when = _dates.parse(since, option="--since")
    return when.date() if when else None


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
