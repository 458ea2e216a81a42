#!/usr/bin/env python3
"""What keeping frontmatter rows out of the ranking costs (#23), in-process, against bare rg.

    python bench/frontmatter.py --vault /tmp/ret-scale/10MB [--format2 DIR] [--queries 30]
                                [--rounds 3] [--src OTHER_TREE ...]

Times, per LoCoMo dev question (shuffled with a fixed seed) and in one run:

  rg       bare `rg --count -i -w` with the query's terms (the scan floor)
  search   chrollo.retrieval.search(question, dir=VAULT) called in-process (no start-up; wall
           time, and CPU time: the Python process's and its rg's, steadier on a loaded box), for
           this tree and each --src tree (e.g. a `git archive main` copy: before/after), each in
           its own worker process, the trees taking turns round by round

and counts, per search, the files folded (rg's per-file rows) and the frontmatter heads read.
``--format2 DIR`` also writes DIR, a format-2 copy of the vault (once, through the real
writer: titles, links, `previous`), and times it too. Not a test: it prints figures.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT.parent / "shared" / "eval"


def questions(n: int) -> list:
    conv = Path(tempfile.gettempdir()) / "chrollo-bench-locomo"
    if not conv.is_dir():
        subprocess.run([sys.executable, str(EVAL / "locomo_to_md.py"), "--locomo",
                        str(EVAL / "data" / "locomo-dev"), "--out", str(conv)], check=True, capture_output=True)
    qs = []
    for f in sorted(glob.glob(str(conv / "conv-*.json"))):
        qs += [q["question"] for q in json.load(open(f))["qa"] if q["category"] != 5 and q["evidence"]]
    random.Random(0).shuffle(qs)
    return qs[:n]


def format2_copy(src: Path, dst: Path) -> None:
    """``src``'s sessions rewritten in format 2 by the real writer, oldest first (so each
    finds its `previous`)."""
    sys.path.insert(0, str(ROOT))
    os.environ["CHROLLO_HOME"] = tempfile.mkdtemp(prefix="chrollo-bench-")  # (the writer's locks)
    import datetime as dt

    from chrollo.session import SessionMeta, SessionWriter, Turn, read_session

    dst.mkdir(parents=True)
    for f in sorted(src.glob("*.md")):
        s = read_session(f)
        stamp = lambda t: dt.datetime.strptime(t.timestamp, "%Y-%m-%d %H:%M:%S")  # noqa: E731
        meta = SessionMeta(str(s.meta["session_id"]), stamp(s.turns[0]), str(s.meta.get("harness", "locomo")),
                           str(s.meta.get("cwd", "")), machine="eval")
        SessionWriter(meta, dst, fsync=False, record=False).append(
            [Turn(t.role, stamp(t), [t.text]) for t in s.turns])


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def worker(src: str, vault: str, qs: list) -> dict:
    """In a process of its own: ``src``'s chrollo, every question timed once (after a warm-up)."""
    sys.path.insert(0, src)
    from chrollo import retrieval as r
    from chrollo.rg import rg_path
    from chrollo.terms import query_terms

    files, heads = [0], [0]
    # (the engine's collector and frontmatter reader: a package since #29, one module before)
    try:
        from chrollo.retrieval import collect as engine
        collector = engine.Collector
    except ImportError:
        engine, collector = r, getattr(r, "_Collector", None)
    add = collector.add
    collector.add = lambda self, path, rows: files.__setitem__(0, files[0] + 1) or add(self, path, rows)
    name = "frontmatter_end" if hasattr(engine, "frontmatter_end") else "_frontmatter_end"
    if hasattr(engine, name):
        end = getattr(engine, name)
        setattr(engine, name, lambda path: heads.__setitem__(0, heads[0] + 1) or end(path))
    rg = rg_path()
    for q in qs[:2]:
        r.search(q, dir=vault)
    files[0] = heads[0] = 0
    out = {"search": [], "rg": [], "py_cpu": [], "rg_cpu": []}
    for q in qs:
        t0, c0, k0 = time.perf_counter(), time.process_time(), children_cpu()
        r.search(q, dir=vault)
        out["search"].append(time.perf_counter() - t0)
        out["py_cpu"].append(time.process_time() - c0)
        out["rg_cpu"].append(children_cpu() - k0)
        cmd = [rg, "--count", "-i", "-w", "--no-config", "--no-ignore", "-g", "*.md"]
        for t in query_terms(q):
            cmd += ["-e", t]
        t0 = time.perf_counter()
        subprocess.run(cmd + ["--", vault], capture_output=True)
        out["rg"].append(time.perf_counter() - t0)
    out["files"], out["heads"] = files[0] / len(qs), heads[0] / len(qs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", required=True)
    ap.add_argument("--format2", help="a format-2 copy of --vault: written here once, then timed too")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--src", action="append", default=[], help="another chrollo source tree to time")
    ap.add_argument("--worker", nargs=2, metavar=("SRC", "VAULT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    qs = questions(a.queries)
    if a.worker:
        print(json.dumps(worker(a.worker[0], a.worker[1], qs)))
        return
    vaults = [a.vault]
    if a.format2:
        if not Path(a.format2).exists():
            format2_copy(Path(a.vault), Path(a.format2))
        vaults.append(a.format2)
    trees = [str(ROOT), *map(os.path.abspath, a.src)]
    runs: dict = {}
    for _ in range(a.rounds):
        for vault in vaults:
            for tree in trees:
                p = subprocess.run([sys.executable, __file__, "--queries", str(a.queries), "--vault", vault,
                                    "--worker", tree, vault], capture_output=True, text=True, cwd="/",
                                   env=dict(os.environ, CHROLLO_HOME=tempfile.mkdtemp(prefix="chrollo-bench-")))
                if p.returncode:
                    sys.exit(p.stderr)
                got = json.loads(p.stdout)
                run = runs.setdefault((vault, tree), {"search": [], "rg": [], "py_cpu": [], "rg_cpu": []})
                for k in ("search", "rg", "py_cpu", "rg_cpu"):
                    run[k] += got[k]
                run["files"], run["heads"] = got["files"], got["heads"]
    ms = lambda xs: statistics.median(xs) * 1000  # noqa: E731
    print(f"{a.queries} questions x {a.rounds} rounds; load average {os.getloadavg()[0]:.1f}")
    print("| vault | tree | files folded / search | heads read / search | bare rg p50 ms | search p50 ms "
          "| search / rg | search CPU p50 ms: Python + its rg |")
    print("|---|---|---|---|---|---|---|---|")
    for (vault, tree), run in runs.items():
        print(f"| {vault} | {tree} | {run['files']:.0f} | {run['heads']:.0f} | {ms(run['rg']):.0f} "
              f"| {ms(run['search']):.0f} | {ms(run['search']) / ms(run['rg']):.2f}x "
              f"| {ms(run['py_cpu']):.0f} + {ms(run['rg_cpu']):.0f} |")


if __name__ == "__main__":
    main()
