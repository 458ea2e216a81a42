"""The bundled thesaurus: contents, schema, shipping, and what expansion recovers."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from chrollo import search
from chrollo import thesaurus
from chrollo.demo import sample_vault
from chrollo.session import read_session
from chrollo.terms import query_terms
from conftest import ROOT, run_json

DATA = ROOT / "chrollo" / "data"
PARAPHRASES = json.loads((Path(__file__).parent / "data" / "paraphrases.json").read_text())["pairs"]
RECOVERY_FLOOR = 0.8  # share of the paraphrase set that expansion must find


@pytest.fixture(autouse=True)
def fresh(monkeypatch, home):
    monkeypatch.setattr(thesaurus, "_words", None)


def test_schema_and_size():
    data = json.loads((DATA / "thesaurus.json").read_text("utf-8"))
    assert data["format"] == 1 and "WordNet 3.0" in data["source"]
    words = data["words"]
    assert len(words) > 3000
    assert all(isinstance(k, str) and k == k.lower() and isinstance(v, list) and v and
               all(isinstance(s, str) and s != k for s in v) for k, v in words.items())
    assert (DATA / "thesaurus.json").stat().st_size <= 1_500_000


@pytest.mark.parametrize("word,synonym", [
    ("car", "automobile"), ("movie", "film"), ("begin", "start"), ("buy", "purchase"),   # WordNet
    ("accomplish", "achieve"), ("error", "mistake"),
    ("deploy", "release"), ("deploy", "rollout"), ("error", "exception"), ("auth", "authentication"),
    ("auth", "login"), ("db", "database"), ("repo", "repository"), ("bug", "defect"),
    ("bug", "regression"), ("release", "deploy"), ("database", "db"), ("k8s", "kubernetes"),  # overlay
])
def test_known_pairs(word, synonym):
    assert synonym in thesaurus.synonyms(word)


@pytest.mark.parametrize("word,noise", [
    ("build", "physique"), ("code", "encipher"), ("code", "codification"), ("fix", "pickle"),
    ("fix", "prepare"), ("run", "lam"), ("commit", "perpetrate"), ("branch", "limb"),
    ("test", "trial"), ("shell", "carapace"),
])
def test_known_noise_absent(word, noise):
    assert noise not in thesaurus.synonyms(word)


def test_overlay_is_big_and_two_way():
    overlay = json.loads((ROOT / "thesaurus" / "overlay.json").read_text())["entries"]
    assert len(overlay) >= 300
    for w, syns in list(overlay.items())[:50]:
        for s in syns:
            assert w in thesaurus.synonyms(s) or len(thesaurus.synonyms(s)) >= 8, (w, s)


def test_user_thesaurus_on_top(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "thesaurus.json").write_text(json.dumps({"gizmo": ["widget", "Gadget"], "car": ["wagon"]}))
    assert thesaurus.synonyms("gizmo") == ["widget", "gadget"]
    assert thesaurus.synonyms("car") == ["wagon"]
    got = thesaurus.expand(["gizmo", "car", "gadget"])
    assert got["gizmo"] == ["widget"] and got["car"] == ["wagon"]  # "gadget" is a query term already


def test_caps():
    terms = ["deploy", "error", "auth", "db", "bug", "test", "config", "cache", "log", "api"]
    got = thesaurus.expand(terms)
    assert sum(map(len, got.values())) == thesaurus.PER_QUERY
    # in turns: every term with synonyms has its best one before any has a third
    assert all(v[0] == thesaurus.synonyms(t)[0] for t, v in got.items())
    assert set(got) == {t for t in terms if thesaurus.synonyms(t)}
    assert max(map(len, got.values())) <= 2


def test_the_budget_is_per_query_not_per_term():
    """A one-word query may use the whole budget: bug's 4th synonym is searched (issue 21)."""
    assert thesaurus.synonyms("bug").index("glitch") >= 3
    assert "glitch" in thesaurus.expand(["bug"])["bug"]


def test_licence_ships_in_the_package():
    text = (DATA / "WORDNET-LICENSE").read_text()
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in text
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert "data/thesaurus.json" in pyproject and "data/WORDNET-LICENSE" in pyproject


