#!/usr/bin/env python3
"""The search index (issue 30): build speed and size, then search and recall-hook latency with
and without it against bare ``rg --count``, one run, interleaved per query.

    python bench/index.py --workdir DIR [--sizes 10MB,100MB,1000MB] [--queries 20]
                          [--big-queries 8] [--rebuild] [--home DIR]
    python bench/index.py --workdir DIR --build-only [--against PYTHON] [--rounds 2]

Vaults are bench/deadline.py's (LoCoMo dev conversations replicated, ``DIR/10MB`` …, built
once if missing; read-only here); with ``--code``, bench/code_vault.py's (coding sessions,
``DIR/10MB`` … made by it first) and the questions of ../shared/eval/code. The index goes to ``--home`` (a CHROLLO_HOME of its own,
default DIR/../index-bench-home), built once per vault (``--rebuild``: again, timed).
Per query, in turn, with a warm page cache:

  rg_count     bare `rg --count -F -i -w` with the query's terms (bench/deadline.py's)
  scan         `chrollo search QUERY --dir VAULT --json` with CHROLLO_INDEX=0 (as before #30)
  indexed      the same with the index; its stdout must equal scan's byte for byte
  hook         `chrollo hook UserPromptSubmit` with the index (start to reply, deadline 0.4 s)
  hook_scan    the same with CHROLLO_INDEX=0

Peak RSS is the largest of the indexed search processes (wait4). ``update_ms``: what capture
adds per turn, index.update() of one session file of the vault (in-process, p50 of 50). Medians and ratios are
within the run (the machine is shared: absolute figures drift, ratios less).

``--build-only``: only the build, ``index.build(VAULT, rebuild=True)`` in a process of its own
(what ``chrollo index --rebuild`` runs), ``--rounds`` times per vault, each in a fresh home:
wall, CPU seconds of the process and its workers (wait4), MB/s of vault and MB per CPU-second,
peak RSS of the parent and of the largest worker, index / vault, and the load average at the
time. ``--against PYTHON``: the same builds with another install's interpreter (e.g. a venv of
the commit before), interleaved round by round, and the ratios of the medians.
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
from deadline import p50, rg_count, spread  # noqa: E402
from search import chrollo_cmd, grow, parse_size, sources_and_queries  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from chrollo.rg import rg_path  # noqa: E402
from chrollo.terms import query_terms  # noqa: E402


def run(cmd: list, env: dict, stdin: bytes | None = None) -> tuple[float, int, bytes]:
    """(seconds, peak RSS in KB, stdout) of one process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    if stdin is not None:
        p.stdin.write(stdin)
        p.stdin.close()
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"{cmd[:4]} exited {code}")
    return dt, ru.ru_maxrss, out


NOW = time.strftime("%Y-%m-%dT%H:%M:%S")


