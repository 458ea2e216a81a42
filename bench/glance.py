#!/usr/bin/env python3
"""Looking at memory (#32): `chrollo sessions`' first page, `read` of a 5 MB session, `stats`.

    python bench/glance.py [--vaults /tmp/ret-scale/10MB,/tmp/ret-scale/100MB,/tmp/ret-scale/1000MB]
                           [--runs 9] [--stats-runs 3] [--before TREE] [--only sessions,read,stats]

sessions  `chrollo sessions --json` (the first page, 20 rows) — the whole process — next to
          `ls DIR | head -20` (a shell listing the folder: the floor), bare `rg --files DIR |
          head -20` and `python -c pass` (the interpreter's own start), interleaved run by run. The first run lists the vault and caches its
          newest names (state/listing/, as the recall hook does); the others reuse them: both
          are reported.
read      `chrollo read ID` (rendered, piped) and `--json` of one 5 MB session made of the
          vault's own turns, next to `cat FILE`.
stats     `chrollo stats --json --since 2023-01-01` (totals and the activity series) at the
          largest vault: the first run (a fresh CHROLLO_HOME: every file read) and a later one
          (the per-file counts kept by the first: files stat'ed, the changed ones read), next to
          bare `rg -c "^\\[" DIR` (every file read once), interleaved; wall and CPU seconds
          (user + sys: on a shared machine the wall time is mostly other people's load).
          `--before TREE` adds sessions and stats' first run from another checkout (PYTHONPATH=TREE).

The vaults are only read (CHROLLO_HOME is a temp folder; the 5 MB session is written there).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from chrollo.rg import rg_path  # noqa: E402


def timed(cmd, env=None, shell=False, cpu: list | None = None) -> float:
    """Wall seconds of ``cmd``; its CPU seconds (user + sys) appended to ``cpu``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, env=env, shell=shell)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{cmd} exited {p.returncode}: {p.stderr[-300:]!r}")
    return dt


def ms(xs) -> float:
    return round(statistics.median(xs) * 1000, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vaults", default="/tmp/ret-scale/10MB,/tmp/ret-scale/100MB,/tmp/ret-scale/1000MB")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--stats-runs", type=int, default=3)
    ap.add_argument("--before", metavar="TREE", help="also time sessions and stats' first run from this checkout")
    ap.add_argument("--only", default="sessions,read,stats", help="which parts to run")
    a = ap.parse_args()
    chrollo = [sys.executable, "-m", "chrollo"]
    rg = rg_path()
    work = Path(tempfile.mkdtemp(prefix="chrollo-bench-glance-"))
    # (bytecode written as an install writes it: a run without .pyc files measures the compiler)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(CHROLLO_HOME=str(work / "home"), PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    print(f"load: {os.getloadavg()[0]:.2f}; rg {rg}")
    try:
        rows = []
        for v in [Path(x) for x in a.vaults.split(",") if x and "sessions" in a.only]:
            if not v.is_dir():
                print(f"skipped {v}: not there")
                continue
            files = sum(1 for n in os.listdir(v) if n.endswith(".md"))
            first = timed(chrollo + ["sessions", "--dir", str(v), "--json"], env)  # lists, caches
            kinds = ("sessions", "ls", "rg", "python") + (("before",) if a.before else ())
            t = {k: [] for k in kinds}
            for i in range(a.runs):
                for k in (kinds if i % 2 else kinds[::-1]):
                    if k == "python":
                        t[k].append(timed([sys.executable, "-c", "pass"], env))
                    elif k == "sessions":
                        t[k].append(timed(chrollo + ["sessions", "--dir", str(v), "--json"], env))
                    elif k == "before":
                        t[k].append(timed(chrollo + ["sessions", "--dir", str(v), "--json"], {**env, "PYTHONPATH": a.before}))
                    elif k == "ls":
                        t[k].append(timed(f"ls {v} | head -20", shell=True))
                    else:
                        t[k].append(timed(f"{rg} --files {v} | head -20", shell=True))
            row = {"vault": str(v), "load": round(os.getloadavg()[0], 2), "files": files, "sessions_first_run_ms": round(first * 1000, 1),
                   "sessions_p50_ms": ms(t["sessions"]), "ls_head_p50_ms": ms(t["ls"]),
                   "rg_files_head_p50_ms": ms(t["rg"]), "python_startup_p50_ms": ms(t["python"]),
                   "ratio_to_ls": round(statistics.median(t["sessions"]) / statistics.median(t["ls"]), 2),
                   "ratio_to_rg": round(statistics.median(t["sessions"]) / statistics.median(t["rg"]), 2),
                   **({"before_p50_ms": ms(t["before"]), "before_ratio_to_ls": round(
                       statistics.median(t["before"]) / statistics.median(t["ls"]), 2)} if a.before else {})}
            rows.append(row)
            print(json.dumps(row))
        if "read" in a.only:
            bench_read(Path(a.vaults.split(",")[0]), work, chrollo, env, a.runs)
        # stats at the largest vault: first run (no cache), later run (cache), [before], rg
        v = Path(a.vaults.split(",")[-1])
        if "stats" in a.only and v.is_dir() and a.stats_runs > 0:
            bench_stats(v, work, chrollo, env, rg, a.stats_runs, a.before)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_read(src: Path, work: Path, chrollo: list, env: dict, runs: int) -> None:
    """`read` of one 5 MB session built from a vault's own turns, next to cat."""
    big = work / "v"
    big.mkdir()
    names = sorted(os.listdir(src))[:400]
    head = (src / names[0]).read_text("utf-8").split("\n---\n", 1)
    body, n = [], 0
    while n < 5_000_000:
        for name in names:
            text = (src / name).read_text("utf-8").split("\n---\n", 1)[-1]
            body.append(text)
            n += len(text)
            if n >= 5_000_000:
                break
    target = big / "2026-01-01_000000_bigsess1.md"
    target.write_text(head[0] + "\n---\n" + "".join(body))
    size = target.stat().st_size
    t = {"read": [], "json": [], "cat": []}
    for i in range(runs):
        t["read"].append(timed(chrollo + ["read", "bigsess1", "--dir", str(big)], env))
        t["json"].append(timed(chrollo + ["read", "bigsess1", "--dir", str(big), "--json"], env))
        t["cat"].append(timed(["cat", str(target)]))
    turns = json.loads(subprocess.run(chrollo + ["read", "bigsess1", "--dir", str(big), "--json"],
                                      capture_output=True, env=env).stdout)["total_turns"]
    print(json.dumps({"load": round(os.getloadavg()[0], 2), "read_mb": round(size / 1e6, 1), "turns": turns, "read_p50_ms": ms(t["read"]),
                      "read_json_p50_ms": ms(t["json"]), "cat_p50_ms": ms(t["cat"]),
                      "ratio_to_cat": round(statistics.median(t["read"]) / statistics.median(t["cat"]), 1)}))


