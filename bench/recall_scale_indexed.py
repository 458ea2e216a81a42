#!/usr/bin/env python3
"""../shared/eval/recall_scale.py with the vault indexed, as `chrollo install` and `import`
leave a user's: does the recall hook find OLD memories in a big vault once it has its index?

    python bench/recall_scale_indexed.py --converted /tmp/locomo_md_dev --filler CODE_MD_DEV
                                         [--size 1000MB] [--questions 150] [--search] [--jobs 2]
                                         [--workdir DIR]

The instrument's own vault (the LoCoMo dev conversations, the oldest sessions, then coding
sessions copied with later dates up to --size), the instrument's own scoring (recall@own: an
injected excerpt quotes an evidence line; with --search, `chrollo search` hit@10); only
`chrollo index --dir VAULT` runs before the questions (timed). recall_scale.py itself fires
the questions at a vault that was never indexed: its first prompts then read the newest
sessions and leave the build to the background (docs/search-and-recall.md, *How search works*, item 8).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

EVAL = Path(__file__).resolve().parent.parent.parent / "shared" / "eval"
sys.path.insert(0, str(EVAL))
import recall_gate as rg  # noqa: E402
import recall_scale as rs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--converted", required=True)
    ap.add_argument("--filler", action="append", required=True)
    ap.add_argument("--size", default="1000MB")
    ap.add_argument("--questions", type=int, default=150)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--search", action="store_true")
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    cmd = rg.chrollo_cmd()
    convs = rg.load(a.converted)
    work = Path(a.workdir)
    vault = work / "vault"
    shutil.rmtree(vault, ignore_errors=True)
    vault.mkdir(parents=True)
    for c in convs:
        src = Path(a.converted) / c["memory_dir"]
        for f in src.glob("*.md"):
            shutil.copy2(f, vault / f.name)
    per_conv = [[(c, q) for q in c["qa"] if q["category"] in rg.CATS and q["evidence"]] for c in convs]
    questions = []
    for i in range(max(len(x) for x in per_conv)):
        questions += [x[i] for x in per_conv if i < len(x)]
    questions = questions[::max(1, len(questions) // max(1, a.questions))][:a.questions]
    filler, have, r = rs.filler_files(a.filler), rs.vault_bytes(str(vault))[1], 0
    size = rs.parse_size(a.size)
    while have < size:
        for name, text in filler:
            n2, t2 = rs.replica(name, text, r)
            (vault / n2).write_text(t2, encoding="utf-8")
            have += len(t2.encode("utf-8"))
            if have >= size:
                break
        r += 1
    files, have = rs.vault_bytes(str(vault))
    home, cwd = work / "home", work / "cwd"
    cwd.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    built = json.loads(subprocess.run(cmd + ["index", "--dir", str(vault), "--json"], capture_output=True,
                                      check=True, env=dict(os.environ, CHROLLO_HOME=str(home))).stdout)
    index_s = time.perf_counter() - t0
    runner = rg.Runner(cmd, str(home), str(cwd), "")

    def one(cq):
        c, q = cq
        got = runner.hook(q["question"], str(vault), f"scale-{c['conv']}-{q['qi']}")
        ev = [tuple(c["dia_map"][e]) for e in q["evidence"]]
        spans, _ = rg.covered_spans(got["text"], str(vault)) if got["text"] else ([], 0)
        got["useful"] = bool(rg.overlaps(spans, ev))
        if a.search:
            t = time.perf_counter()
            hits = runner.search(q["question"], str(vault), 10)
            got["search_ms"] = 1000 * (time.perf_counter() - t)
            win = [(f, max(1, ln - rg.WINDOW), ln + rg.WINDOW) for f, ln in hits]
            got["search_hit10"] = bool(rg.overlaps(win, ev))
        return got

    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        res = list(ex.map(one, questions))
    wall = [x["wall_ms"] for x in res]
    row = {"bytes": have, "files": files, "index_s": round(index_s, 1), "index_mb_per_s": built.get("mb_per_s"),
           "questions": len(res), "recall_own": round(sum(x["useful"] for x in res) / len(res), 3),
           "injected": round(sum(bool(x["text"]) for x in res) / len(res), 3),
           "hook_p50_ms": round(statistics.median(wall), 1), "hook_p90_ms": round(rg.pct(wall, 90), 1),
           "errors": runner.errors, "load": round(os.getloadavg()[0], 1)}
    if a.search:
        row["search_hit10"] = round(sum(x["search_hit10"] for x in res) / len(res), 3)
        row["search_p50_ms"] = round(statistics.median(x["search_ms"] for x in res), 1)
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
