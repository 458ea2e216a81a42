"""The query compiled for one pass of a search: each spelling ("form") of a term and its mask.

A mask holds a line's terms in three bands of n bits (n query terms): bits 0..n-1 the terms on
the line as whole words, n..2n-1 the terms only near it (see tuning.NEIGHBOR_WEIGHT), 2n..3n-1
the terms found only inside its identifiers (see tuning.PART_WEIGHT).
"""
from __future__ import annotations

from ..terms import inflections
from . import tuning


class Query:
    """``terms`` (exact terms first, then any synonyms, weighing ``synonyms[t]``), with the
    identifiers among them (``idents``: terms.identifiers)."""

    def __init__(self, terms: list, idents: dict, synonyms: dict | None = None):
        index = {t: i for i, t in enumerate(terms)}
        self.terms = terms
        self.idents = idents
        self.synonyms = synonyms or {}  # synonym -> its weight
        # A form's mask: its term's bit, plus its parts' bits for an identifier (a line with
        # "auth-service" credits "auth" and "service" too). Aliases share the mask.
        self.mask: dict[str, int] = {}
        for t, i in index.items():
            aliases, parts = idents.get(t, ([], []))
            m = (1 << i) | sum(1 << index[p] for p in parts)
            for form in [t, *aliases, *(inflections(t) if tuning.INFLECT else ())]:
                self.mask.setdefault(form, m)
        self.ascii = all(f.isascii() for f in self.mask)
        # The spellings that also match inside identifiers: plain ASCII words (the parts of
        # an identifier the query spelled out are query terms of their own already).
        # A part match sets the term's bit shifted by 2n (see rank.weight).
        n = len(terms)
        self.part: dict[str, int] = {}
        for t, i in index.items():
            if len(t) >= tuning.PART_MIN and t.isascii() and t.isalnum() and t not in idents:
                for form in [t, *(inflections(t) if tuning.INFLECT else ())]:
                    self.part.setdefault(form, 1 << (2 * n + i))

    def forms(self, terms_mask: int = -1) -> list:
        """The spellings of the terms in ``terms_mask`` (by their own term bit)."""
        return [f for f, m in self.mask.items() if (m & -m) & terms_mask]

    def part_forms(self, terms_mask: int = -1) -> list:
        n2 = 2 * len(self.terms)
        return [f for f, m in self.part.items() if (m >> n2) & terms_mask]


def present(mask: int, n: int) -> int:
    """The terms (bits 0..n-1) a mask holds, whether as whole words or as identifier parts."""
    return (mask | mask >> (2 * n)) & ((1 << n) - 1)
