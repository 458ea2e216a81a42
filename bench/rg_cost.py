#!/usr/bin/env python3
"""What ripgrep alone costs a search, against bare ``rg --count`` (figures for closing notes).

    python bench/rg_cost.py --workdir DIR [--sizes 10MB,100MB] [--queries 20]

On the vaults bench/deadline.py builds (``DIR/10MB`` …; built here too if missing), per query
(the same questions as bench/deadline.py), the rg processes' CPU time (user + sys, all threads:
steadier than wall time on a shared machine), median over the queries:

  count        bare `rg --count -F -i -w` with the query's terms (the floor the targets use)
  words        chrollo's `-o -n --heading -0` scan with the whole-word regex only
  chrollo      the same with the identifier-part alternatives (what `chrollo search` runs)
  *_compile    the same two regexes on a one-line file: what building the regex costs rg
  full_dfa     chrollo's regex without rg.NO_FULL_DFA (as before it): rg 14 then builds a full
               DFA for it (see rg.words_regex), on the vault and on the one-line file

rg 14 builds a large alternation of case-insensitive words once per process; the part
alternatives (…_part, partNext, …Part) made that build most of their cost (see rg.words_regex).
Not a test: it prints figures.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import grow, parse_size, sources_and_queries  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from chrollo.retrieval.query import forms_of  # noqa: E402
from chrollo.rg import NO_FULL_DFA, rg_path, words_regex  # noqa: E402
from chrollo.terms import identifiers, query_terms  # noqa: E402


def cpu(cmd: list) -> float:
    """CPU seconds (user + sys) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:3]} exited {p.returncode}: {p.stderr[-300:]!r}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--sizes", default="10MB,100MB")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rg = rg_path()
    tmp = Path(tempfile.mkdtemp(prefix="chrollo-bench-"))
    src, qs, replicate, what = sources_and_queries(tmp)
    queries = [q for q in random.Random(a.seed).sample(qs, len(qs)) if query_terms(q)][: a.queries]
    one_line = tmp / "one.md"
    one_line.write_text("hello\n")
    print(f"source: {what}; rg {rg}; load {os.getloadavg()[0]:.1f}")
    print("| vault | count | words | chrollo | full_dfa | words_compile | chrollo_compile | full_dfa_compile "
          "| chrollo/count | full_dfa/count |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label in a.sizes.split(","):
        vault = Path(a.workdir) / label
        if not vault.exists():
            vault.mkdir(parents=True)
            grow(vault, src, replicate, parse_size(label))
        t: dict = {k: [] for k in ("count", "words", "chrollo", "full_dfa", "words_compile",
                                     "chrollo_compile", "full_dfa_compile")}
        scan = [rg, "--no-config", "--no-ignore", "-o", "-n", "-H", "--heading", "-0", "--stats", "-g", "*.md"]
        for q in queries:
            terms = query_terms(q)
            query = forms_of(terms, identifiers(q, terms))
            plain, full = words_regex(query.forms()), words_regex(query.forms(), query.part_forms())
            dfa = full.replace(NO_FULL_DFA, "")
            count = [rg, "--count", "-F", "-i", "-w", "--no-config", "--no-ignore", "-g", "*.md"]
            t["count"].append(cpu(count + [x for term in terms for x in ("-e", term)] + ["--", str(vault)]))
            t["words"].append(cpu(scan + ["-e", plain, "--", str(vault)]))
            t["chrollo"].append(cpu(scan + ["-e", full, "--", str(vault)]))
            t["full_dfa"].append(cpu(scan + ["-e", dfa, "--", str(vault)]))
            t["words_compile"].append(cpu(scan + ["-e", plain, "--", str(one_line)]))
            t["chrollo_compile"].append(cpu(scan + ["-e", full, "--", str(one_line)]))
            t["full_dfa_compile"].append(cpu(scan + ["-e", dfa, "--", str(one_line)]))
        med = {k: statistics.median(v) * 1000 for k, v in t.items()}
        print(f"| {label} | {med['count']:.1f} ms | {med['words']:.1f} ms | {med['chrollo']:.1f} ms | "
              f"{med['full_dfa']:.1f} ms | {med['words_compile']:.1f} ms | {med['chrollo_compile']:.1f} ms | "
              f"{med['full_dfa_compile']:.1f} ms | {med['chrollo'] / med['count']:.2f}× | "
              f"{med['full_dfa'] / med['count']:.2f}× |", flush=True)


if __name__ == "__main__":
    main()
