#!/usr/bin/env python3
"""In-process recall on real coding transcripts (fast loop for ranking work).

    python bench/code.py [--vaults $CHROLLO_EVAL_DATA/code_md] [--set NAME=VALUE …] [--misses]

Same questions and scoring as ../shared/eval/code/code_recall.py (imported from it: a hit's
±3-line window overlaps an evidence range; clock = the vault's newest turn), but
`chrollo.retrieval.search` runs in-process. Vaults: rebuild them with code_to_md.py (see its
README). ``--set`` overrides a constant of chrollo.retrieval (an ablation). The figures in
docs/ranking.md come from the official script; this is for iterating.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = ROOT.parent / "shared" / "eval" / "code"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(CODE))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vaults", default=os.path.join(os.environ.get(
        "CHROLLO_EVAL_DATA", os.path.expanduser("~/.cache/chrollo-eval")), "code_md"))
    ap.add_argument("--questions", default=str(CODE / "code_questions_dev.jsonl"))
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--misses", action="store_true", help="print the questions missed at 1 and at 10")
    a = ap.parse_args()
    import code_recall as ev
    from memfmt import newest_timestamp
    from chrollo import retrieval as r
    from chrollo.retrieval import tuning

    for kv in a.set:
        name, value = kv.split("=", 1)
        setattr(tuning, name, type(getattr(tuning, name))(eval(value)))
    qs = ev.load_questions([a.questions])
    ranks, notes = {}, []
    for v in sorted({q["vault"] for q in qs}):
        memdir = os.path.join(a.vaults, v)
        now = newest_timestamp(memdir)
        for q in (q for q in qs if q["vault"] == v):
            res = r.search(q["query"], limit=ev.K, dir=memdir, now=now)
            hits = [(os.path.basename(h.path), h.line, None) for h in res.hits]
            ranks[q["id"]] = rank = ev.first_hit_rank(hits, q["evidence"])
            if a.misses and rank != 1:
                notes.append(f"  {rank or '-':>2} {q['kind']:15s} {q['query']!r} want "
                             f"{[(e['file'][:17], e['lines']) for e in q['evidence']]} got "
                             f"{[(f[:17], ln) for f, ln, _ in hits[:3]]}")
    o = ev.agg(list(ranks.values()))
    kinds = {k: ev.agg([ranks[q["id"]] for q in qs if q["kind"] == k]) for k in ev.KINDS}
    print(f"chrollo hit@1 {o['hit@1']:.3f} hit@5 {o['hit@5']:.3f} hit@10 {o['hit@10']:.3f} "
          f"mrr {o['mrr@10']:.3f} | " + " ".join(f"{k} {x['hit@1']:.2f}/{x['hit@10']:.2f}"
                                                for k, x in kinds.items() if x["n"]))
    print("\n".join(notes))


if __name__ == "__main__":
    main()
