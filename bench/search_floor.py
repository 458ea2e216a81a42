#!/usr/bin/env python3
"""What a search process cannot go under (issue 30): the floor of any chrollo search, against
bare ``rg --count``, one run, per query.

    python bench/search_floor.py --workdir DIR [--code] [--sizes 100MB,1000MB] [--queries 20]
                                 [--big-queries 8] [--home DIR]

The vaults, queries and index home are bench/index.py's (build them with it first). Per query,
with a warm page cache, each timed ``--repeat`` times (median):

  rg_count       bare `rg --count -F -i -w` with the query's terms over the vault (the yardstick)
  search         `chrollo search QUERY --dir VAULT --json`, index in use
  chosen_rg      the rg processes that search ran (recorded through a CHROLLO_RG wrapper: their
                 arguments and stdin), run again alone, output to a pipe nobody reads — the
                 files chosen, read by rg, and nothing else
  python         the interpreter chrollo runs in, started and stopped (`python -c pass`)
  stdlib         the same, importing only the standard modules a search needs (re, json,
                 sqlite3, datetime, array, zlib)
  imports        the same, importing what a search imports (chrollo.entry, console, retrieval,
                 index) and nothing more

floor = python + chosen_rg (no import, no ranking, no output: no search can cost less without
reading fewer files or not starting a process), then with the standard modules, then with
chrollo's imports. Ratios are p50 of the
per-query ratios to rg_count.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import SHARED_EVAL, chrollo_cmd, rg_count, sources_and_queries  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from chrollo.rg import rg_path  # noqa: E402
from chrollo.terms import query_terms  # noqa: E402

IMPORTS = "import chrollo.entry, chrollo.console, chrollo.retrieval, chrollo.index.plan"
STDLIB = "import re, json, sqlite3, datetime, array, zlib"  # (what any search in Python needs)
WRAPPER = """#!/bin/sh
# (records one rg run of a search: its arguments, NUL-separated, and its stdin)
d="{calls}/$(date +%s%N)"
printf '%s\\0' "$@" > "$d.args"
cat > "$d.in"
exec "{rg}" "$@" < "$d.in"
"""


def ms(cmd: list, repeat: int, stdin_file: str | None = None, env: dict | None = None) -> float:
    """Median wall ms of ``cmd`` (stdout to a pipe that is drained and dropped)."""
    out = []
    for _ in range(repeat):
        with open(stdin_file or os.devnull, "rb") as fin:
            t0 = time.perf_counter()
            subprocess.run(cmd, stdin=fin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            out.append(1000 * (time.perf_counter() - t0))
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", required=True, help="bench/index.py's vaults (DIR/100MB …)")
    ap.add_argument("--home", help="CHROLLO_HOME holding the indexes (default: DIR/../index-bench-home)")
    ap.add_argument("--sizes", default="100MB,1000MB")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--big-queries", type=int, default=8, help="queries at 1 GB and up")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--code", action="store_true", help="coding-size vaults and the code questions")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    work = Path(a.workdir)
    home = Path(a.home) if a.home else work.parent / "index-bench-home"
    rg, search = rg_path(), chrollo_cmd() + ["search"]
    script = Path(search[0])
    python = script.read_text().splitlines()[0][2:].strip() if script.name == "chrollo" else sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="chrollo-floor-"))
    try:
        _src, qs, _rep, what = sources_and_queries(tmp)
        if a.code:
            qs = [json.loads(line)["query"] for line in open(SHARED_EVAL / "code" / "code_questions_dev.jsonl")]
            what = "code dev questions"
        queries = [q for q in random.Random(a.seed).sample(qs, len(qs)) if query_terms(q)]
        calls = tmp / "calls"
        calls.mkdir()
        wrapper = tmp / "rg"
        wrapper.write_text(WRAPPER.format(calls=calls, rg=rg))
        wrapper.chmod(0o700)
        env = dict(os.environ, CHROLLO_HOME=str(home), CHROLLO_CAPTURE="off")
        print(f"source: {what}; rg {rg}; chrollo {search[0]}; python {python}; load {os.getloadavg()[0]:.1f}")
        print("| vault | queries | rg --count | search | search/rg | python | + stdlib | + imports | chosen rg "
              "| floor (python + chosen rg) / rg | with stdlib / rg | with imports / rg | load |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for label in a.sizes.split(","):
            vault = work / label
            if not vault.is_dir():
                sys.exit(f"{vault}: build it with bench/index.py first")
            n = a.big_queries if label.upper().startswith(("1000M", "1G")) else a.queries
            ms(rg_count(rg, query_terms(queries[0]), vault), 1)  # (warm the page cache)
            rows = []
            for q in queries[:n]:
                shutil.rmtree(calls)
                calls.mkdir()
                ms(search + [q, "--dir", str(vault), "--json"], 1, env=dict(env, CHROLLO_RG=str(wrapper)))
                chosen = 0.0
                for args in sorted(glob.glob(str(calls / "*.args"))):
                    argv = [x.decode("utf-8", "surrogateescape") for x in Path(args).read_bytes().split(b"\0")[:-1]]
                    chosen += ms([rg] + argv, a.repeat, args[:-5] + ".in")
                rows.append(dict(rg=ms(rg_count(rg, query_terms(q), vault), a.repeat),
                                 search=ms(search + [q, "--dir", str(vault), "--json"], a.repeat, env=env),
                                 chosen=chosen, python=ms([python, "-c", "pass"], a.repeat),
                                 stdlib=ms([python, "-c", STDLIB], a.repeat),
                                 imports=ms([python, "-c", IMPORTS], a.repeat)))
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            ratio = lambda f: statistics.median(f(r) / r["rg"] for r in rows)  # noqa: E731
            print(f"| {label} | {n} | {med['rg']:.1f} ms | {med['search']:.1f} ms | {ratio(lambda r: r['search']):.2f}× "
                  f"| {med['python']:.1f} ms | {med['stdlib']:.1f} ms | {med['imports']:.1f} ms | {med['chosen']:.1f} ms "
                  f"| {ratio(lambda r: r['python'] + r['chosen']):.2f}× | {ratio(lambda r: r['stdlib'] + r['chosen']):.2f}× "
                  f"| {ratio(lambda r: r['imports'] + r['chosen']):.2f}× "
                  f"| {os.getloadavg()[0]:.1f} |", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
