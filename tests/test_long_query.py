"""A query past MAX_TERMS searchable words (a pasted log, a pasted file) is cut, never a crash (#33).

The cut keeps the first MAX_TERMS terms; an identifier kept whole (``parse_config`` as the
100th term) keeps only the parts that were kept too — its parts beyond the cut are not terms
of the search, so neither the matcher nor recall may credit them.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from hookkit import hook, ok

from chrollo.fileformat import RECALL_HEADER
from chrollo.retrieval import MAX_TERMS, search
from chrollo.terms import query_terms
from conftest import ROOT, run_json, write_session
from test_mcp import _call

# 99 made-up words, then an identifier: the cut falls between the identifier and its parts
FILLER = " ".join(f"zq{a}{b}" for a in "abcdefghijklmnopqrstuvwxyz" for b in "abcd")
LONG = " ".join(FILLER.split()[:99]) + " parse_config"
SID = "live0000-aaaa-4bbb-8ccc-dddddddddddd"


def _vault(tmp_path: Path) -> Path:
    v = tmp_path / "vault"
    write_session(v, "cfg00000-x", "2026-10-01T10:00:00", [
        ("user", "10:00:00", LONG + " fails on an empty file"),
        ("agent", "10:00:05", ["parse_config now returns the defaults for an empty file."])])
    for i in range(4):
        write_session(v, f"fill{i:04d}-x", f"2026-09-0{i + 1}T10:00:00",
                      [("user", "10:00:00", f"bump the changelog for release {i}")])
    return v


def test_the_cut_falls_inside_an_identifier():
    terms = query_terms(LONG)
    assert len(terms) > MAX_TERMS and terms[MAX_TERMS - 1] == "parse_config"
    assert terms[MAX_TERMS:] == ["parse", "config"]


def test_cli_search_of_a_cut_identifier_answers(home, tmp_path):
    v = _vault(tmp_path)
    p, out = run_json(["search", "--dir", v, *LONG.split()], home)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert out["terms"][-1] == "parse_config" and len(out["terms"]) == MAX_TERMS
    assert any("only the first 100 were searched" in w for w in out["warnings"])
    assert out["hits"] and out["hits"][0]["path"].endswith("cfg00000.md")
    assert set(out["hits"][0]["terms"]) <= set(out["terms"])


def test_mcp_read_memory_of_a_cut_identifier_answers(home, tmp_path):
    v = _vault(tmp_path)
    _, r = _call(home, v, [("read_memory", {"query": LONG})])
    assert not r.is_error, r.content[0].text
    assert "cfg00000.md" in r.content[0].text


def test_recall_hook_injects_for_a_cut_identifier(home, tmp_path):
    v = _vault(tmp_path)
    body = {"session_id": SID, "transcript_path": None, "cwd": "/nonexistent/x",
            "hook_event_name": "UserPromptSubmit", "prompt": LONG + " fails on an empty file"}
    p = hook(home, "claude-code", "UserPromptSubmit", body, CHROLLO_MEMORIES_DIR=str(v))
    ok(p)
    assert p.stdout, p.stderr
    text = json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
    assert text.startswith(RECALL_HEADER + "\n")
    assert "returns the defaults for an empty file" in text


def _pastes(n: int, words: int, seed: int) -> list:
    """``n`` runs of ``words`` consecutive words from the project's own README and sources."""
    texts = [(ROOT / "README.md").read_text("utf-8")]
    texts += [p.read_text("utf-8") for p in sorted((ROOT / "chrollo").rglob("*.py"))]
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        w = rnd.choice(texts).split()
        start = rnd.randrange(max(1, len(w) - words))
        out.append(" ".join(w[start:start + words]))
    return out


def test_long_pastes_of_the_projects_own_files_never_crash(home, tmp_path):
    """Property: any 400-word paste of README or source searches, is cut to MAX_TERMS terms,
    and credits hits only with terms that were searched (16% of them crashed before)."""
    from chrollo import recall

    v = _vault(tmp_path)
    cut = 0
    for q in _pastes(120, 400, seed=33):
        r = search(q, dir=v, limit=5)
        assert len(r.terms) <= MAX_TERMS
        searched = set(r.terms).union(*r.expanded.values())  # (synonyms found are credited too)
        assert all(set(h.terms) <= searched for h in r.hits)
        cut += len(query_terms(q)) > MAX_TERMS
        # recall's own matcher over the same (cut) terms: never a term outside them
        got = recall.about_prompt(r, "none")
        assert all(p.terms <= set(r.terms) for p in got)
    assert cut > 60  # most pastes are past the cut: the property was exercised
