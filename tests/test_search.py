"""`chrollo search`: ranking, limits, filters, output contract (real rg, real CLI)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chrollo import search
from conftest import ToolCall, run, run_json, write_session

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def vault(home, tmp_path):
    return tmp_path / "vault"


def lines_of(result):
    return [(Path(h.path).name, h.line) for h in result.hits]


def test_rarer_term_outranks_common_one(vault):
    for i in range(6):
        write_session(vault, f"common{i:02d}-x", f"2026-10-0{i + 1}T10:00:00",
                      [("user", "10:00:00", f"please deploy build {i}")])
    write_session(vault, "rare0000-x", "2026-09-01T10:00:00",
                  [("user", "10:00:00", "the kubernetes cluster is unhappy")])
    r = search("deploy kubernetes", dir=vault)
    assert r.hits[0].terms == ["kubernetes"]
    assert "kubernetes" in r.hits[0].context[[c["match"] for c in r.hits[0].context].index(True)]["text"]
    assert all(h.terms == ["deploy"] for h in r.hits[1:])


def test_newer_session_wins_a_tie(vault):
    write_session(vault, "older000-x", "2025-01-01T10:00:00", [("user", "10:00:00", "redis timeout again")])
    write_session(vault, "newer000-x", "2026-10-30T10:00:00", [("user", "10:00:00", "redis timeout again")])
    write_session(vault, "middle00-x", "2026-05-01T10:00:00", [("user", "10:00:00", "redis timeout again")])
    r = search("redis timeout", dir=vault)
    assert [h.session_id for h in r.hits] == ["newer000-x", "middle00-x", "older000-x"]
    assert r.hits[0].score >= r.hits[1].score >= r.hits[2].score


def test_recency_never_buries_a_strong_old_hit(vault):
    write_session(vault, "old00000-x", "2020-01-01T10:00:00",
                  [("user", "10:00:00", "postgres vacuum deadlock")])
    write_session(vault, "new00000-x", "2026-11-01T09:00:00",
                  [("user", "09:00:00", "postgres is fine today")])
    r = search("postgres vacuum deadlock", dir=vault)
    assert r.hits[0].session_id == "old00000-x"


def test_three_distinct_terms_beat_one_term_three_times(vault):
    write_session(vault, "repeat00-x", "2026-10-31T10:00:00",
                  [("user", "10:00:00", "cache cache cache everywhere")])
    write_session(vault, "distinct-x", "2026-01-01T10:00:00",
                  [("user", "10:00:00", "the cache eviction policy")])
    r = search("cache eviction policy", dir=vault)
    assert r.hits[0].session_id == "distinct-x"
    assert r.hits[0].terms == ["cache", "eviction", "policy"]


def test_at_most_eight_hits_per_file_and_ten_overall(vault):
    body = "\n\n\n\n\n\n\n\n".join(f"webhook retry number {i}" for i in range(12))  # far-apart lines
    for i in range(6):
        write_session(vault, f"file{i:04d}-x", f"2026-10-0{i + 1}T10:00:00", [("user", "10:00:00", body)])
    r = search("webhook retry", dir=vault)
    assert len(r.hits) == 10
    per_file = {}
    for h in r.hits:
        per_file[h.path] = per_file.get(h.path, 0) + 1
    assert max(per_file.values()) == 8
    assert len(search("webhook retry", dir=vault, limit=3).hits) == 3


def test_overlapping_windows_merge(vault):
    write_session(vault, "merge000-x", "2026-10-01T10:00:00",
                  [("user", "10:00:00", "grpc deadline\ngrpc deadline\ngrpc deadline")])
    r = search("grpc deadline", dir=vault)
    assert len(r.hits) == 1


def test_tool_lines_are_context_never_anchors(vault):
    write_session(vault, "tools000-x", "2026-10-01T10:00:00", [
        ("user", "10:00:00", "hello"),
        ("agent", "10:00:05", [ToolCall("Bash", "terraform apply -auto-approve"),
                               "The apply finished; terraform created the bucket."])])
    r = search("terraform apply", dir=vault)
    assert len(r.hits) == 1
    h = r.hits[0]
    anchor = next(c for c in h.context if c["match"])
    assert "<tool>" not in anchor["text"] and "terraform" in anchor["text"]
    assert any("<tool>$ terraform apply" in c["text"] for c in h.context)
    only_tool = search("auto-approve", dir=vault)
    assert only_tool.hits == [] and only_tool.total_matches >= 1


def test_headers_and_frontmatter_are_not_anchors(vault):
    write_session(vault, "hdr00000-x", "2026-10-01T10:00:00",
                  [("user", "10:00:00", "nothing relevant"), ("agent", "10:00:01", ["fine"])],
                  harness="claude-code", cwd="/home/user/zebra")
    assert search("zebra", dir=vault).hits == []
    assert search("agent user", dir=vault).hits == []


def test_stopword_only_query_is_zero_hits_exit_0(vault, home):
    write_session(vault, "stop0000-x", "2026-10-01T10:00:00", [("user", "10:00:00", "what is it")])
    p, out = run_json(["search", "what", "is", "it", "--dir", vault], home)
    assert p.returncode == 0
    assert out["hits"] == [] and out["terms"] == []


def test_code_aware_terms(vault):
    write_session(vault, "code0000-x", "2026-10-01T10:00:00",
                  [("user", "10:00:00", "rename parse_config before the release"),
                   ("agent", "10:00:01", ["the config loader calls parseConfig twice"])])
    r = search("parseConfig", dir=vault, context=1)
    assert r.terms == ["parseconfig", "parse", "config"]
    assert {h.line for h in r.hits} == {11, 15}
    r2 = search("parse_config", dir=vault)
    assert r2.hits[0].line == 11 and set(r2.hits[0].terms) >= {"parse_config", "parse", "config"}


def test_filters_since_harness_peer(vault):
    write_session(vault, "aaaa0000-x", "2026-01-01T10:00:00", [("user", "10:00:00", "kafka lag alert")],
                  harness="codex")
    write_session(vault, "bbbb0000-x", "2026-10-01T10:00:00", [("user", "10:00:00", "kafka lag alert")],
                  harness="gemini")
    write_session(vault / "peers" / "laptop", "cccc0000-x", "2026-10-02T10:00:00",
                  [("user", "10:00:00", "kafka lag alert")])
    os.utime(next(vault.glob("2026-01-01*.md")), (1767261600, 1767261600))  # mtime 2026-01-01
    assert len(search("kafka lag", dir=vault).hits) == 3
    assert [h.session_id for h in search("kafka", dir=vault, harness="codex").hits] == ["aaaa0000-x"]
    assert {h.session_id for h in search("kafka", dir=vault, since="2026-06-01").hits} == \
        {"bbbb0000-x", "cccc0000-x"}
    peer = search("kafka", dir=vault, peer="laptop").hits
    assert [(h.session_id, h.peer) for h in peer] == [("cccc0000-x", "laptop")]
    assert {h.peer for h in search("kafka", dir=vault, peers=False).hits} == {None}


def test_paths_with_spaces_and_non_ascii(vault, home):
    odd = vault.parent / "my vault é 東京"
    write_session(odd, "odd00000-x", "2026-10-01T10:00:00", [("user", "10:00:00", "naïve café bug in Zürich")])
    p, out = run_json(["search", "café", "zürich", "--dir", odd], home)
    assert p.returncode == 0, p.stderr
    assert len(out["hits"]) == 1 and out["hits"][0]["path"].startswith(str(odd))
    assert out["hits"][0]["terms"] == ["cafe", "zurich"]  # (terms are folded: textnorm.fold)
    r = run(["read", out["hits"][0]["path"] + ":11", "--dir", odd], home)
    assert r.returncode == 0 and "naïve café" in r.stdout


# ----------------------------------------------------------------------------- output contract

def _golden_vault(vault):
    write_session(vault, "019eb1a9-bc39-7571-b68f-9e5ed2678d73", "2026-06-10T14:25:36", [
        ("user", "14:25:36", "why does the nightly backup job fail?"),
        ("agent", "14:25:40", [ToolCall("Bash", "journalctl -u backup.service"),
                               "The backup job fails because the S3 bucket policy denies PutObject.",
                               "I updated the bucket policy; tonight's backup should pass."])])
    write_session(vault, "7c2d0e11-0000-4000-8000-000000000001", "2026-07-01T09:00:00", [
        ("user", "09:00:00", "schedule the backup at 02:00 instead")], harness="codex")


def test_json_golden_file(vault, home):
    _golden_vault(vault)
    p = run(["search", "backup", "job", "policy", "--dir", vault, "--json"], home)
    assert p.returncode == 0 and p.stderr == ""
    got = json.loads(p.stdout.replace(str(vault), "<vault>"))
    path = GOLDEN / "search_backup.json"
    if os.environ.get("CHROLLO_UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(path.read_text())


def test_human_output_plain_when_piped(vault, home):
    _golden_vault(vault)
    p = run(["search", "backup", "policy", "--dir", vault, "--limit", "1", "--context", "1"], home)
    assert p.returncode == 0
    name = "2026-06-10_142536_019eb1a9.md"
    assert p.stdout.splitlines() == [
        f"--- {vault}/{name}:16 ---",
        "2026-06-10 14:25:40 · claude-code · score 1.61 · backup, policy",
        "  15  > <tool>$ journalctl -u backup.service</tool>",
        "→ 16  > The backup job fails because the S3 bucket policy denies PutObject.",
        "  17  > I updated the bucket policy; tonight's backup should pass.",
        ""]
    assert "\x1b[" not in p.stdout
    assert "1 hit" in p.stderr


def test_search_uses_the_default_vault(home, tmp_path):
    write_session(home / "memories", "deflt000-x", "2026-10-01T10:00:00", [("user", "10:00:00", "vault lookup ok")])
    p, out = run_json(["search", "lookup"], home)
    assert p.returncode == 0 and len(out["hits"]) == 1
    assert out["hits"][0]["path"].startswith(str(home / "memories"))


# ----------------------------------------------------------------------------- large-vault shortcut

def test_sampled_shortcut_ranks_like_the_full_listing(vault, monkeypatch):
    """On big vaults common terms are left out of the scan and rescored; top hits must agree."""
    import random
    import uuid

    from chrollo.retrieval import pipeline, tuning
    rnd = random.Random(7)
    words = ["deploy", "cache", "retry", "schema", "token", "latency", "queue", "index", "shard"]
    for n in range(400):
        sid = str(uuid.UUID(int=rnd.getrandbits(128)))
        lines = []
        for k in range(12):
            w = rnd.sample(words, 2)
            extra = " flamingo" if rnd.random() < 0.01 else ""
            lines.append(f"Alice: we looked at the {w[0]} and the {w[1]} again{extra}")
        write_session(vault, sid, f"2026-{1 + n % 9:02d}-{1 + n % 27:02d}T10:{n % 60:02d}:00",
                      [("user", "10:00:00", "\n".join(lines))])
    queries = ["alice deploy flamingo", "alice cache retry", "what did alice say about the schema index",
               "alice", "alice queue flamingo shard"]
    full = {q: search(q, dir=vault).hits for q in queries}
    monkeypatch.setattr(tuning, "SAMPLE_AFTER", 100)
    monkeypatch.setattr(tuning, "SAMPLE_ENDINGS", tuple(f"{d}.md" for d in "01234567"))
    monkeypatch.setattr(tuning, "COMMON_RATE", 5.0)  # "alice" (12 a session) is common
    used = []
    real = pipeline.rescore
    monkeypatch.setattr(pipeline, "rescore", lambda *a, **k: used.append(1) or real(*a, **k))
    for q in queries:
        got = search(q, dir=vault).hits
        assert len(got) == len(full[q]) == 10, q
        # the same best score and terms, and mostly the same top ten (idf is estimated from
        # the sample for common terms, so scores may differ a little)
        assert got[0].terms == full[q][0].terms, q
        assert got[0].score == pytest.approx(full[q][0].score, rel=0.25), q
        overlap = {(h.path, h.line) for h in got} & {(h.path, h.line) for h in full[q]}
        assert len(overlap) >= 5, q
    assert used, "the shortcut never ran: the test vault is too small for it"


def test_vault_written_by_the_typescript_chrollo_searches_as_is(vault, home):
    from test_session_format import LEGACY_TS
    vault.mkdir(parents=True)
    (vault / "2026-03-01_090000_abc12345.md").write_text(LEGACY_TS)
    (vault / "2025-12-24_080000_deadbeef.md").write_text(
        "[08:00:00] [User] how to rebase onto main\n[08:00:09] [Agent]\n> git rebase origin/main\n")
    p, out = run_json(["search", "rebase", "--dir", vault], home)
    assert p.returncode == 0
    got = {(Path(h["path"]).name, h["line"], h["date"]) for h in out["hits"]}
    assert ("2026-03-01_090000_abc12345.md", 8, "2026-03-01 09:00:00") in got
    assert ("2025-12-24_080000_deadbeef.md", 1, "2025-12-24 08:00:00") in got  # inline user text


def test_huge_lines_are_clipped_in_hits_not_in_read(vault, home):
    big = "panic: " + "x" * 50_000 + " needle at the end"
    write_session(vault, "huge0000-x", "2026-10-01T10:00:00", [("user", "10:00:00", f"short needle\n{big}")])
    r = search("needle", dir=vault)
    texts = [c["text"] for h in r.hits for c in h.context]
    assert all(len(t) < 2200 for t in texts) and any("more characters" in t for t in texts)
    p, out = run_json(["read", r.hits[0].path + ":12", "--dir", vault], home)
    assert any(len(ln["text"]) > 50_000 for ln in out["lines"])


def test_inflected_forms_match_as_the_same_term(vault):
    write_session(vault, "infl0000-x", "2026-10-01T10:00:00",
                  [("user", "10:00:00", "we adopted the new linter rules"),
                   ("agent", "10:00:05", ["adopting them broke two builds"])])
    r = search("adopt linters", dir=vault, expand="never", context=0)
    assert [h.line for h in r.hits] == [11, 15]
    assert r.hits[0].terms == ["adopt", "linters"] and r.hits[1].terms == ["adopt"]


def test_context_counts_lines_of_text_not_blank_separators(vault, home):
    """-C N shows N lines of text each side; the blank lines between them are shown, not counted."""
    write_session(vault, "blank000-x", "2026-10-01T10:00:00", [
        ("user", "10:00:00", "first paragraph\n\n\n\nthe kafka consumer lags\n\n\n\nthird paragraph\nfourth")])
    r = search("kafka consumer", dir=vault, context=1)
    ctx = r.hits[0].context
    assert [c["text"] for c in ctx if c["text"].strip()] == ["first paragraph", "the kafka consumer lags",
                                                            "third paragraph"]
    assert [c["line"] for c in ctx] == list(range(ctx[0]["line"], ctx[-1]["line"] + 1))  # blanks shown
    p, out = run_json(["search", "kafka", "consumer", "--dir", vault, "-C", "2"], home)
    texts = [c["text"] for c in out["hits"][0]["context"] if c["text"].strip()]
    assert texts[-2:] == ["third paragraph", "fourth"] and "first paragraph" in texts
