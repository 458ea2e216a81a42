"""The search pipeline: query → scan → collect → rank → hits (see the package's doc)."""
from __future__ import annotations

import gc
import time

from ..errors import ChrolloError
from ..terms import Forms, beyond_ascii, identifiers, query_terms, spellings
from . import select, tuning
from .collect import Collector
from .dates import named_dates
from .deadline import scan_newest
from .hits import SearchResult, emit
from .options import Scope, SearchOptions
from .query import forms_of, present
from .rank import by_session, by_spelling, by_turn_length, idf_of, length_bounded, ranked, rescore, weight
from .scan import Sample, ScanSpec, sample_files, scan_indexed, scan_into, scan_sample


def search(query: str, options: SearchOptions | None = None, /, **fields) -> SearchResult:
    """Search the vault (or ``options.dir``) for ``query``; see the package doc for the ranking.

    ``options`` (or its ``fields`` as keywords: ``search(q, limit=5, dir=...)``) are
    :class:`SearchOptions`. Synonyms are searched only when exact terms find too little (or
    when asked to): a second pass over the exact terms and their synonyms.
    """
    # (The cyclic garbage collector is paused while a search runs: a large vault's search holds
    # sets of 10^4-10^5 file ids and makes thousands of rows, and each collection walked
    # them all: rg's rows folded in 17-21 ms instead of 34-40 at 1 GB. What a search drops is
    # freed by reference counting; a cycle it leaves is collected after it.)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _search(query, options, **fields)
    finally:
        if collecting:
            gc.enable()


def _search(query: str, options: SearchOptions | None, **fields) -> SearchResult:
    start = time.monotonic()
    opts = options if options is not None else SearchOptions(**fields)
    if opts.all_vaults:
        return _all_vaults(query, opts)
    scope = opts.resolve(start)
    terms = query_terms(query)
    cut = len(terms) > tuning.MAX_TERMS  # a pasted log is not a query: bounded work whatever its size
    terms = terms[:tuning.MAX_TERMS]
    result = SearchResult(query, terms, {}, 0, [], vault=str(scope.vault))
    if cut:
        result.warnings.append(f"the query has more than {tuning.MAX_TERMS} searchable words: "
                               f"only the first {tuning.MAX_TERMS} were searched")
    if not terms:
        return result
    idents = identifiers(query, terms)  # (the cut terms: a kept identifier's parts may be past it)
    if '"' in query:
        from . import phrases

        scope.phrases = phrases.find(query, scope.folder, ScanSpec(scope, []).globs, scope.timeout)
    df = run(result, forms_of(terms, idents), scope)
    wanting = {t for t, d in zip(terms, df) if d == 0}  # found nowhere
    if opts.expand == "auto" and opts.expander is None and opts.deadline is None:
        # an acronym is searched with its words, and back (a second pass: not in the recall
        # hook's 0.4 s, whose gate weighs only the user's own words anyway)
        from ..thesaurus import acronym_terms

        wanting |= set(acronym_terms(terms))
    if opts.expand == "never" or (opts.expand == "auto" and len(result.hits) >= scope.limit and not wanting):
        return result
    if scope.out_of_time():
        return result  # no time left for a second pass
    only = wanting if opts.expand == "auto" and len(result.hits) >= scope.limit else None
    return _with_synonyms(result, idents, scope, opts.expander, only, cut)


def _all_vaults(query: str, opts: SearchOptions) -> SearchResult:
    """The search in every vault this folder reaches (its project vault, the global one) as
    one list, best first; each hit names its vault."""
    from ..vault import search_vaults

    found = search_vaults(opts.cwd)

    def one(folder: str, others: list) -> SearchResult:
        o = SearchOptions(**{k: getattr(opts, k) for k in SearchOptions.__slots__ if k not in ("all_vaults", "corpus")})
        o.dir = folder
        if others:  # (weights from every vault's counts: one vault's scores compare with another's)
            df: dict = {}
            for r in others:
                for t, d in r.df.items():
                    df[t] = df.get(t, 0) + d
            o.corpus = {"df": df, "files": sum(r.sessions for r in others)}
        return search(query, o)

    # The last vault (the global one, the largest) is searched once, with the others' counts
    # from a first search of each; those are then searched again with all the counts.
    first = [one(folder, []) for _name, folder in found[:-1]]
    last = [one(found[-1][1], first)] if found else []
    results = [one(folder, [r for j, r in enumerate(first) if j != i] + last)
               for i, (_name, folder) in enumerate(found[:-1])] + last
    for (name, _folder), r in zip(found, results):
        for h in r.hits:
            h.vault = name
    if not results:
        from ..vault import require_dir, global_vault_path

        require_dir(global_vault_path()[0])  # (the error that says there is no memory yet)
    merged = results[0]
    merged.vault = ", ".join(r.vault for r in results)
    for r in results[1:]:
        merged.hits += r.hits
        merged.total_matches += r.total_matches
        merged.sessions += r.sessions
        merged.warnings += [w for w in r.warnings if w not in merged.warnings]
        merged.unindexed = merged.unindexed or r.unindexed
        for t, ss in r.expanded.items():
            merged.expanded[t] = list(dict.fromkeys(merged.expanded.get(t, []) + ss))
    merged.hits = sorted(merged.hits, key=lambda h: -h.score)[:opts.limit]
    return merged


