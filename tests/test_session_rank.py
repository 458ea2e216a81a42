"""Issue 21 (session diversity): a line is weighed by its session's score over the query terms
(a file-level BM25 from the counts of the one rg scan), so of two equal lines the one from the
session that talks about the question more ranks first. Real rg, tiny vaults, frozen clock."""
from __future__ import annotations

import pytest

from chrollo import retrieval, rg, search
from chrollo.retrieval import tuning
from chrollo.retrieval.dates import named_dates
from conftest import write_session

FILLER = ["we had soup for dinner", "the weather was grey", "my sister called", "the bus was late"]


def chat(lines: list) -> list:
    """Alternating turns, each line of ``lines`` followed by four filler turns (12 file lines:
    beyond NEIGHBOR_LINES, so no line borrows another mention's terms)."""
    turns, minute = [], 0
    for text in lines:
        for t in [text, *FILLER]:
            role = "user" if len(turns) % 2 == 0 else "agent"
            turns.append((role, f"10:{minute:02d}:00", t))
            minute += 1
    return turns


@pytest.fixture
def vault(home, tmp_path):
    v = tmp_path / "vault"
    # the older session keeps coming back to the pottery workshop; the newer one says it once
    write_session(v, "aaaa0000-older", "2026-09-01T10:00:00", chat([
        "I signed up for the pottery workshop", "the pottery teacher was patient",
        "the workshop ends in May", "I glazed my first pottery bowl", "the workshop was full"]))
    write_session(v, "bbbb0000-newer", "2026-10-01T10:00:00", chat(["I signed up for the pottery workshop"]))
    write_session(v, "cccc0000-other", "2026-10-15T10:00:00", chat(["we talked about football"]))
    return v


def first_hit(vault) -> retrieval.Hit:
    return search("pottery workshop", dir=vault, expand="never", context=0).hits[0]


def test_of_two_equal_lines_the_session_about_the_question_ranks_first(vault):
    hit = first_hit(vault)
    assert "aaaa0000" in hit.path and "signed up for the pottery workshop" in hit.context[0]["text"]


def test_without_the_session_score_recency_decides(vault, monkeypatch):
    # (the case above is decided by the session score: without it the newer session wins)
    monkeypatch.setattr(tuning, "SESSION_WEIGHT", 0.0)
    assert "bbbb0000" in first_hit(vault).path


def test_the_session_score_only_lowers_scores(vault, monkeypatch):
    weighed = {(h.path, h.line): h.score for h in search("pottery workshop", dir=vault, expand="never").hits}
    monkeypatch.setattr(tuning, "SESSION_WEIGHT", 0.0)
    plain = {(h.path, h.line): h.score for h in search("pottery workshop", dir=vault, expand="never").hits}
    assert weighed.keys() == plain.keys()
    assert all(weighed[k] <= plain[k] for k in plain)
    assert any(weighed[k] < plain[k] for k in plain)


def test_the_session_score_costs_no_second_rg_pass(vault, monkeypatch):
    calls = []
    real = rg.scan

    def counted(*a, **k):
        calls.append(a[1])
        return real(*a, **k)

    monkeypatch.setattr(rg, "scan", counted)
    assert "aaaa0000" in first_hit(vault).path
    assert len(calls) == 1


# ---- named dates: a query naming a month, a day or a year prefers the sessions of that date

@pytest.fixture
def dated(home, tmp_path):
    v = tmp_path / "dated"
    # the same line in a July session and in a newer September one (recency alone picks September)
    write_session(v, "dddd0000-july", "2026-07-14T10:00:00", chat(["we repotted the fern on the balcony"]))
    write_session(v, "eeee0000-sept", "2026-09-20T10:00:00", chat(["we repotted the fern on the balcony"]))
    write_session(v, "ffff0000-oct", "2026-10-02T10:00:00", chat(["we talked about football"]))
    return v


@pytest.mark.parametrize("query", ["when was the fern repotted in July?",
                                   "which fern was repotted on 15 July, 2026?",
                                   "which fern was repotted on 15.07.2026?",
                                   "repotted fern 2026-07-13"])
def test_a_session_from_the_date_the_query_names_ranks_first(dated, query):
    hits = search(query, dir=dated, expand="never", context=0).hits
    assert "dddd0000" in hits[0].path and "eeee0000" in hits[1].path


def test_without_a_named_date_recency_decides(dated, monkeypatch):
    assert "eeee0000" in search("when was the fern repotted?", dir=dated, expand="never").hits[0].path
    monkeypatch.setattr(tuning, "DATE_WEIGHT", 0.0)
    assert "eeee0000" in search("fern repotted in July", dir=dated, expand="never").hits[0].path


