"""Retrieval (docs/design.md §5): query → scan → collect → rank → hits, one module per step.

    options   SearchOptions (what a search is asked) → Scope (checked, resolved)
    query     the terms and each spelling ("form") of them, as bit masks
    select    a large vault's best files by what they hold (from the index's postings)
    scan      ripgrep over the vault, the sample of a large vault; deadline: newest first
    collect   rg's rows folded into document counts and bounded candidate lists
    rank      idf, the lazy k-way merge, the re-rankers; dates: the dates a query names
    hits      the best candidates as hits (views: the files they are read from)
    pipeline  ``search``: the steps in order, the synonym pass, the exactness check
    tuning    every constant the steps are tuned by

Engine (why it is shaped like this: on a 100 MB vault a name or a common word matches
100,000 lines, and handling each of them in Python costs more than ripgrep's whole scan)
    1. ripgrep lists each occurrence as a compact ``LINE:term`` row (those in a file's
       frontmatter are dropped: see fileformat.FRONTMATTER_LINES); a file's rows are folded
       into per-line term masks with C-level bytes operations, and candidates are kept in
       one bounded list per mask (memory stays flat however much matches).
    2. A vault of more than SELECT_AFTER sessions is not read whole: ripgrep reads the best
       SELECT_FILES files by a file score (select.py), the terms weighed by the whole
       vault's counts. The rest of this list is how a vault is read whole: a smaller one,
       or one searched for a form the index cannot hold (non-ASCII, too long).
       Vaults of thousands of sessions are sampled first: ~1/64 of the sessions (picked by
       the last hex digits of their names) are searched for every term. That estimates each
       term's document frequency and singles out the "common" terms (more than COMMON_RATE
       occurrences per session), which the main scan then leaves out.
    3. The best POOL candidates are rescored exactly: the common terms found on the line
       itself (the file is read anyway to show the hit) are added back into its mask.
    4. If that yields fewer hits than asked for, or a line holding only common terms (as
       seen in the sample) could still outrank the last hit, the search is repeated without
       the shortcut, so a sparse answer is never lost to it.
The score itself is described in rank.py.
"""
from __future__ import annotations

from .hits import Hit, SearchResult
from .options import SearchOptions, parse_since, resolve_roots
from .pipeline import search
from .tuning import MAX_LIMIT, MAX_TERMS

__all__ = ["Hit", "SearchResult", "SearchOptions", "search", "parse_since", "resolve_roots", "MAX_LIMIT", "MAX_TERMS"]
