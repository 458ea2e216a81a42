#!/usr/bin/env python3
"""In-process retrieval eval on the LoCoMo dev conversations (fast loop for ranking work).

    python bench/locomo.py [--converted /tmp/locomo_md_dev] [--set NAME=VALUE …] [--fts5] [--misses N]

Same scoring as ../shared/eval/retrieval.py (imported from it: hit@k over ±3-line windows),
but `chrollo.retrieval.search` is called in-process, so a run takes seconds, not minutes.
``--set`` overrides a constant of chrollo.retrieval for an ablation (e.g. --set WINDOW_WEIGHT=0).
The figures in docs/ranking.md come from the official script; this is for iterating.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT.parent / "shared" / "eval"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(EVAL))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--converted", default="/tmp/locomo_md_dev")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--fts5", action="store_true", help="also run the FTS5 baseline")
    ap.add_argument("--misses", type=int, default=0, help="print N questions chrollo misses at 10")
    a = ap.parse_args()
    if not os.path.isdir(a.converted):
        subprocess.run([sys.executable, str(EVAL / "locomo_to_md.py"), "--locomo",
                        str(EVAL / "data" / "locomo-dev"), "--out", a.converted], check=True)
    import retrieval as ev
    from chrollo import retrieval as r
    from chrollo.retrieval import tuning

    for kv in a.set:
        name, value = kv.split("=", 1)
        setattr(tuning, name, type(getattr(tuning, name))(eval(value)))
    convs = ev.load_converted(a.converted)
    systems = {"chrollo": None}
    if a.fts5:
        systems["fts5"] = ev.FTS5()
    for label, sysobj in systems.items():
        rows, misses = [], []
        for c in convs:
            memdir = os.path.join(a.converted, c["memory_dir"])
            if sysobj:
                sysobj.build(memdir)
            for q in c["qa"]:
                if q["category"] == 5 or not q["evidence"]:
                    continue
                if sysobj:
                    hits = sysobj.search(q["question"], ev.K)
                else:
                    res = r.search(q["question"], limit=ev.K, dir=memdir)
                    hits = [(os.path.basename(h.path), h.line) for h in res.hits]
                spans = [tuple(c["dia_map"][e]) for e in q["evidence"]]
                rank, cov, srank = ev.score_question(hits, spans)
                rows.append((q["category"], rank, cov, len(spans), srank))
                if rank is None:
                    misses.append((c["conv"], q["category"], q["question"], q["answer"]))
        o = ev.aggregate(rows)
        cats = {k: ev.aggregate([x for x in rows if x[0] == k])["hit@10"] for k in ev.CATS}
        print(f"{label:8s} hit@1 {o['hit@1']:.3f} hit@5 {o['hit@5']:.3f} hit@10 {o['hit@10']:.3f} "
              f"mrr {o['mrr@10']:.3f} sess@1 {o['sess@1']:.3f} sess@5 {o['sess@5']:.3f} | " + " ".join(f"{ev.CATS[k][:9]} {v:.3f}" for k, v in cats.items()))
        if label == "chrollo":
            for m in misses[: a.misses]:
                print("  miss", m)


if __name__ == "__main__":
    main()
