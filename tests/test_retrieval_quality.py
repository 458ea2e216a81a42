"""A fast retrieval regression test: questions over a small synthetic conversation vault.

The fixture (tests/data/retrieval_fixture.json, written for this test) holds eight sessions of
two people talking shop and life; each of its 20 questions paraphrases one question asked in
the conversation, naming who answered; the answer is the *next* turn. A question counts as found at k when one
of the top-k hits' ±3-line windows shows the answer line — the LoCoMo rule in miniature.
Floors sit just under what the current ranking reaches, so a change that loses recall fails CI.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_session

from chrollo.retrieval import tuning
from chrollo.retrieval import search

FIXTURE = json.loads((Path(__file__).parent / "data" / "retrieval_fixture.json").read_text("utf-8"))
FLOOR_HIT1, FLOOR_HIT10 = 0.10, 0.95


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("quality")
    v = root / "vault"
    with pytest.MonkeyPatch.context() as mp:  # (module scope: the writer's state goes here)
        mp.setenv("CHROLLO_HOME", str(root / "home"))
        for i, s in enumerate(FIXTURE["sessions"]):
            turns = [("user" if j % 2 == 0 else "agent", f"09:{j:02d}:00", f"{who}: {text}")
                     for j, (who, text) in enumerate(s["turns"])]
            write_session(v, f"conv{i:04d}-0000-4000-8000-000000000000", s["start"], turns)
    return v


def _answer_lines(vault: Path, answer: str) -> list:
    return [(p.name, n) for p in sorted(vault.glob("*.md"))
            for n, line in enumerate(p.read_text("utf-8").split("\n"), 1) if answer in line]


def measure(vault: Path) -> tuple[float, float, list]:
    h1 = h10 = 0
    missed = []
    for q in FIXTURE["questions"]:
        want = _answer_lines(vault, q["answer"])
        assert want, q
        hits = [(Path(h.path).name, h.line) for h in search(q["question"], dir=vault, limit=10).hits]
        rank = next((i for i, (f, ln) in enumerate(hits, 1)
                     if any(f == wf and abs(ln - wl) <= 3 for wf, wl in want)), None)
        h1 += rank == 1
        h10 += rank is not None
        if rank is None:
            missed.append(q["question"])
    n = len(FIXTURE["questions"])
    return h1 / n, h10 / n, missed


def test_recall_floor(vault):
    hit1, hit10, missed = measure(vault)
    assert hit10 >= FLOOR_HIT10, f"hit@10 {hit10:.2f} < {FLOOR_HIT10}; missed: {missed}"
    assert hit1 >= FLOOR_HIT1, f"hit@1 {hit1:.2f} < {FLOOR_HIT1}"


def test_neighbour_terms_are_what_finds_answers(vault, monkeypatch):
    """Without the neighbour bonus the answer turns (which rarely repeat the question's words)
    rank lower: the ablation must be measurably worse, or the idea is not doing its job."""
    with_bonus = measure(vault)
    monkeypatch.setattr(tuning, "NEIGHBOR_WEIGHT", 0.0)
    without = measure(vault)
    assert (with_bonus[0], with_bonus[1]) > (without[0], without[1])
