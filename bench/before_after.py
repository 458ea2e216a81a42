#!/usr/bin/env python3
"""Two chrollo builds side by side, in one run (a refactor's "nothing moved" figure).

    python bench/before_after.py --before CMD --after CMD [--sizes 10MB,100MB] [--queries 30]
                                 [--rounds 3] [--turns 2000] [--identity-only | --no-identity]

CMD runs a chrollo: its executable (the `chrollo` of a `pip install .` venv: an editable
install adds tens of ms to every process), or e.g. "env PYTHONPATH=/tmp/old /venv/bin/python -m
chrollo" for another checkout. Both builds meet the same vaults, queries and prompts,
interleaved query by query (the order rotating), each with a CHROLLO_HOME of its own:

  identity  `chrollo search Q --dir VAULT --limit 10 --json` of every LoCoMo dev question
            (CHROLLO_NOW fixed) and every code dev question (CHROLLO_NOW = the vault's newest
            turn, as ../shared/eval/code/code_recall.py): the JSON byte for byte, and the ranking
            (every hit field but its context lines). Needs ../shared/eval and the code vaults
            ($CHROLLO_EVAL_DATA/code_md, see ../shared/eval/code/README.md).
  search    bench/search.py's measurement: `chrollo search Q --dir VAULT --json`, bare
            `rg --count` of the same terms in the same run; p50 per build, the ratio to rg, and
            after/before per round (the spread).
  recall    bench/hooks.py's: the UserPromptSubmit hook over the same vault, a fresh session
            per prompt, with `rg -c` of the prompt's longest word in the same run.
  capture   bench/hooks.py's: a long Claude Code transcript per build, the first Stop, then
            20 x ROUNDS one-turn Stops, the builds interleaved turn by turn.

Every timing gives the wall p50 and the CPU p50 (user + system of the process and those it
waited for, rg included: os.wait4's rusage). On a shared 2-core machine the wall time follows
the load (a p50 moves 5-10 % between identical runs at load 8); the CPU time holds still, so
its after/before is the steadier "nothing moved" figure.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hooks import claude_turn, pct, run_hook, run_hook_cpu  # noqa: E402
from search import SHARED_EVAL, grow, parse_size, rg_count, sources_and_queries, timed  # noqa: E402

from chrollo.rg import rg_path  # noqa: E402
from chrollo.terms import query_terms  # noqa: E402

BUILDS = ("before", "after")


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    env.update(extra)
    return env


def rotations(names: list, k: int) -> list:
    """The k-th order of ``names``: rotated by k, reversed every other lap (no build always first)."""
    order = names[k % len(names):] + names[:k % len(names)]
    return order[::-1] if (k // len(names)) % 2 else order


def dev_questions(code_vaults: Path) -> list:
    """(set, folder, query, CHROLLO_NOW) of every LoCoMo dev and code dev question."""
    sys.path.insert(0, str(SHARED_EVAL))
    from memfmt import newest_timestamp

    conv = Path(tempfile.mkdtemp(prefix="chrollo-ba-locomo-"))
    subprocess.run([sys.executable, str(SHARED_EVAL / "locomo_to_md.py"), "--locomo",
                    str(SHARED_EVAL / "data" / "locomo-dev"), "--out", str(conv)], check=True, capture_output=True)
    jobs = []
    for f in sorted(conv.glob("conv-*.json")):
        jobs += [("locomo", str(f.with_suffix("")), q["question"], "2026-11-25T10:00:00")
                 for q in json.loads(f.read_text())["qa"] if q["category"] != 5 and q["evidence"]]
    for line in open(SHARED_EVAL / "code" / "code_questions_dev.jsonl", encoding="utf-8"):
        q = json.loads(line)
        folder = code_vaults / q["vault"]
        jobs.append(("code", str(folder), q["query"], newest_timestamp(str(folder)).isoformat()))
    return jobs


def _ranking(raw: bytes) -> dict | None:
    try:
        d = json.loads(raw)
    except ValueError:
        return None
    return {**{k: v for k, v in d.items() if k != "hits"},
            "hits": [{k: v for k, v in h.items() if k != "context"} for h in d.get("hits", [])]}


def identity(cmds: dict, homes: dict, code_vaults: Path, most: int | None = None) -> dict:
    """Per set: questions, JSON identical, ranking identical, failures; and the first differences."""
    stats = {"locomo": [0, 0, 0, 0], "code": [0, 0, 0, 0]}
    examples = []
    jobs = dev_questions(code_vaults)
    if most:  # (a smoke run: the first questions of each set)
        jobs = [j for kind in stats for j in [x for x in jobs if x[0] == kind][:most]]
    for i, (kind, folder, q, now) in enumerate(jobs):
        out = {}
        for b in rotations(list(BUILDS), i):
            p = subprocess.run(cmds[b] + ["search", q, "--dir", folder, "--limit", "10", "--json"],
                               capture_output=True, env=clean_env(CHROLLO_HOME=str(homes[b]), CHROLLO_NOW=now))
            out[b] = (p.returncode, p.stdout)
        s = stats[kind]
        s[0] += 1
        s[3] += any(rc for rc, _ in out.values())
        (_, before), (_, after) = out["before"], out["after"]
        same_ranking = before == after or (_ranking(before) is not None and _ranking(before) == _ranking(after))
        s[1] += before == after
        s[2] += same_ranking
        if not same_ranking and len(examples) < 10:
            examples.append({"set": kind, "query": q})
    keys = ("questions", "json_identical", "ranking_identical", "failed")
    return {k: dict(zip(keys, v)) for k, v in stats.items()} | {"ranking_differs": examples}


def _row(t: dict, cpu: dict, mb: float, files: int, rounds: int, load0) -> dict:
    ms = {b: statistics.median(x) * 1000 for b, x in t.items()}
    cpu_ms = {b: statistics.median(x) * 1000 for b, x in cpu.items()}
    n = len(t["rg"]) // rounds
    by_round = [round(statistics.median(t["after"][i * n:(i + 1) * n]) /
                      statistics.median(t["before"][i * n:(i + 1) * n]), 3) for i in range(rounds)]
    return {"mb": mb, "files": files, "n": len(t["rg"]), "load": [load0, os.getloadavg()],
            **{f"{b}_p50_ms": round(v, 1) for b, v in ms.items()},
            **{f"{b}_p90_ms": round(pct(x, 0.9) * 1000, 1) for b, x in t.items() if b != "rg"},
            **{f"{b}_ratio_to_rg": round(ms[b] / ms["rg"], 2) for b in BUILDS},
            "after_vs_before": round(ms["after"] / ms["before"], 3), "after_vs_before_by_round": by_round,
            **{f"{b}_cpu_p50_ms": round(v, 1) for b, v in cpu_ms.items()},
            "cpu_after_vs_before": round(cpu_ms["after"] / cpu_ms["before"], 3)}


def _cpu_run(cmd: list, env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one process, its output dropped; CPU: user + system of it and
    the processes it waited for (rg included), which the load on a shared machine moves
    far less than the wall time."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _status, ru = os.wait4(p.pid, 0)
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime


def time_search(cmds, homes, mem: Path, queries: list, rounds: int) -> dict:
    rg = rg_path()
    env = {b: clean_env(CHROLLO_HOME=str(homes[b])) for b in BUILDS}
    for q in queries[:2]:  # warm the page cache
        for b in BUILDS:
            subprocess.run(cmds[b] + ["search", q, "--dir", str(mem), "--json"], capture_output=True, env=env[b])
    t: dict = {"rg": [], "before": [], "after": []}
    cpu: dict = {"before": [], "after": []}
    load0, k = os.getloadavg(), 0
    for _ in range(rounds):
        for q in queries:
            terms = query_terms(q)
            if not terms:
                continue
            rc = rg_count(rg, terms, mem)
            for b in rotations(["rg", *BUILDS], k):
                if b == "rg":
                    t["rg"].append(timed(rc)[0])
                else:
                    wall, used = _cpu_run(cmds[b] + ["search", q, "--dir", str(mem), "--json"], env[b])
                    t[b].append(wall)
                    cpu[b].append(used)
            k += 1
    return _row(t, cpu, round(sum(f.stat().st_size for f in mem.iterdir()) / 1e6, 1), len(os.listdir(mem)), rounds, load0)


def time_recall(cmds, homes, mem: Path, queries: list, rounds: int) -> dict:
    rg = rg_path()
    env = {b: clean_env(CHROLLO_HOME=str(homes[b]), CHROLLO_MEMORIES_DIR=str(mem)) for b in BUILDS}
    hook = {b: cmds[b] + ["hook", "UserPromptSubmit", "--harness", "claude-code"] for b in BUILDS}
    for q in queries[:2]:
        for b in BUILDS:
            run_hook(hook[b], {"session_id": "warm-" + uuid.uuid4().hex, "prompt": q, "cwd": "/"}, env[b])
    t: dict = {"rg": [], "before": [], "after": []}
    cpu: dict = {"before": [], "after": []}
    injected = {b: 0 for b in BUILDS}
    load0, k = os.getloadavg(), 0
    for _ in range(rounds):
        for q in queries:
            for b in rotations(["rg", *BUILDS], k):
                if b == "rg":
                    word = max(q.split(), key=len).strip("?.,!'\"")
                    t0 = time.perf_counter()
                    subprocess.run([rg, "-c", "-i", "-w", "-F", "--", word, str(mem)], capture_output=True)
                    t["rg"].append(time.perf_counter() - t0)
                    continue
                payload = {"session_id": uuid.uuid4().hex, "transcript_path": None, "cwd": "/",
                           "hook_event_name": "UserPromptSubmit", "prompt": q}
                dt, used, out = run_hook_cpu(hook[b], payload, env[b])
                t[b].append(dt)
                cpu[b].append(used)
                injected[b] += bool(out.strip())
            k += 1
    row = _row(t, cpu, round(sum(f.stat().st_size for f in mem.iterdir()) / 1e6, 1), len(os.listdir(mem)), rounds, load0)
    return row | {"prompts_with_injection": injected}


def time_capture(cmds, work: Path, turns: int, rounds: int) -> dict:
    """bench/hooks.py's capture, the builds interleaved turn by turn: each build its own home
    and long Claude Code transcript, the first Stop (backfilling ``turns`` turns), then
    20 x ``rounds`` one-turn Stops, the order rotating."""
    stop, tr, env = {}, {}, {}
    first = {}
    for b in BUILDS:
        home = work / f"capture-{b}"
        (home / "memories").mkdir(parents=True)
        env[b] = clean_env(CHROLLO_HOME=str(home))
        sid = str(uuid.uuid4())
        tr[b] = work / f"{sid}.jsonl"
        t0 = time.time() - turns * 60
        with open(tr[b], "w") as fh:
            for i in range(turns):
                fh.writelines(json.dumps(r) + "\n" for r in claude_turn(i, sid, t0 + i * 60))
        stop[b] = {"session_id": sid, "transcript_path": str(tr[b]), "cwd": "/home/user/project",
                   "hook_event_name": "Stop", "stop_hook_active": False}
        first[b] = run_hook(cmds[b] + ["hook", "Stop", "--harness", "claude-code"], stop[b], env[b])[0]
    t: dict = {b: [] for b in BUILDS}
    cpu: dict = {b: [] for b in BUILDS}
    load0 = os.getloadavg()
    for k in range(20 * rounds):
        for b in rotations(list(BUILDS), k):
            recs = claude_turn(turns + k, stop[b]["session_id"], time.time())
            with open(tr[b], "a") as fh:
                fh.writelines(json.dumps(r) + "\n" for r in recs)
            payload = dict(stop[b], last_assistant_message=recs[-1]["message"]["content"][0]["text"])
            wall, used, _out = run_hook_cpu(cmds[b] + ["hook", "Stop", "--harness", "claude-code"], payload, env[b])
            t[b].append(wall)
            cpu[b].append(used)
    ms = {b: statistics.median(x) * 1000 for b, x in t.items()}
    cpu_ms = {b: statistics.median(x) * 1000 for b, x in cpu.items()}
    return {"turns": turns, "transcript_mb": round(tr["after"].stat().st_size / 1e6, 1), "n": len(t["after"]),
            "load": [load0, os.getloadavg()],
            **{f"{b}_first_stop_ms": round(first[b] * 1000, 1) for b in BUILDS},
            **{f"{b}_per_turn_p50_ms": round(v, 1) for b, v in ms.items()},
            **{f"{b}_per_turn_p90_ms": round(pct(t[b], 0.9) * 1000, 1) for b in BUILDS},
            **{f"{b}_per_turn_cpu_p50_ms": round(v, 1) for b, v in cpu_ms.items()},
            "after_vs_before": round(ms["after"] / ms["before"], 3),
            "cpu_after_vs_before": round(cpu_ms["after"] / cpu_ms["before"], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, metavar="CMD")
    ap.add_argument("--after", required=True, metavar="CMD")
    ap.add_argument("--sizes", default="10MB,100MB")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3, help="passes over the queries (the spread is per pass)")
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--code-vaults", default=os.path.join(os.environ.get(
        "CHROLLO_EVAL_DATA", os.path.expanduser("~/.cache/chrollo-eval")), "code_md"))
    ap.add_argument("--identity-only", action="store_true")
    ap.add_argument("--max-questions", type=int, metavar="N", help="identity on the first N questions of each set")
    ap.add_argument("--no-identity", action="store_true")
    ap.add_argument("--json", dest="out", metavar="FILE", help="also write every figure here")
    a = ap.parse_args()
    cmds = {"before": shlex.split(a.before), "after": shlex.split(a.after)}
    work = Path(tempfile.mkdtemp(prefix="chrollo-ba-"))
    homes = {b: work / f"home-{b}" for b in BUILDS}
    for h in homes.values():
        h.mkdir()
    report: dict = {"before": a.before, "after": a.after, "search": [], "recall": []}
    try:
        if not a.no_identity:
            report["identity"] = identity(cmds, homes, Path(a.code_vaults), a.max_questions)
            print("identity", json.dumps(report["identity"]), flush=True)
        if not a.identity_only:
            src, qs, replicate, what = sources_and_queries(work)
            queries = random.Random(0).sample(qs, min(a.queries, len(qs)))
            print(f"source: {what}; {len(queries)} queries x {a.rounds} rounds; load {os.getloadavg()}", flush=True)
            mem = work / "vault"
            mem.mkdir()
            size, r = 0, 0
            for target in sorted(parse_size(s) for s in a.sizes.split(",")):
                size, r = grow(mem, src, replicate, target, size, r)
                for kind, bench in (("search", time_search), ("recall", time_recall)):
                    report[kind].append(bench(cmds, homes, mem, queries, a.rounds))
                    print(kind, json.dumps(report[kind][-1]), flush=True)
            report["capture"] = time_capture(cmds, work, a.turns, a.rounds)
            print("capture", json.dumps(report["capture"]), flush=True)
        report["load_end"] = os.getloadavg()
        print("load at the end", report["load_end"])
        if a.out:
            Path(a.out).write_text(json.dumps(report, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
