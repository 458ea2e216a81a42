#!/usr/bin/env python3
"""In-process cost of a ranking knob: `chrollo.retrieval.search` with the knob on and off,
interleaved per query, and bare `rg --count` on the same vault in the same run.

    python bench/ablation_cost.py VAULT [--converted /tmp/locomo_md_dev] [--queries 40]
                                  [--knob SESSION_WEIGHT] [--off 0]

Queries are LoCoMo dev questions (categories 1-4, evenly spaced). Also counts the searches
that fell back to the full pass (the large-vault shortcut's exactness check). Not a test: it
prints figures (docs/ranking.md, "Sessions").
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chrollo import retrieval as r  # noqa: E402
from chrollo.retrieval import pipeline, tuning  # noqa: E402
from chrollo.rg import rg_path  # noqa: E402
from chrollo.terms import query_terms  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vault")
    ap.add_argument("--converted", default="/tmp/locomo_md_dev", help="locomo_to_md.py output (for the questions)")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--knob", default="SESSION_WEIGHT", help="a constant of chrollo.retrieval.tuning")
    ap.add_argument("--off", default="0", help="its value for the 'off' arm")
    a = ap.parse_args()
    qs = []
    for f in sorted(os.listdir(a.converted)):
        if f.startswith("conv") and f.endswith(".json"):
            qs += [q["question"] for q in json.load(open(os.path.join(a.converted, f)))["qa"] if q["category"] != 5]
    qs = qs[::max(1, len(qs) // a.queries)][:a.queries]
    on = getattr(tuning, a.knob)
    arms = {"on": on, "off": type(on)(a.off)}
    times = {k: [] for k in arms}
    full = {k: 0 for k in arms}
    run, arm = pipeline.run, ["on"]

    def counted(*args, **kw):
        full[arm[0]] += kw.get("shortcut") is False
        return run(*args, **kw)

    pipeline.run = counted
    rg_times = []
    for q in qs:
        for name, value in arms.items():
            setattr(tuning, a.knob, value)
            arm[0] = name
            t0 = time.perf_counter()
            r.search(q, dir=a.vault, limit=10)
            times[name].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run([rg_path(), "--count", "-i", "-w", "-e", "|".join(query_terms(q)), a.vault],
                       capture_output=True)
        rg_times.append(time.perf_counter() - t0)
    rg50 = statistics.median(rg_times)
    print(f"{a.vault}: {len(qs)} queries, {a.knob} on={arms['on']} off={arms['off']}")
    for name in arms:
        p50 = statistics.median(times[name])
        print(f"  {name:3s} p50 {p50 * 1000:7.0f} ms  mean {statistics.mean(times[name]) * 1000:7.0f} ms  "
              f"{p50 / rg50:.2f}x rg  full re-scans {full[name]}/{len(qs)}")
    print(f"  rg --count p50 {rg50 * 1000:.0f} ms")


if __name__ == "__main__":
    main()
