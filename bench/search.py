#!/usr/bin/env python3
"""Search latency vs bare ripgrep on LoCoMo-like vaults (figures for closing notes).

    python bench/search.py [--sizes 10MB,100MB] [--queries 30] [--runs 1] [--keep DIR]

Builds a vault of many small session files by replicating the LoCoMo dev conversations
(converted with ../shared/eval/locomo_to_md.py, replicated with ../shared/eval/scale.py's
`replicate`; without ../shared, the bundled demo vault is replicated instead). At each size it
times, per query, with a warm page cache:

  rg_count   bare `rg --count -F -i -w` with the same terms (the scan floor)
  chrollo    the full `chrollo search QUERY --dir VAULT --json` process (start-up included)

and reports medians, the ratio, and the peak RSS of the chrollo process. Also times
`chrollo --help`. Not a test: it prints figures.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_EVAL = ROOT.parent / "shared" / "eval"
sys.path.insert(0, str(ROOT))

from chrollo.rg import rg_path  # noqa: E402
from chrollo.terms import query_terms  # noqa: E402


def parse_size(s: str) -> int:
    s = s.strip().upper().rstrip("B")
    mult = {"K": 10**3, "M": 10**6, "G": 10**9}.get(s[-1:], 1)
    return int(float(s.rstrip("KMG")) * mult)


def sources_and_queries(work: Path):
    if (SHARED_EVAL / "scale.py").exists():
        sys.path.insert(0, str(SHARED_EVAL))
        from scale import replicate  # noqa: E402  (the instrument's own generator)
        conv = work / "locomo"
        subprocess.run([sys.executable, str(SHARED_EVAL / "locomo_to_md.py"), "--locomo",
                        str(SHARED_EVAL / "data" / "locomo-dev"), "--out", str(conv)],
                       check=True, capture_output=True)
        src = [(os.path.basename(f), open(f, encoding="utf-8").read())
               for f in sorted(glob.glob(str(conv / "conv-*" / "*.md")))]
        qs = []
        for f in sorted(glob.glob(str(conv / "conv-*.json"))):
            qs += [q["question"] for q in json.load(open(f))["qa"] if q["category"] != 5 and q["evidence"]]
        return src, qs, replicate, "LoCoMo dev conversations"
    from chrollo.demo import sample_vault
    src = [(f.name, f.read_text("utf-8")) for f in sorted(sample_vault().glob("*.md"))]

    def replicate(name, text, r):
        return f"{name[:18]}{r:08x}.md".replace(".md", "") + ".md", text
    qs = ["flaky test race", "rollback staging deploy", "redis down rate limit", "memory leak worker",
          "postgres index migration", "jwt refresh token", "github actions cache"]
    return src, qs, replicate, "bundled demo vault (../shared absent)"


def rg_count(rg: str, terms: list, mem: Path) -> list:
    """Bare ripgrep's count of the query's terms over ``mem``: the yardstick of every figure."""
    cmd = [rg, "--count", "-F", "-i", "-w", "--no-config", "--no-ignore", "-g", "*.md"]
    for term in terms:
        cmd += ["-e", term]
    return cmd + ["--", str(mem)]


def timed(cmd: list) -> tuple[float, int]:
    """(seconds, peak RSS in KB) of one process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:4]} exited {p.returncode}")
    return dt, ru.ru_maxrss


def grow(mem: Path, src: list, replicate, target: int, size: int = 0, r: int = 0) -> tuple[int, int]:
    """Add replicated sessions to ``mem`` until it holds ``target`` bytes; returns (size, r)."""
    while size < target:
        for name, text in src:
            fname, body = replicate(name, text, r)
            data = body.encode()
            (mem / fname).write_bytes(data)
            size += len(data)
            if size >= target:
                break
        r += 1
    return size, r


def chrollo_cmd() -> list:
    """$CHROLLO_CMD (e.g. ``python -m chrollo`` from another checkout), else the venv's."""
    if os.environ.get("CHROLLO_CMD"):
        return os.environ["CHROLLO_CMD"].split()
    exe = Path(sys.executable).with_name("chrollo")
    if _editable():
        print("warning: timing an editable install (pip install -e): its import hook adds tens of ms "
              "to every process that a regular install does not; for figures, point CHROLLO_CMD at "
              "the chrollo of a `pip install .` venv", file=sys.stderr)
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "chrollo"]


def _editable() -> bool:
    """Whether this venv holds chrollo as an editable install (its import hook in site-packages)."""
    return any(Path(sys.prefix).glob("lib/python*/site-packages/__editable__*chrollo*"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10MB,100MB")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--runs", type=int, default=1, help="timed runs per query (median taken)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", help="build the vaults here and keep them")
    a = ap.parse_args()
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="chrollo-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rg = rg_path()
    chrollo = chrollo_cmd()
    try:
        src, qs, replicate, what = sources_and_queries(work)
        queries = random.Random(a.seed).sample(qs, min(a.queries, len(qs)))
        print(f"source: {what}; {len(queries)} queries; rg {rg}; chrollo {' '.join(chrollo)}")
        helps = sorted(timed(chrollo + ["--help"])[0] for _ in range(11))
        print(f"chrollo --help: median {helps[5] * 1000:.0f} ms (11 runs)")
        mem = work / "vault"
        mem.mkdir(exist_ok=True)
        size, r = 0, 0
        rows = []
        for target in sorted(parse_size(s) for s in a.sizes.split(",")):
            size, r = grow(mem, src, replicate, target, size, r)
            nfiles = len(os.listdir(mem))
            for q in queries[:2]:  # warm the page cache
                timed(chrollo + ["search", q, "--dir", str(mem), "--json"])
            rg_t, ch_t, rss = [], [], []
            for q in queries:
                terms = query_terms(q)
                if not terms:
                    continue
                rc = rg_count(rg, terms, mem)
                rg_t.append(statistics.median(timed(rc)[0] for _ in range(a.runs)))
                runs = [timed(chrollo + ["search", q, "--dir", str(mem), "--json"]) for _ in range(a.runs)]
                ch_t.append(statistics.median(t for t, _ in runs))
                rss.append(max(m for _, m in runs))
            row = {"mb": round(size / 1e6, 1), "files": nfiles,
                   "rg_count_p50_ms": round(statistics.median(rg_t) * 1000, 1),
                   "chrollo_p50_ms": round(statistics.median(ch_t) * 1000, 1),
                   "chrollo_p90_ms": round(sorted(ch_t)[int(0.9 * (len(ch_t) - 1))] * 1000, 1),
                   "ratio_p50": round(statistics.median(ch_t) / statistics.median(rg_t), 2),
                   "chrollo_peak_rss_mb": round(max(rss) / 1024, 1)}
            rows.append(row)
            print(json.dumps(row))
        print("\n| vault | files | rg --count p50 | chrollo search p50 | p90 | ratio | peak RSS |")
        print("|---|---|---|---|---|---|---|")
        for x in rows:
            print(f"| {x['mb']} MB | {x['files']} | {x['rg_count_p50_ms']} ms | {x['chrollo_p50_ms']} ms | "
                  f"{x['chrollo_p90_ms']} ms | {x['ratio_p50']}× | {x['chrollo_peak_rss_mb']} MB |")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
