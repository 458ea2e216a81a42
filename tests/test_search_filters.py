"""Search filters (#32 item 4): --until, relative dates, --project, "exact phrase",
--all-vaults; the same in read_memory's arguments."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import cli_env, run, run_json, write_session


def _vault(tmp_path):
    v = tmp_path / "v"
    write_session(v, "aaaa1111-x", "2026-10-31T09:00:00", [
        ("user", "09:00:00", "the kafka consumer lags behind again"),
        ("agent", "09:00:05", ["the consumer group rebalances: connection reset by peer on the broker"])],
        cwd="/home/user/shop-api", fmt=2)
    write_session(v, "bbbb2222-x", "2026-10-20T14:00:00", [
        ("user", "14:00:00", "kafka consumer lag on the dashboards"),
        ("agent", "14:00:05", ["the peer reset the connection, then the consumer caught up"])],
        cwd="/home/user/infra")
    write_session(v, "cccc3333-x", "2026-09-01T08:00:00", [
        ("user", "08:00:00", "kafka consumer settings for the batch job")], cwd="/home/user/infra/jobs")
    return v


def ids(out):
    return [h["session_id"] for h in out["hits"]]


def test_until_and_relative_dates(home, tmp_path):
    v = _vault(tmp_path)
    q = ["search", "kafka", "consumer", "--dir", v]
    assert set(ids(run_json([*q, "--until", "2026-10-20"], home)[1])) == {"bbbb2222-x", "cccc3333-x"}
    assert set(ids(run_json([*q, "--until", "2026-10-19"], home)[1])) == {"cccc3333-x"}
    # the frozen clock is 2026-11-01 12:00
    assert set(ids(run_json([*q, "--since", "yesterday"], home)[1])) == {"aaaa1111-x"}
    assert set(ids(run_json([*q, "--since", "2w"], home)[1])) == {"aaaa1111-x", "bbbb2222-x"}
    assert set(ids(run_json([*q, "--since", "3m", "--until", "2026-10-20T14:00:00+00:00"], home)[1])) == \
        {"bbbb2222-x", "cccc3333-x"}
    r, out = run_json([*q, "--since", "2026-10-21", "--until", "2026-10-20"], home)
    assert r.returncode == 2 and out["error"]["kind"] == "bad_date"


def test_project_by_name_or_folder(home, tmp_path):
    v = _vault(tmp_path)
    q = ["search", "kafka", "consumer", "--dir", v]
    assert set(ids(run_json([*q, "--project", "shop-api"], home)[1])) == {"aaaa1111-x"}
    assert set(ids(run_json([*q, "--project", "infra"], home)[1])) == {"bbbb2222-x"}  # by name: that folder
    assert set(ids(run_json([*q, "--project", "/home/user/infra"], home)[1])) == {"bbbb2222-x", "cccc3333-x"}
    assert ids(run_json([*q, "--project", "nowhere"], home)[1]) == []


def test_exact_phrase_is_matched_as_a_phrase_and_still_ranked(home, tmp_path):
    v = _vault(tmp_path)
    r, out = run_json(["search", '"connection reset" consumer', "--dir", v], home)
    assert r.returncode == 0
    assert ids(out) == ["aaaa1111-x"]  # "the peer reset the connection" has the words, not the phrase
    hit = out["hits"][0]
    anchor = next(c["text"] for c in hit["context"] if c["match"])
    assert "connection reset by peer" in anchor and "consumer" in hit["terms"] and hit["score"] > 0
    r, out = run_json(["search", "connection", "reset", "--dir", v], home)  # unquoted: both sessions
    assert {"aaaa1111-x", "bbbb2222-x"} <= set(ids(out))
    r, out = run_json(["search", '"Connection  RESET by"', "--dir", v], home)  # any case, any spacing
    assert ids(out) == ["aaaa1111-x"]
    r, out = run_json(["search", '"reset connection"', "--dir", v], home)  # order matters
    assert ids(out) == []


def test_all_vaults_in_one_ranked_list(home, tmp_path):
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    assert run(["init", project], home).returncode == 0
    write_session(project / ".chrollo" / "memories", "pppp0000-x", "2026-10-30T10:00:00", [
        ("user", "10:00:00", "why does the billing webhook retry forever")], cwd=str(project))
    write_session(home / "memories", "gggg0000-x", "2026-10-29T10:00:00", [
        ("user", "10:00:00", "the billing webhook retry storm, again")])
    alone = run_json(["search", "billing", "webhook", "retry"], home, cwd=project)[1]
    assert ids(alone) == ["pppp0000-x"] and "vault" not in alone["hits"][0]  # the project vault hides the global one
    r, both = run_json(["search", "billing", "webhook", "retry", "--all-vaults"], home, cwd=project)
    assert r.returncode == 0
    assert {(h["session_id"], h["vault"]) for h in both["hits"]} == {("pppp0000-x", "project"), ("gggg0000-x", "global")}
    scores = [h["score"] for h in both["hits"]]
    assert scores == sorted(scores, reverse=True)
    text = run(["search", "billing", "webhook", "retry", "--all-vaults"], home, cwd=project).stdout
    assert "project vault ·" in text and "global vault ·" in text


def test_read_memory_takes_project_since_until(home, tmp_path):
    v = _vault(tmp_path)
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    calls = [{"query": "kafka consumer", "project": "/home/user/infra"},
             {"query": "kafka consumer", "since": "2w", "until": "2026-10-25"},
             {"query": "kafka consumer", "since": "someday"}]
    msgs += [{"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {"name": "read_memory", "arguments": a}}
             for i, a in enumerate(calls)]
    p = subprocess.run([sys.executable, "-m", "chrollo", "mcp", "--dir", str(v)], input="".join(
        json.dumps(m) + "\n" for m in msgs), capture_output=True, text=True, env=cli_env(home), timeout=60)
    replies = {r["id"]: r for r in map(json.loads, p.stdout.splitlines())}
    by_project = replies[10]["result"]["content"][0]["text"]
    assert "bbbb2222" in by_project and "cccc3333" in by_project and "aaaa1111" not in by_project
    dated = replies[11]["result"]["content"][0]["text"]
    assert "bbbb2222" in dated and "aaaa1111" not in dated and "cccc3333" not in dated
    bad = replies[12]["result"]
    assert bad["isError"] and "--since takes a date" in bad["content"][0]["text"]


def test_all_vaults_scores_are_comparable_across_vaults(home, tmp_path):
    """#44: each vault's scores were computed from its own counts, so a small project vault
    where every session says "billing" ranked that word low and its hits last. The same line,
    at the same time, in the project vault and in the global one now scores the same."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    assert run(["init", project], home).returncode == 0
    line = "the billing webhook retry storm needs a circuit breaker"
    for i in range(2):
        write_session(project / ".chrollo" / "memories", f"pppp000{i}-x", f"2026-10-2{i}T10:00:00", [
            ("user", "10:00:00", line if i == 0 else "billing webhook retries, and the billing export")],
            cwd=str(project))
    write_session(home / "memories", "gggg0000-x", "2026-10-20T10:00:00", [("user", "10:00:00", line)])
    for i in range(1, 30):
        write_session(home / "memories", f"gggg00{i:02d}-x", f"2026-09-{i:02d}T10:00:00",
                      [("user", "10:00:00", f"the kubernetes ingress note {i}")])
    r, both = run_json(["search", "billing", "breaker", "--all-vaults"], home, cwd=project)
    assert r.returncode == 0
    score = {h["session_id"]: h["score"] for h in both["hits"]}
    assert {"pppp0000-x", "gggg0000-x"} <= set(score), both["hits"]
    assert score["pppp0000-x"] == pytest.approx(score["gggg0000-x"], rel=0.01), score
