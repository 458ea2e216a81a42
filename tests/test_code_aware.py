"""Issue 21: a query word matches inside identifiers on the document side (snake_case,
camelCase, kebab-case, dotted and path names), below a whole-word match of the same term;
synonyms are budgeted per query. Real rg over tiny vaults, frozen clock."""
from __future__ import annotations

from pathlib import Path

import pytest

from chrollo import search
from chrollo import rg
from chrollo.rg import words_regex
from conftest import write_session

CRASH = "why does parse_config crash when loadSettings returns None"
PATHS = "the loader is src/loaders/yaml_loader.py; see config.app-settings and optimizeRerenders()"


@pytest.fixture
def vault(home, tmp_path):
    v = tmp_path / "vault"
    write_session(v, "code0000-x", "2026-10-01T10:00:00",
                  [("user", "10:00:00", CRASH), ("agent", "10:00:05", [PATHS])])
    return v


def found(vault, query) -> list:
    r = search(query, dir=vault, expand="never", context=0)
    return [" ".join(c["text"] for c in h.context) for h in r.hits]


@pytest.mark.parametrize("query, line", [
    ("config", CRASH), ("parse config", CRASH), ("settings", CRASH), ("load settings", CRASH),
    ("yaml loader", PATHS), ("rerenders", PATHS), ("optimize", PATHS), ("loaders", PATHS),
    ("app settings", PATHS),
])
def test_query_words_match_inside_identifiers(vault, query, line):
    assert any(line in t for t in found(vault, query)), query


@pytest.mark.parametrize("query", ["onfig", "reconfig", "etting", "optimizer", "oadsettings"])
def test_a_substring_that_is_not_a_part_does_not_match(vault, query):
    assert found(vault, query) == []


def test_a_part_ranks_below_a_whole_word_match_of_the_same_term(home, tmp_path):
    v = tmp_path / "v"
    write_session(v, "part0000-x", "2026-10-01T10:00:00", [("user", "10:00:00", "parse_config crashed again")])
    write_session(v, "whol0000-x", "2026-09-01T10:00:00", [("user", "10:00:00", "the config crashed again")])
    r = search("config crashed", dir=v, expand="never", context=0)
    first, second = r.hits  # the whole word wins although its session is a month older
    assert "the config crashed" in first.context[0]["text"] and "parse_config" in second.context[0]["text"]
    assert first.score > second.score and second.terms == ["config", "crashed"]


def test_the_regex_reports_whole_identifiers():
    rx = words_regex(["config"], ["config"])
    assert rx.startswith("(?-u:") and "[a-z0-9](?:Config)" in rx
    # (then the same word spelled with accents or in full width: textnorm.folded_regex)
    assert words_regex(["config"]).startswith(r"(?-u:(?i:\b(?:config)\b)|(?:\b[cC]|\B(?:\xC3[\x87\xA7]")


def test_the_part_regex_skips_rgs_full_dfa_and_matches_the_same(tmp_path):
    """rg 14 builds a full DFA for a regex of at most 1,000 NFA states: for the part
    alternatives that build cost 15-35 ms a scan (bench/rg_cost.py). The regex carries an
    alternative that puts it past the limit and can never match: rows are the same."""
    words = ["paint", "paints", "painted", "painting", "sunrise", "sunrises", "melanie"]
    rx = words_regex(words, words)
    assert rx.endswith(rg.NO_FULL_DFA + ")")
    text = ("Melanie painted a sunrise; paint_sunrise_v2 and drawSunrise() and xpainted\n"
            + "\xff" * 1200 + " \xff\xff melanie\n")
    f = tmp_path / "s.md"
    f.write_bytes(text.encode("latin-1"))
    with_it = list(rg.scan([], [str(f)], regex=rx))
    without = list(rg.scan([], [str(f)], regex=rx.replace(rg.NO_FULL_DFA, "")))
    assert with_it == without and with_it[0][1].count(b"\n") == 6


def test_a_one_word_query_may_use_the_whole_synonym_budget(home, tmp_path):
    v = tmp_path / "v"
    write_session(v, "glit0000-x", "2026-10-01T10:00:00",
                  [("user", "10:00:00", "the sidebar has a rendering glitch on resize")])
    r = search("bug", dir=v)
    assert r.hits and r.expanded == {"bug": ["glitch"]}
