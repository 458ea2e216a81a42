"""The dev set beyond English (bench/devset_any_language.jsonl, #47) is well formed.

No network and no sources: the questions, the converter's pinned sources and the recorded
sums of the vaults it rebuilds are read as files.
"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")


def questions() -> list:
    lines = (BENCH / "devset_any_language.jsonl").read_text("utf-8").splitlines()
    return [json.loads(ln) for ln in lines if ln.strip()]


def converter():
    spec = importlib.util.spec_from_file_location("devset_any_language", BENCH / "devset_any_language.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def vault_files() -> set:
    """lang/name of every vault file the converter rebuilds (its recorded sums)."""
    text = (BENCH / "devset_any_language.sha256").read_text("utf-8")
    return {ln.split("  ", 1)[1] for ln in text.splitlines() if ln.strip()}


def test_every_question_has_an_id_a_query_and_evidence_lines():
    qs = questions()
    assert 40 <= len(qs) <= 60
    assert len({q["id"] for q in qs}) == len(qs)
    for q in qs:
        assert q["query"].strip(), q["id"]
        assert q["evidence"], q["id"]
        for ev in q["evidence"]:
            first, last = ev["lines"]
            assert 1 <= first <= last, (q["id"], ev)
            assert ev["anchor"].strip(), q["id"]


def test_evidence_names_a_file_of_the_question_s_vault():
    files = vault_files()
    for q in questions():
        for ev in q["evidence"]:
            assert f"{q['vault']}/{ev['file']}" in files, (q["id"], ev["file"])


def test_questions_cover_chinese_japanese_and_accented_european_text():
    by_lang: dict = {}
    for q in questions():
        by_lang.setdefault(q["lang"], []).append(q)
    assert {"zh", "ja", "pt"} <= set(by_lang)
    assert all(len(v) >= 10 for v in by_lang.values())
    for lang in ("zh", "ja"):  # asked in the script, as its users ask
        assert all(CJK.search(q["query"]) for q in by_lang[lang]), lang
    assert any(re.search(r"[áâãàçéêíóôõú]", q["query"]) for q in by_lang["pt"])
    assert any(q["query"].isascii() for q in by_lang["pt"])  # and typed without accents
    assert any(re.search(r"[A-Za-z_]{3,}", q["query"]) for q in by_lang["zh"])  # identifiers mixed in


def test_each_question_names_pinned_sources_of_its_language():
    sources = converter().SOURCES
    for q in questions():
        assert q["sources"], q["id"]
        for s in q["sources"]:
            assert sources[s]["lang"] == q["lang"], (q["id"], s)
            assert re.fullmatch(r"[0-9a-f]{40}", sources[s]["commit"]), s