def _with_synonyms(result: SearchResult, idents: dict, scope: Scope, expander, only, cut: bool) -> SearchResult:
    """The search again with the synonyms of the terms (of ``only`` if given) that occur in
    the vault; ``result`` stands when none does."""
    terms = result.terms
    if expander is None:
        from ..thesaurus import expand as expander
    tried = {t: [s for s in ss if s not in terms] for t, ss in (expander(terms, only) or {}).items()}
    syns = list(dict.fromkeys(s for ss in tried.values() for s in ss))
    if not syns:
        return result
    wider = SearchResult(result.query, terms, {}, 0, [], result.warnings[:1] if cut else None, vault=result.vault)
    df = run(wider, forms_of(terms + syns, idents, {s: tuning.SYNONYM_WEIGHT for s in syns}), scope)
    found = {s for s, d in zip(terms + syns, df) if d}
    expanded = {t: [s for s in ss if s in found] for t, ss in tried.items()}
    expanded = {t: ss for t, ss in expanded.items() if ss}
    if not expanded:
        return result  # no synonym occurs anywhere: the exact result stands
    wider.expanded = expanded
    return wider


def run(result: SearchResult, q: Forms, scope: Scope, shortcut: bool = True) -> list:
    """One pass: scan, collect and rank into ``result``; returns each term's document frequency.

    A vault of more than SELECT_AFTER files is read at its best files only (select.py).
    Otherwise, ``shortcut``: a vault of thousands is sampled first and its common terms left
    out of the main scan (see scan.py); if the hits could have missed a line of common terms,
    the pass is repeated without it.
    """
    spec = ScanSpec(scope, result.warnings)
    chosen = select.choose(q, scope, spec, lambda df, n: _idf(q, scope, df, n))
    if chosen is not None:
        return _run_selected(result, q, scope, spec, chosen)
    col = Collector(q, scope.fm_ends)
    paths = sample_files(scope.folder) if shortcut and scope.stop is None and len(q.terms) > 1 else []
    sample = scan_sample(col, paths, spec) if paths else Sample()
    if scope.stop is None:  # (sampled files come round again and are skipped: they are complete)
        n_main, err = scan_indexed(col, scope, spec)
    else:
        n_main, err, unreached = scan_newest(col, scope.folder, spec, scope.include_peers, scope.stop)
        if unreached:
            result.unindexed = scope.vault
    if scope.memo.get("unindexed"):
        result.unindexed = scope.vault
    errors = sample.errors + err
    if not any("stopped after" in w for w in result.warnings):
        _unreadable(col, errors)
    df, idf = _weights(col, sample, n_main, result, scope)
    views: dict = {}
    result.hits = emit(length_bounded(_ranking(col, idf, scope, views, result.query), views),
                       q.terms, scope.limit, scope.context, scope, scope.vault, views,
                       distinct=beyond_ascii(result.query))
    if sample.common and _shortcut_may_miss(result, col, idf, sample.common, scope.limit):
        del result.warnings[:]
        return run(result, q, scope, shortcut=False)
    return df