def test_nltk_is_never_imported_at_run_time(home, tmp_path):
    import subprocess
    import sys
    from conftest import cli_env
    code = ("import sys; from chrollo.entry import main\n"
            "try:\n    main(['search', 'zyx', 'car', '--expand', '--dir', sys.argv[1], '--json'])\n"
            "except SystemExit:\n    pass\n"
            "assert 'nltk' not in sys.modules, 'nltk imported'\n")
    p = subprocess.run([sys.executable, "-c", code, str(sample_vault())], capture_output=True,
                       text=True, env=cli_env(home))
    assert p.returncode == 0, p.stderr


def test_expansion_flags_and_json(home):
    vault = sample_vault()
    p, out = run_json(["search", "intermittent", "--dir", vault], home)
    assert out["expanded"] == {"intermittent": ["flaky"]} and out["hits"]
    assert "flaky" in out["hits"][0]["terms"]
    p, out = run_json(["search", "intermittent", "--dir", vault, "--no-expand"], home)
    assert out["expanded"] == {} and out["hits"] == []
    p, out = run_json(["search", "deploy", "--dir", vault, "--expand", "--limit", "1"], home)
    assert "rollout" in out["expanded"]["deploy"]  # --expand adds synonyms although "deploy" is found
    assert all("deploy" in h["terms"] for h in out["hits"])  # exact matches outrank synonym ones
    p, out = run_json(["search", "deploy", "--dir", vault, "--limit", "1"], home)
    assert out["expanded"] == {}  # auto: "deploy" is found and fills the one hit asked for


def _turn_span(file: str, header: int) -> tuple:
    s = read_session(sample_vault() / file)
    t = next(t for t in s.turns if t.header_line == header)
    return t.header_line, t.last_line, t


def test_paraphrase_premise_holds():
    """No query word occurs as a whole word in its answer turn (else it is not a paraphrase)."""
    assert len(PARAPHRASES) >= 40
    for p in PARAPHRASES:
        _a, _b, turn = _turn_span(p["file"], p["turn"])
        text = (turn.text + "\n" + "\n".join(turn.tools)).lower()
        for term in query_terms(p["query"]):
            assert not re.search(rf"(?<![\w]){re.escape(term)}(?![\w])", text), (p["query"], term)


def _found(p, expand: str) -> bool:
    a, b, _t = _turn_span(p["file"], p["turn"])
    hits = search(p["query"], dir=sample_vault(), expand=expand).hits
    path = str(sample_vault() / p["file"])
    return any(h.path == path and h.line + 3 >= a and h.line - 3 <= b for h in hits)


def test_paraphrases_recovered_by_expansion():
    exact = sum(_found(p, "never") for p in PARAPHRASES)
    expanded = sum(_found(p, "auto") for p in PARAPHRASES)
    print(f"paraphrases: {len(PARAPHRASES)}, exact terms find {exact}, with expansion {expanded}")
    assert expanded >= RECOVERY_FLOOR * len(PARAPHRASES)
    assert expanded > exact


def test_load_time_is_small():
    t = time.perf_counter()
    thesaurus.load()
    assert thesaurus._words  # loaded (the time itself is measured in bench/, not asserted)
    assert time.perf_counter() - t < 5


def _acronym_vault(home, lines: list):
    """The answer (the first line) in the oldest session, six newer ones sharing a word of the query."""
    from conftest import write_session

    v = home / "acro"
    for i, text in enumerate(lines):
        write_session(v, f"{i:04x}acro-0000", f"2026-0{1 + i}-01T10:00:00",
                      [("user", "10:00:00", text), ("agent", "10:00:30", "Good to know.")])
    return v


@pytest.mark.parametrize("query,answer,others", [
    ("which CS classes am I taking", "my computer science classes start monday",
     ["yoga classes on tuesdays", "the cooking classes were fun", "dance classes again", "art classes are full",
      "swimming classes for the kids", "pottery classes downtown"]),
    ("when did I get the computer science degree", "I finally got my CS degree in 2019",
     ["a degree of freedom", "it was 30 degree heat", "a degree in history", "third degree burns",
      "to some degree yes", "a master's degree maybe"]),
])
def test_an_acronym_finds_its_words_and_back(home, query, answer, others):
    v = _acronym_vault(home, [answer, *others])
    hits = search(query, dir=v, limit=3, context=0).hits
    assert answer in hits[0].context[0]["text"]


def test_acronym_terms():
    assert thesaurus.acronym_terms(["cs", "degree"]) == {"cs": ["computer", "science"]}
    assert thesaurus.acronym_terms(["computer", "science", "degree"]) == {"computer": ["cs"]}
    assert thesaurus.acronym_terms(["walrus"]) == {}
