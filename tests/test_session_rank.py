"""Issue 21 (session diversity): a line is weighed by its session's score over the query terms
(a file-level BM25 from the counts of the one rg scan), so of two equal lines the one from the
session that talks about the question more ranks first. Real rg, tiny vaults, frozen clock."""
from __future__ import annotations

import pytest

from chrollo import retrieval, search
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
    monkeypatch.setattr(retrieval, "SESSION_WEIGHT", 0.0)
    assert "bbbb0000" in first_hit(vault).path


def test_the_session_score_only_lowers_scores(vault, monkeypatch):
    weighed = {(h.path, h.line): h.score for h in search("pottery workshop", dir=vault, expand="never").hits}
    monkeypatch.setattr(retrieval, "SESSION_WEIGHT", 0.0)
    plain = {(h.path, h.line): h.score for h in search("pottery workshop", dir=vault, expand="never").hits}
    assert weighed.keys() == plain.keys()
    assert all(weighed[k] <= plain[k] for k in plain)
    assert any(weighed[k] < plain[k] for k in plain)


def test_the_session_score_costs_no_second_rg_pass(vault, monkeypatch):
    calls = []
    real = retrieval._rg.scan

    def counted(*a, **k):
        calls.append(a[1])
        return real(*a, **k)

    monkeypatch.setattr(retrieval._rg, "scan", counted)
    assert "aaaa0000" in first_hit(vault).path
    assert len(calls) == 1
