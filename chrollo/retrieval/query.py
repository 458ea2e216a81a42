"""The query compiled for one pass of a search: its terms' forms (terms.Forms) and their masks.

A mask holds a line's terms in three bands of n bits (n query terms): bits 0..n-1 the terms on
the line as whole words, n..2n-1 the terms only near it (see tuning.NEIGHBOR_WEIGHT), 2n..3n-1
the terms found only inside its identifiers (see tuning.PART_WEIGHT).
"""
from __future__ import annotations

from ..terms import Forms
from . import tuning


def forms_of(terms: list, idents: dict, synonyms: dict | None = None) -> Forms:
    """``terms`` (exact terms first, then any synonyms, weighing ``synonyms[t]``), with the
    identifiers among them (``idents``: terms.identifiers), as the search matches them."""
    return Forms(terms, idents, synonyms, inflect=tuning.INFLECT, part_min=tuning.PART_MIN)


def present(mask: int, n: int) -> int:
    """The terms (bits 0..n-1) a mask holds, whether as whole words or as identifier parts."""
    return (mask | mask >> (2 * n)) & ((1 << n) - 1)
