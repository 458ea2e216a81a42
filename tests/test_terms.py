"""Query terms: tokenising, stopwords, identifiers, inflections."""
from __future__ import annotations

import pytest

from chrollo.terms import identifiers, inflections, query_terms


@pytest.mark.parametrize("query,terms", [
    ("What did Caroline research?", ["caroline", "research"]),
    ("parseConfig in the auth-service", ["parseconfig", "parse", "config", "auth-service", "auth", "service"]),
    ("it's what's Melanie's", ["melanie"]),
    ("ok thanks", []),
    ("é café naïve 東京", ["café", "naïve", "東京"]),
    ("tests/test_search.py", ["tests/test_search.py", "tests", "test", "search", "py"]),
])
def test_query_terms(query, terms):
    assert query_terms(query) == terms


def test_identifier_spellings():
    got = identifiers("parseConfig")
    assert got["parseconfig"] == (["parse_config", "parse-config"], ["parse", "config"])


@pytest.mark.parametrize("word,forms", [
    ("adopt", {"adopts", "adopted", "adopting"}),
    ("stories", {"story", "storied"}),
    ("agencies", {"agency"}),
    ("watches", {"watch", "watched", "watching"}),
    ("running", {"run", "runs"}),
    ("painting", {"paint", "paints", "painted"}),
    ("researched", {"research", "researches", "researching"}),
    ("make", {"makes", "making"}),
])
def test_inflections(word, forms):
    assert forms <= set(inflections(word)) and word not in inflections(word)


@pytest.mark.parametrize("word", ["api", "db", "parse_config", "v2.1", "東京", "bus"])
def test_no_inflections_for_short_words_identifiers_or_non_ascii(word):
    assert inflections(word) == []