def env_for(home: Path, vault: Path | None = None, index: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    # (CHROLLO_CAPTURE=off: the hook would capture each question into the vault, which is
    # read-only here — a shared bench vault must not grow a session per run)
    # (CHROLLO_NOW: one clock for the whole run — a recency score of a session from today moves
    # between two searches a second apart, and its 4th decimal can tick between them)
    env.update(CHROLLO_HOME=str(home), CHROLLO_INDEX="1" if index else "0", CHROLLO_CAPTURE="off",
               CHROLLO_NOW=NOW)
    if vault is not None:
        env["CHROLLO_MEMORIES_DIR"] = str(vault)
    return env


_BUILD = """\
import json, resource, sys
try:  # (--against an older chrollo: its index was one module)
    from chrollo.index import build as index
except ImportError:
    from chrollo import index
got = index.build(sys.argv[1], rebuild=True)
got["module"] = index.__file__
got["parent_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
got["worker_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(got))
"""


def build_only(a, work: Path, home: Path) -> None:
    """The ``--build-only`` table (see the module doc)."""
    cmd = chrollo_cmd()
    mine = cmd[0] if cmd[0].endswith(("python", "python3")) else str(Path(cmd[0]).with_name("python"))
    pythons = {"this": mine, **({"against": a.against} if a.against else {})}
    print(f"build: {pythons}; load {os.getloadavg()[0]:.1f}")
    rows = []
    for label in a.sizes.split(","):
        vault = work / label
        vault_bytes = sum(e.stat().st_size for e in os.scandir(vault) if e.name.endswith(".md"))
        got: dict = {k: [] for k in pythons}
        for r in range(a.rounds):
            for name, py in pythons.items():
                h = home / f"build-{name}"
                shutil.rmtree(h, ignore_errors=True)
                env = env_for(h)
                load = os.getloadavg()[0]
                t0 = time.perf_counter()
                # (cwd: not a checkout — ``python -c`` imports chrollo from the current folder first)
                p = subprocess.Popen([py, "-c", _BUILD, str(vault)], stdout=subprocess.PIPE, env=env,
                                     cwd=tempfile.gettempdir())
                out = p.stdout.read()
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.perf_counter() - t0
                if os.waitstatus_to_exitcode(status):
                    raise RuntimeError(f"{py}: the build exited {status}")
                s = json.loads(out)
                cpu = ru.ru_utime + ru.ru_stime
                row = {"vault": label, "build": name, "round": r, "module": s["module"], "files": s["files"],
                       "wall_s": round(wall, 2),
                       "cpu_s": round(cpu, 2), "mb_per_s": round(vault_bytes / 1e6 / wall, 1),
                       "mb_per_cpu_s": round(vault_bytes / 1e6 / cpu, 1),
                       "parent_rss_mb": round(s["parent_rss_mb"]), "worker_rss_mb": round(s["worker_rss_mb"]),
                       "index/vault": round(s["index_bytes"] / vault_bytes, 3),
                       "load": round(load, 1), "load_after": round(os.getloadavg()[0], 1)}
                got[name].append(row)
                print(json.dumps(row), flush=True)
        for name, rs in got.items():
            med = {k: statistics.median(r[k] for r in rs) for k in ("wall_s", "cpu_s", "mb_per_s", "mb_per_cpu_s",
                                                                     "parent_rss_mb", "worker_rss_mb", "load")}
            rows.append({"vault": label, "build": name, **med, "index/vault": rs[-1]["index/vault"]})
        if a.against:
            this, other = rows[-2], rows[-1]
            print(f"{label}: wall this/against {this['wall_s'] / other['wall_s']:.2f}, "
                  f"CPU {this['cpu_s'] / other['cpu_s']:.2f}")
    print("\n| vault | build | MB/s (wall) | MB per CPU-s | wall | CPU | peak RSS parent / worker | index / vault | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['vault']} | {r['build']} | {r['mb_per_s']:.1f} | {r['mb_per_cpu_s']:.1f} | {r['wall_s']:.1f} s "
              f"| {r['cpu_s']:.1f} s | {r['parent_rss_mb']:.0f} / {r['worker_rss_mb']:.0f} MB | {r['index/vault']}× "
              f"| {r['load']:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", required=True, help="the vaults (DIR/10MB …), built once if missing")
    ap.add_argument("--home", help="CHROLLO_HOME holding the indexes (default: DIR/../index-bench-home)")
    ap.add_argument("--sizes", default="10MB,100MB,1000MB")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--big-queries", type=int, default=8, help="questions timed at 1 GB and up")
    ap.add_argument("--rebuild", action="store_true", help="build every index again (timed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--code", action="store_true", help="coding-size vaults (bench/code_vault.py) and code questions")
    ap.add_argument("--build-only", action="store_true", help="time only the build (see the module doc)")
    ap.add_argument("--against", help="with --build-only: another install's python, its builds interleaved")
    ap.add_argument("--rounds", type=int, default=2, help="with --build-only: builds per vault and install")
    a = ap.parse_args()
    work = Path(a.workdir)
    home = Path(a.home) if a.home else work.parent / "index-bench-home"
    if a.build_only:
        build_only(a, work, home)
        return
    rg, search = rg_path(), chrollo_cmd() + ["search"]
    hook_cmd = chrollo_cmd() + ["hook", "UserPromptSubmit", "--harness", "claude-code"]
    tmp = Path(tempfile.mkdtemp(prefix="chrollo-bench-"))
    src, qs, replicate, what = sources_and_queries(tmp)
    if a.code:
        from search import SHARED_EVAL

        qs = [json.loads(line)["query"] for line in open(SHARED_EVAL / "code" / "code_questions_dev.jsonl")]
        what = "code dev questions on bench/code_vault.py's vaults"
    queries = [q for q in random.Random(a.seed).sample(qs, len(qs)) if query_terms(q)][: a.queries]
    print(f"source: {what}; rg {rg}; chrollo {' '.join(search)}; load {os.getloadavg()[0]:.1f}")
    rows, n_hook = [], 0
    for label in a.sizes.split(","):
        vault = work / label
        if not vault.exists():
            if a.code:
                sys.exit(f"{vault}: make it with bench/code_vault.py first")
            vault.mkdir(parents=True)
            grow(vault, src, replicate, parse_size(label))
        vault_bytes = sum(e.stat().st_size for e in os.scandir(vault) if e.name.endswith(".md"))
        env = env_for(home)
        build = None
        got = subprocess.run(chrollo_cmd() + ["index", "--dir", str(vault), "--json"]
                             + (["--rebuild"] if a.rebuild else []), capture_output=True, env=env)
        build = json.loads(got.stdout)
        nq = a.big_queries if parse_size(label) >= 10**9 else a.queries
        t = {"rg": [], "scan": [], "indexed": [], "hook": [], "hook_scan": []}
        rss, differ = 0, []
        run(rg_count(rg, query_terms(queries[0]), vault), env)  # warm the page cache
        for q in queries[:nq]:
            t["rg"].append(run(rg_count(rg, query_terms(q), vault), env)[0])
            s0, _r, out0 = run(search + [q, "--dir", str(vault), "--json"], env_for(home, index=False))
            s1, r1, out1 = run(search + [q, "--dir", str(vault), "--json"], env)
            t["scan"].append(s0)
            t["indexed"].append(s1)
            rss = max(rss, r1)
            if out0 != out1:
                differ.append(q)
            for key, use in (("hook", True), ("hook_scan", False)):
                n_hook += 1
                payload = {"session_id": f"5ca1e000-0000-4000-8000-{n_hook:012d}",
                           "hook_event_name": "UserPromptSubmit", "cwd": str(tmp), "prompt": q,
                           "transcript_path": str(tmp / "none.jsonl")}
                t[key].append(run(hook_cmd, env_for(home, vault, use), json.dumps(payload).encode())[0])
        med = {k: statistics.median(v) for k, v in t.items()}
        os.environ["CHROLLO_HOME"] = str(home)
        from chrollo.index import update as _index

        names = sorted(os.listdir(vault))
        upd = []
        for name in random.Random(1).sample(names, 50):
            t0 = time.perf_counter()
            _index.update(str(vault), [str(vault / name)])
            upd.append(time.perf_counter() - t0)
        row = {"vault": label, "files": build["files"], "queries": nq, "load": round(os.getloadavg()[0], 1),
               "build_mb_per_s": build["mb_per_s"], "build_s": build["seconds"],
               "index/vault": round(build["index_bytes"] / vault_bytes, 3),
               **{f"{k}_p50_ms": p50(v) for k, v in t.items()},
               **{f"{k}_p25_p75": spread(v) for k, v in t.items()},
               "scan/rg": round(med["scan"] / med["rg"], 2), "indexed/rg": round(med["indexed"] / med["rg"], 2),
               "hook/rg": round(med["hook"] / med["rg"], 2), "peak_rss_mb": round(rss / 1024, 1),
               "identical": nq - len(differ), "differ": differ, "update_ms": p50(upd)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| vault | files | build | index/vault | rg --count p50 | search p50 before | search p50 indexed "
          "| indexed/rg | hook p50 (indexed / before) | peak RSS | identical | update/turn | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['vault']} | {r['files']} | {r['build_mb_per_s']} MB/s | {r['index/vault']}× "
              f"| {r['rg_p50_ms']} ms | {r['scan_p50_ms']} ms ({r['scan/rg']}×) | {r['indexed_p50_ms']} ms "
              f"{r['indexed_p25_p75']} | {r['indexed/rg']}× | {r['hook_p50_ms']} / {r['hook_scan_p50_ms']} ms "
              f"| {r['peak_rss_mb']} MB | {r['identical']}/{r['queries']} | {r['update_ms']} ms | {r['load']} |")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
