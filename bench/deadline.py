#!/usr/bin/env python3
"""Search and recall-hook latency against bare ``rg --count``, one run, interleaved per query.

    python bench/deadline.py --workdir DIR [--sizes 10MB,100MB,1000MB] [--queries 20]
                             [--big-queries 8] [--pathological]

Vaults are LoCoMo dev conversations replicated with ../shared/eval/scale.py's generator (as
bench/search.py builds them), one folder per size under --workdir (``DIR/10MB`` …), built once
and reused (1 GB ≈ 250,000 files: keep it outside the repo). Per query, in turn, with a warm
page cache:

  rg_count  bare `rg --count -F -i -w --no-config --no-ignore -g '*.md'` with the query's terms
  search    the `chrollo search QUERY --dir VAULT --json` process (complete, no deadline)
  hook      the `chrollo hook UserPromptSubmit --harness claude-code` process, the question as
            the prompt, a fresh session each time (start to reply; retrieval has a deadline)

Medians, the hook's p90 and ratios are within the run (the machine is shared: absolute figures
drift, ratios less). Vaults of 1 GB and more time --big-queries questions. ``--pathological``
also times the hook on copies of the smallest vault holding (a) one session with a pasted
5 MiB log line, (b) a 34 MB peer file of common words — against the same vault without them.
"""
from __future__ import annotations

import argparse
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import chrollo_cmd, grow, parse_size, sources_and_queries  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from chrollo.rg import rg_path  # noqa: E402
from chrollo.terms import query_terms  # noqa: E402

COMMON = ("the and to of a in that is was it for on you he be with as by at have are this not but had "
          "his they from she which or we an there her were one do been all their has would will what "
          "if can when so no said who more about up them some could him into its then two out time "
          "like only my did other me your now over just may these new also people any know very see "
          "first well after should than where most back way our much think between go years").split()


def timed(cmd: list, env: dict | None = None, stdin: bytes | None = None) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, env=env)
    dt = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:3]} exited {p.returncode}: {p.stderr[-300:]!r}")
    return dt


def rg_count(rg: str, terms: list, vault: Path) -> list:
    cmd = [rg, "--count", "-F", "-i", "-w", "--no-config", "--no-ignore", "-g", "*.md"]
    for t in terms:
        cmd += ["-e", t]
    return cmd + ["--", str(vault)]


class Hook:
    def __init__(self, work: Path):
        self.cmd = chrollo_cmd() + ["hook", "UserPromptSubmit", "--harness", "claude-code"]
        self.home = work / "chrollo-home"
        self.n = 0

    def __call__(self, q: str, vault: Path) -> float:
        self.n += 1
        payload = {"session_id": f"5ca1e000-0000-4000-8000-{self.n:012d}", "hook_event_name": "UserPromptSubmit",
                   "cwd": str(vault.parent), "prompt": q, "transcript_path": str(vault.parent / "none.jsonl")}
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
        env.update(CHROLLO_MEMORIES_DIR=str(vault), CHROLLO_HOME=str(self.home))
        return timed(self.cmd, env, json.dumps(payload).encode())


def p50(xs):
    return round(statistics.median(xs) * 1000, 1)


