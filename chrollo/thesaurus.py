"""Synonyms for query expansion: the bundled thesaurus plus the user's own.

``chrollo/data/thesaurus.json`` is built by ``thesaurus/build.py`` (WordNet 3.0 filtered by
tagged sense counts, plus the developer overlay). ``$CHROLLO_HOME/thesaurus.json`` — a JSON
object ``{"word": ["synonym", ...]}`` — is laid on top: its entries replace the bundled ones.
Loaded on first use only (search imports this module only when it expands).
"""
from __future__ import annotations

import json
import os


PER_QUERY = 12    # synonyms tried per query: a hard cap on the patterns expansion adds

_words: dict | None = None
_acronyms: dict | None = None


def _bundled() -> str:
    return os.path.join(os.path.dirname(__file__), "data", "thesaurus.json")


def load() -> dict:
    """{word: [synonym, ...]} — bundled, with the user's file on top. Cached per process."""
    global _words
    if _words is None:
        with open(_bundled(), encoding="utf-8") as fh:
            words = json.load(fh)["words"]
        from .layout import thesaurus_file

        user = thesaurus_file()
        try:
            with open(user, encoding="utf-8") as fh:
                extra = json.load(fh)
        except FileNotFoundError:
            extra = {}
        except (OSError, ValueError) as e:
            raise ValueError(f"{user} is not a JSON object of word -> [synonyms]: {e}") from None
        if not isinstance(extra, dict):
            raise ValueError(f"{user} is not a JSON object of word -> [synonyms]")
        for w, syns in extra.items():
            if isinstance(w, str) and isinstance(syns, list):
                words[w.lower()] = [s.lower() for s in syns if isinstance(s, str) and s.strip()]
        _words = words
    return _words


def acronyms() -> dict:
    """{acronym: [its phrases' words], phrase's words (a tuple): [acronym]} — the bundled
    ``chrollo/data/acronyms.json`` (small: read on every query that could hold one). Cached."""
    global _acronyms
    if _acronyms is None:
        from .terms import query_terms

        with open(os.path.join(os.path.dirname(__file__), "data", "acronyms.json"), encoding="utf-8") as fh:
            entries = json.load(fh)["entries"]
        out: dict = {}
        for short, phrases in entries.items():
            for phrase in phrases:
                words = tuple(query_terms(phrase))
                if not words:
                    continue
                out.setdefault(short, []).extend(w for w in words if w not in out.get(short, ()))
                if len(words) > 1 or words[0] != short:
                    out.setdefault(words, []).append(short)
        _acronyms = out
    return _acronyms


def acronym_terms(terms: list) -> dict:
    """The terms of a query that name an acronym or start its phrase, each with what it
    stands for: ``["cs", "degree"]`` → ``{"cs": ["computer", "science"]}``, ``["computer",
    "science"]`` → ``{"computer": ["cs"]}``. Searched with the term always, at synonym weight."""
    table = acronyms()
    out: dict = {}
    for i, t in enumerate(terms):
        if t in table:
            out[t] = list(table[t])
        for n in (2, 3, 4):
            got = table.get(tuple(terms[i:i + n]))
            if got:
                out.setdefault(t, []).extend(got)
    return out


def synonyms(term: str) -> list:
    """A term's synonyms (also for a plural whose singular is listed)."""
    words = load()
    got = words.get(term)
    if got is None and len(term) > 3 and term.endswith("s"):
        got = words.get(term[:-1]) or (words.get(term[:-2]) if term.endswith("es") else None)
    return list(got or ())


def expand(terms: list, only: set | None = None) -> dict:
    """{term: [synonyms]} for ``terms`` (or just those in ``only``), PER_QUERY in all; an
    acronym's words (:func:`acronym_terms`) come first.

    The budget is the query's, not each term's: terms take their synonyms in turns, best
    first, so a one-word query may use all of it (``bug`` reaches ``glitch``, its 4th) and a
    long one gets each term's best few. Synonyms that are query terms already are skipped;
    each synonym is used once."""
    from .terms import STOPWORDS, query_terms

    used = set(terms)
    queues = {}
    acro = acronym_terms(terms)
    for t in terms:
        if only is None or t in only:
            # (an acronym's words first; a synonym of several words is each of its words)
            words = acro.get(t, []) + [w for s in synonyms(t) for w in (query_terms(s) if " " in s else [s])]
            queues[t] = list(dict.fromkeys(s for s in words if s not in STOPWORDS and len(s) >= 2
                                           and s.replace("-", "").isalnum()))
    out: dict = {}
    budget, rank = PER_QUERY, 0
    while budget > 0 and any(len(q) > rank for q in queues.values()):
        for t, q in queues.items():
            if budget > 0 and len(q) > rank and q[rank] not in used:
                out.setdefault(t, []).append(q[rank])
                used.add(q[rank])
                budget -= 1
        rank += 1
    return out