def _run_selected(result: SearchResult, q: Forms, scope: Scope, spec: ScanSpec, chosen) -> list:
    """One pass over a large vault's selected files (see select.py): rg reads those, the
    ranking weighs terms by the whole vault's counts; returns each term's document frequency."""
    col = Collector(q, scope.fm_ends)
    errors: list = []
    read = 0
    for batch in _batches(chosen.paths, scope.stop is not None):
        # (with a deadline, the best files first in growing batches, the first one read in
        # full whatever the time: a loaded machine must not cost the prompt its best memory)
        if read and scope.out_of_time():
            break
        n, err = scan_into(col, q.forms(), q.part_forms(), batch, spec, until=scope.stop if read else None,
                           quiet_timeout=scope.stop is not None)
        errors += err
        read += len(batch) if n or not scope.stop else 0
    if scope.stop is not None and read < len(chosen.paths):
        spec.warnings.append(f"deadline: read {read} of the {len(chosen.paths)} best session files "
                             f"(of {chosen.n})")
    _unreadable(col, errors)
    idf = _idf(q, scope, chosen.df, chosen.n)
    result.df = dict(zip(q.terms, chosen.df))
    if scope.memo.get("unindexed"):
        result.unindexed = scope.vault
    result.total_matches = col.total
    result.weights = dict(zip(q.terms, idf))
    result.sessions = chosen.n
    views: dict = {}
    result.hits = emit(length_bounded(_ranking(col, idf, scope, views, result.query), views),
                       q.terms, scope.limit, scope.context, scope, scope.vault, views,
                       distinct=beyond_ascii(result.query))
    return chosen.df


def _unreadable(col: Collector, errors: list) -> None:
    """Nothing found and rg said why: the folder could not be read (never "no matches")."""
    if col.total == 0 and errors:
        raise ChrolloError("rg_error", "ripgrep could not search the memory folder: " + errors[0],
                           "Check the folder's permissions; `chrollo stats` lists what it can read.")


def _batches(paths: list, growing: bool):
    """``paths`` in batches rg can take on its command line; ``growing``: SELECT_FIRST first,
    then each twice the one before."""
    size = tuning.SELECT_FIRST if growing else tuning.DEADLINE_MAX_BATCH
    i = 0
    while i < len(paths):
        yield paths[i:i + size]
        i += size
        if growing:
            size = min(2 * size, tuning.DEADLINE_MAX_BATCH)


def _idf(q: Forms, scope: Scope, df: list, n: int):
    """The terms' weights from this vault's counts, plus those of the vaults searched with it."""
    extra = scope.corpus
    if extra:
        df = [d + extra["df"].get(t, 0) for d, t in zip(df, q.terms)]
        n += extra["files"]
    return idf_of(df, n, q.terms, q.synonyms)


def _weights(col: Collector, sample: Sample, n_main: int, result: SearchResult, scope: Scope) -> tuple:
    """(document frequency, idf) of each term; the result's weights, counts and sessions."""
    terms = col.q.terms
    n_files = max(n_main, col.files, 1)
    df = col.df()
    for i in range(len(terms)):
        if sample.common >> i & 1:  # listed in the sample only: its rate, scaled up
            df[i] = max(1, round(sample.df[i] * n_files / max(sample.files, 1)))
    idf = _idf(col.q, scope, df, n_files)
    result.df = dict(zip(terms, df))
    result.total_matches = col.total
    result.weights = dict(zip(terms, idf))
    result.sessions = n_files
    return df, idf


def _ranking(col: Collector, idf, scope: Scope, views: dict, query: str):
    """The candidates best first, every re-ranker applied (see rank.py)."""
    common = col.common
    out = ranked(col.buckets, idf, scope.now, common)
    if common:
        out = rescore(out, col, idf, scope.now, views)
    dates = named_dates(query) if tuning.DATE_WEIGHT else []
    if tuning.SESSION_WEIGHT or dates:
        out = by_session(out, col, idf, dates)
    size = tuning.POOL if beyond_ascii(query) else tuning.RERANK_POOL  # (tuning: a query beyond ASCII)
    if tuning.TURN_POWER:
        out = by_turn_length(out, views, size)
    if tuning.FOLDED_WEIGHT < 1:
        out = by_spelling(out, col.q, spellings(query), views, size)
    return out


def _shortcut_may_miss(result: SearchResult, col: Collector, idf, common: int, limit: int) -> bool:
    """Lines holding only common terms were listed in the sample alone. Whether the hits do
    not all beat the best such line the sample saw (then the pass is repeated in full).

    (Bucket keys carry neighbour terms above a line's own; the bound counts a line's own terms
    only: a line of common terms next to a listed line is not worth a full pass.)
    """
    n = len(col.q.terms)
    own = ((1 << n) - 1) * (1 | 1 << 2 * n)  # a line's own terms, whole or as parts
    bound = max((weight(m & own, idf) for m in col.buckets if not present(m, n) & ~common), default=0.0)
    return len(result.hits) < limit or result.hits[-1].score < bound * (1 + tuning.RECENCY_BOOST)