def p90(xs: list) -> float:
    """The nearest-rank p90 in ms (of 8 samples, the largest)."""
    return round(sorted(xs)[max(0, -(-len(xs) * 9 // 10) - 1)] * 1000, 1)


def spread(xs):
    """(p25, p75) in ms: how noisy the run was."""
    xs = sorted(xs)
    return round(xs[len(xs) // 4] * 1000), round(xs[(3 * len(xs)) // 4] * 1000)


def pathological(base: Path, work: Path, queries: list, hook: Hook) -> list:
    """Hook p50 on the base vault, with one pasted 5 MiB log, with a 34 MB common-word peer file."""
    rnd = random.Random(1)
    log_v, common_v = work / "with-5MiB-log", work / "with-34MB-common"
    for v in (log_v, common_v):
        if not v.exists():
            shutil.copytree(base, v)
    newest = max(p.name for p in base.glob("*.md"))
    log = log_v / (newest[:11] + "235959_0bad10ad.md")
    if not log.exists():
        line = " ".join(f"{rnd.choice(COMMON)} ERROR worker-{rnd.randrange(99)} retry {rnd.choice(COMMON)}"
                        for _ in range(200_000))[: 5 << 20]
        log.write_text(f'---\nsession_id: "0bad10ad"\nharness: claude-code\n---\n\n'
                       f"[{newest[:10]} 23:59:59] [User]\nhere is the log: {line}\n")
    peer = common_v / "peers" / "stuffed" / "2099-01-01_000000_deadbeef.md"
    if not peer.exists():
        peer.parent.mkdir(parents=True)
        with open(peer, "w") as fh:
            fh.write('---\nsession_id: "deadbeef"\n---\n\n[2099-01-01 00:00:00] [User]\n')
            while fh.tell() < 34_000_000:
                fh.write(" ".join(rnd.choice(COMMON) for _ in range(12)) + "\n")
    rows = {"plain": [], "5MiB log": [], "34MB common": []}
    for q in queries:
        for label, v in (("plain", base), ("5MiB log", log_v), ("34MB common", common_v)):
            rows[label].append(hook(q, v))
    return [(label, p50(t), spread(t)) for label, t in rows.items()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", required=True, help="vaults are built (once) and kept here")
    ap.add_argument("--sizes", default="10MB,100MB,1000MB")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--big-queries", type=int, default=8, help="questions timed at 1 GB and up")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pathological", action="store_true")
    a = ap.parse_args()
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    rg, search = rg_path(), chrollo_cmd() + ["search"]
    tmp = Path(tempfile.mkdtemp(prefix="chrollo-bench-"))
    src, qs, replicate, what = sources_and_queries(tmp)
    queries = [q for q in random.Random(a.seed).sample(qs, len(qs)) if query_terms(q)][: a.queries]
    hook = Hook(tmp)
    print(f"source: {what}; rg {rg}; chrollo {' '.join(search)}; load {os.getloadavg()[0]:.1f}")
    rows = []
    for label in a.sizes.split(","):
        vault = work / label
        if not vault.exists():
            vault.mkdir()
            grow(vault, src, replicate, parse_size(label))
        nq = a.big_queries if parse_size(label) >= 10**9 else a.queries
        t = {"rg": [], "search": [], "hook": []}
        timed(rg_count(rg, query_terms(queries[0]), vault))  # warm the page cache
        for q in queries[:nq]:
            t["rg"].append(timed(rg_count(rg, query_terms(q), vault)))
            t["search"].append(timed(search + [q, "--dir", str(vault), "--json"]))
            t["hook"].append(hook(q, vault))
        row = {"vault": label, "files": sum(1 for _ in os.scandir(vault)), "queries": nq,
               "load": round(os.getloadavg()[0], 1), **{f"{k}_p50_ms": p50(v) for k, v in t.items()},
               **{f"{k}_p25_p75": spread(v) for k, v in t.items()}, "hook_p90_ms": p90(t["hook"]),
               "search/rg": round(statistics.median(t["search"]) / statistics.median(t["rg"]), 2),
               "hook/rg": round(statistics.median(t["hook"]) / statistics.median(t["rg"]), 2)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| vault | files | rg --count p50 | search p50 | search/rg | hook p50 | hook/rg | load |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['vault']} | {r['files']} | {r['rg_p50_ms']} ms {r['rg_p25_p75']} | {r['search_p50_ms']} ms "
              f"{r['search_p25_p75']} | {r['search/rg']}× | {r['hook_p50_ms']} ms {r['hook_p25_p75']} | "
              f"{r['hook/rg']}× | {r['load']} |")
    if a.pathological:
        base = work / a.sizes.split(",")[0]
        print(f"\nrecall hook on {base.name} (p50, p25–p75 ms):")
        for label, med, (lo, hi) in pathological(base, work, queries, hook):
            print(f"| {label} | {med} ms | {lo}–{hi} |")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
