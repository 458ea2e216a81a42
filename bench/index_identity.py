#!/usr/bin/env python3
"""Issue 30's identity check on the dev benchmarks: every question's `search` JSON is the same
with and without the index (in-process, the index in a CHROLLO_HOME of its own).

    python bench/index_identity.py [--converted /tmp/locomo_md_dev] [--code-vaults DIR]
                                   [--scale DIR --sizes 10MB,100MB]

LoCoMo dev (each conversation's folder indexed, its questions asked there); the code dev
vaults if --code-vaults holds them (../shared/eval/code/code_to_md.py builds them); the scale
vaults of bench/index.py with the LoCoMo questions (their index must be built: bench/index.py).
Prints, per set, how many searches were identical, how many scans used the index (a plan,
not a walk: a search makes one to three; MIN_FILES and SCAN_SHARE are lifted so that every
scan that can use it does), and the questions that differed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT.parent / "shared" / "eval"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(EVAL))
sys.path.insert(0, str(EVAL / "code"))


USED = [0]


def same(query: str, memdir: str, **kw) -> bool:
    from chrollo import retrieval
    from chrollo.index import plan as index

    if not hasattr(index.plan, "counted"):
        plain = index.plan

        def counted(*a, **k):
            got = plain(*a, **k)
            USED[0] += got is not None and got.paths is not None  # (None: rg walks the folder)
            return got
        counted.counted = True
        index.plan = counted

    out = []
    for flag in ("0", "1"):
        os.environ["CHROLLO_INDEX"] = flag
        out.append(json.dumps(retrieval.search(query, dir=memdir, **kw).to_json()))
    return out[0] == out[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--converted", default="/tmp/locomo_md_dev")
    ap.add_argument("--code-vaults", default=os.path.join(os.environ.get(
        "CHROLLO_EVAL_DATA", os.path.expanduser("~/.cache/chrollo-eval")), "code_md"))
    ap.add_argument("--scale", help="bench/index.py's --workdir (its index home beside it)")
    ap.add_argument("--sizes", default="10MB,100MB")
    ap.add_argument("--scale-queries", type=int, default=100)
    a = ap.parse_args()
    if not os.path.isdir(a.converted):
        subprocess.run([sys.executable, str(EVAL / "locomo_to_md.py"), "--locomo",
                        str(EVAL / "data" / "locomo-dev"), "--out", a.converted], check=True)
    os.environ["CHROLLO_HOME"] = tempfile.mkdtemp(prefix="chrollo-identity-")
    import retrieval as ev

    from chrollo.retrieval import tuning

    # (the dev vaults are small: a complete search would let rg walk them; make every scan
    # that can use the index use it, so the identity is the index's, not a walk's)
    tuning.INDEX_MIN_FILES, tuning.INDEX_SCAN_SHARE = 0, 1.0
    report = {}
    convs = ev.load_converted(a.converted)
    n = ok = 0
    differ = []
    questions = []
    for c in convs:
        memdir = os.path.join(a.converted, c["memory_dir"])
        index.build(memdir)
        for q in c["qa"]:
            if q["category"] == 5 or not q["evidence"]:
                continue
            questions.append(q["question"])
            n += 1
            if same(q["question"], memdir, limit=ev.K):
                ok += 1
            else:
                differ.append(q["question"])
    report["locomo_dev"] = {"searches": n, "identical": ok, "index_used": USED[0], "differ": differ[:20]}
    USED[0] = 0
    if os.path.isdir(a.code_vaults):
        import code_recall as cv
        from memfmt import newest_timestamp

        qs = cv.load_questions([str(EVAL / "code" / "code_questions_dev.jsonl")])
        n = ok = 0
        differ = []
        for v in sorted({q["vault"] for q in qs}):
            memdir = os.path.join(a.code_vaults, v)
            index.build(memdir)
            now = newest_timestamp(memdir)
            for q in (q for q in qs if q["vault"] == v):
                n += 1
                if same(q["query"], memdir, limit=cv.K, now=now):
                    ok += 1
                else:
                    differ.append(q["query"])
        report["code_dev"] = {"searches": n, "identical": ok, "index_used": USED[0], "differ": differ[:20]}
        USED[0] = 0
    if a.scale:
        os.environ["CHROLLO_HOME"] = str(Path(a.scale).parent / "index-bench-home")
        for size in a.sizes.split(","):
            memdir = os.path.join(a.scale, size)
            n = ok = 0
            differ = []
            for q in questions[: a.scale_queries]:
                n += 1
                if same(q, memdir):
                    ok += 1
                else:
                    differ.append(q)
            report[f"scale_{size}"] = {"searches": n, "identical": ok, "index_used": USED[0], "differ": differ[:20]}
            USED[0] = 0
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
