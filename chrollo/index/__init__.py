"""The derived, disposable index: which session files may hold a word (docs/design.md §13).

The markdown files stay the database. The index only narrows what ripgrep reads: for a
query's forms it gives the files that *may* match — a superset — and rg still reads those
and produces every row, so ranking and output are the same code as without it. Deleting it
changes no result, only speed. Its life cycle, one module each:

    terms     what a file holds and what a form needs (the tokeniser)
    store     the SQLite file and what sits beside it: open, write, read postings, status
    build     every file read and tokenised, in segments; the background build
    update    a file chrollo wrote or forgot, kept in step
    scope     the files of a folder as the index knows them, and the freshness sweep
    plan      a complete search's files; newest: the recall hook's; universe: the selection's

This front door is what callers ask first, and is cheap (os and chrollo.layout only):
:func:`available` — the one rule for "is there an index to use" — and :func:`after_search`
— the one place a background build is started. Which files are a vault's sessions is
:mod:`chrollo.vaultfiles`'s (the index builds from it).
"""
from __future__ import annotations

import os

OFF_ENV = "CHROLLO_INDEX"  # "0": indexes are off (every search reads the files; no build starts)


def enabled() -> bool:
    """Whether indexes may be used and built at all (``CHROLLO_INDEX=0`` turns them off)."""
    return os.environ.get(OFF_ENV, "1") != "0"


def held(vault: str) -> bool:
    """Whether ``vault`` has an index file, usable or not, whatever CHROLLO_INDEX says: what
    writes to the vault (capture, forget) keeps such an index in step — an index turned off
    for a while must not come back stale, nor ever keep a forgotten word. One stat."""
    from ..layout import index_file

    return os.path.isfile(index_file(vault))


def available(vault: str) -> bool:
    """Whether a search of ``vault`` may try its index (it may still turn out unusable — of
    another version, damaged, locked —, and then its reader gives None and the search reads
    the files). Costs one stat; imports nothing of the index."""
    return enabled() and held(vault)


def after_search(unindexed: str | None) -> bool:
    """A search (``chrollo search``, ``read_memory``, the recall hook) that had to read a
    large vault without a usable index — none, damaged, or far behind the files (more than
    retrieval's tuning.CATCHUP_SHARE of them read directly: another program wrote them) —
    names it: start one detached build of it, unless one is under way (its ``.building``
    lock is held; a killed build's lock went with it) or indexes are off. Whether one was
    started."""
    if not unindexed or not enabled():
        return False
    from .build import build_in_background

    return build_in_background(unindexed)