def bench_stats(v: Path, work: Path, chrollo: list, env: dict, rg: str, runs: int, before: str | None) -> None:
    """stats' first run (no cache), a later one (cached counts), [another tree's], bare rg -c."""
    stats = ["stats", "--dir", str(v), "--json", "--since", "2023-01-01"]
    warm_env = {**env, "CHROLLO_HOME": str(work / "warm")}
    timed(chrollo + stats, warm_env)  # (keeps the counts)
    kinds = ["first", "later", "rg"] + (["before"] if before else [])
    t = {k: [] for k in kinds}
    cpu = {k: [] for k in kinds}
    for i in range(runs):
        for k in (kinds if i % 2 else kinds[::-1]):
            if k == "first":
                shutil.rmtree(work / "cold", ignore_errors=True)
                t[k].append(timed(chrollo + stats, {**env, "CHROLLO_HOME": str(work / "cold")}, cpu=cpu[k]))
            elif k == "before":
                shutil.rmtree(work / "cold", ignore_errors=True)
                t[k].append(timed(chrollo + stats, {**env, "CHROLLO_HOME": str(work / "cold"),
                                                    "PYTHONPATH": before}, cpu=cpu[k]))
            elif k == "later":
                t[k].append(timed(chrollo + stats, warm_env, cpu=cpu[k]))
            else:
                t[k].append(timed([rg, "-c", "^\\[", str(v)], cpu=cpu[k]))
    row = {"stats_vault": str(v), "load": round(os.getloadavg()[0], 2)}
    for k in kinds:
        row[f"{k}_p50_s"] = round(statistics.median(t[k]), 2)
        row[f"{k}_cpu_p50_s"] = round(statistics.median(cpu[k]), 2)
    for k in kinds:
        if k != "rg":
            row[f"{k}_ratio_to_rg"] = round(statistics.median(t[k]) / statistics.median(t["rg"]), 2)
    print(json.dumps(row))


if __name__ == "__main__":
    main()