def test_a_named_date_only_lowers_scores_and_costs_no_second_rg_pass(dated, monkeypatch):
    calls = []
    real = rg.scan
    monkeypatch.setattr(rg, "scan", lambda *a, **k: calls.append(1) or real(*a, **k))
    dated_hits = {h.path: h.score for h in search("fern in July", dir=dated, expand="never").hits}
    assert len(calls) == 1
    plain = {h.path: h.score for h in search("fern", dir=dated, expand="never").hits}
    assert dated_hits.keys() == plain.keys()
    assert all(dated_hits[p] <= plain[p] for p in plain) and any(dated_hits[p] < plain[p] for p in plain)


@pytest.mark.parametrize("query, dates", [
    ("When did Melanie go camping in July?", [(None, 7, None)]),
    ("What did Gina find on 1 February, 2023?", [(2023, 2, 1)]),
    ("the photo from December 1,2023", [(2023, 12, 1)]),
    ("Where was John between August 11 and August 15 2023?", [(2023, 8, 11), (2023, 8, 15)]),
    ("what broke in 2024-03-05's deploy", [(2024, 3, 5)]),
    ("what did we ship in 2022", [(2022, None, None)]),
    ("what did we plan in May?", [(None, 5, None)]),
    ("Mar 3 outage", [(None, 3, 3)]),
    # words that only look like months or years
    ("what may happen if the march is cancelled", []),
    ("Jan said the oct tree parser fails", []),
    ("error 2048 at line 2023", []),
    ("version 2023-13 of the schema", []),
    # numeric dates (REALTALK's questions: "What food did Paola cook on 22.01.2024?"): day
    # first with dots, month first with slashes, both readings when both are dates
    ("What food did Paola cook on 22.01.2024?", [(2024, 1, 22)]),
    ("the deploy of 01/21/2024", [(2024, 1, 21)]),
    ("What did Kevin watch on 10.01.2024?", [(2024, 1, 10), (2024, 10, 1)]),
    ("reading 11/22/63 by Stephen King", []),
    ("release 1.2.3000 and 3.5.2024.1", []),
])
def test_named_dates(query, dates):
    assert named_dates(query) == dates


# ---- hits per file: a session holding many answers keeps them while they outscore the rest

def test_a_session_keeps_up_to_eight_hits_while_they_outscore_other_sessions(home, tmp_path):
    v = tmp_path / "many"
    write_session(v, "aaaa1111-many", "2026-09-01T10:00:00",
                  chat([f"the kiln firing number {i} cracked a glazed pot" for i in range(9)]))
    write_session(v, "bbbb1111-other", "2026-10-01T10:00:00", chat(["the kiln is in the shed"]))
    hits = search("kiln glazed pot cracked", dir=v, expand="never", context=0).hits
    assert [("aaaa1111" in h.path) for h in hits] == [True] * 8 + [False]


def _broad_vault(tmp_path, others: int):
    v = tmp_path / f"broad{others}"
    write_session(v, "aaaa2222-best", "2026-09-01T10:00:00",
                  chat([f"the kiln firing number {i} cracked a glazed pot" for i in range(6)]))
    write_session(v, "bbbb2222-next", "2026-09-02T10:00:00",
                  chat([f"kiln day {i}: one glazed pot came out" for i in range(6)]))
    for j in range(others):
        write_session(v, f"c{j}c{j}2222-once", f"2026-09-1{j}T10:00:00", chat(["the kiln fired a pot"]))
    return v


def test_past_the_tenth_hit_a_long_list_names_more_sessions(home, tmp_path):
    # (issue 43: read_memory's 50 hits named ~17 sessions where FTS5's named ~31)
    hits = search("kiln glazed pot cracked", dir=_broad_vault(tmp_path, 4), expand="never", context=0, limit=16).hits
    who = [h.path.rsplit("_", 1)[-1][:4] for h in hits]
    assert who[:10] == ["aaaa"] * 6 + ["bbbb"] * 4  # the first ten as before
    assert set(who[10:14]) == {"c0c0", "c1c1", "c2c2", "c3c3"} and who[14:] == ["bbbb"] * 2


def test_when_few_sessions_match_their_further_lines_still_fill_the_list(home, tmp_path):
    hits = search("kiln glazed pot cracked", dir=_broad_vault(tmp_path, 0), expand="never", context=0, limit=16).hits
    assert [h.path.rsplit("_", 1)[-1][:4] for h in hits] == ["aaaa"] * 6 + ["bbbb"] * 6
