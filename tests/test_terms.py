"""Query terms: tokenising, stopwords, identifiers, inflections."""
from __future__ import annotations

import pytest

from chrollo.terms import Forms, identifiers, inflections, query_terms


@pytest.mark.parametrize("query,terms", [
    ("What did Caroline research?", ["caroline", "research"]),
    ("parseConfig in the auth-service", ["parseconfig", "parse", "config", "auth-service", "auth", "service"]),
    ("it's what's Melanie's", ["melanie"]),
    ("ok thanks", []),
    ("é café naïve 東京", ["cafe", "naive", "東京"]),  # (folded: textnorm.fold; a CJK pair is its one bigram)
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


@pytest.mark.parametrize("word,forms", [
    ("stop", {"stopped", "stopping", "stops"}),       # a short vowel before one consonant doubles it
    ("plan", {"planned", "planning", "plans"}),
    ("chat", {"chatted", "chatting"}),
    ("commit", {"committed", "committing"}),
    ("stopped", {"stop", "stops", "stopping"}),
    ("travel", {"traveled", "travelled", "travelling", "traveling"}),  # British spelling too
    ("travelling", {"travel", "travels", "travelled", "traveled"}),
    ("cancelled", {"cancel", "cancels", "canceling", "cancelling"}),
    ("potato", {"potatoes"}),                          # -o after a consonant takes -es
    ("potatoes", {"potato"}),
    ("agree", {"agreeing", "agreed", "agrees"}),       # -ee keeps both e's before -ing
])
def test_inflections_of_doubled_consonants_and_other_regular_forms(word, forms):
    assert forms <= set(inflections(word))


@pytest.mark.parametrize("word,forms", [
    ("win", {"won", "wins", "winning"}),              # irregular: a question's base, a session's past
    ("won", {"win"}),
    ("buy", {"bought", "buying"}),
    ("meet", {"met", "meets", "meeting"}),
    ("take", {"took", "taken", "takes", "taking"}),
    ("know", {"knew", "known"}),
    ("find", {"found"}),                               # find reaches found …
    ("child", {"children"}),
    ("children", {"child"}),
])
def test_irregular_forms(word, forms):
    assert forms <= set(inflections(word)) and word not in inflections(word)


@pytest.mark.parametrize("word,not_form", [("found", "find"), ("left", "leave"), ("saw", "see"), ("bit", "bite"),
                                          ("given", "give"), ("known", "know"), ("broken", "break"),
                                          ("go", "went"), ("going", "went")])
def test_irregular_forms_that_are_words_of_their_own_reach_nothing(word, not_form):
    # … found ("not found"), left, saw, bit are as often words of their own, a participle an
    # adjective ("given name": code dev lost a question to it); go/going: too common
    assert not_form not in inflections(word)


def test_an_irregular_past_finds_the_session_that_tells_it(home, tmp_path):
    from chrollo import search
    from conftest import write_session

    v = tmp_path / "vault"
    write_session(v, "aaaa0000-told", "2026-09-01T10:00:00", [("user", "10:00:00", "Nate won the video game tournament")])
    write_session(v, "bbbb0000-other", "2026-10-01T10:00:00", [("user", "10:00:00", "Nate watched a video game tournament")])
    hits = search("When did Nate win the video game tournament?", dir=v, expand="never", context=0).hits
    assert "aaaa0000" in hits[0].path and hits[0].terms == ["nate", "win", "video", "game", "tournament"]


@pytest.mark.parametrize("word,not_form", [("show", "showwed"), ("relax", "relaxxed"), ("called", "cal"),
                                          ("feel", "feelled"), ("stay", "stayyed"), ("call", "callled")])
def test_no_doubling_where_english_does_not_double(word, not_form):
    assert not_form not in inflections(word)


@pytest.mark.parametrize("word", ["api", "db", "parse_config", "v2.1", "東京", "bus"])
def test_no_inflections_for_short_words_identifiers_or_non_ascii(word):
    assert inflections(word) == []


def test_forms_of_a_query_one_matcher_for_search_and_recall():
    """One Forms: whole words, identifier spellings (crediting the parts), inflections
    (crediting their word only), parts matched inside identifiers, synonyms."""
    q = "parseConfig fails with retries"
    terms = query_terms(q)
    f = Forms(terms, identifiers(q, terms))
    assert terms == ["parseconfig", "parse", "config", "fails", "retries"]
    assert f.mask["parse_config"] == f.mask["parseconfig"] == 0b111  # the identifier and its parts
    assert f.mask["fail"] == 1 << 3 and "fail" in f.inflected
    about = f.about()
    assert about["parse-config"] == ("parseconfig", "parse", "config")
    assert about["parseconfigs"] == ("parseconfig",)  # an inflection speaks for its word only
    assert set(f.part_forms()) >= {"parse", "config", "fails", "retries"} and "parseconfig" not in f.part
    rx = f.matcher()
    assert [m.lower() for m in rx.findall("Parse_Config failed; the RETRY loop, reparse fails")] == \
        ["parse_config", "failed", "retry", "fails"]  # whole words only: not inside "reparse"
    assert f.matcher([]) is None
    assert f.forms(0b1000) == ["fails", "fail", "failed", "failing"]


def test_the_whole_word_matcher_is_written_once():
    """Search (rank's rescoring) and recall both build their Python matcher from terms.Forms;
    rg.words_regex is ripgrep's dialect of it (#29 item 3)."""
    from conftest import ROOT

    src = {p.relative_to(ROOT).as_posix(): p.read_text("utf-8") for p in (ROOT / "chrollo").rglob("*.py")}
    assert [p for p, s in src.items() if "(?<!\\w)(?:" in s] == ["chrollo/terms.py"]
    assert "Forms(" in src["chrollo/recall.py"] and "forms_of(" in src["chrollo/retrieval/pipeline.py"]
