#!/usr/bin/env python3
"""A vault grown behind its index (issue 47 item 4): indexed at size A, then grown to size B
by another process (a sync tool, a restored backup), searched in every index state.

    python bench/grown.py --workdir DIR [--from 10MB] [--to 100MB] [--queries 15] [--code]

The vault (``DIR/grown-A-B``: LoCoMo dev conversations replicated as bench/index.py's, or with
``--code`` bench/code_vault.py's coding sessions from ``--code-source``) is made once: A bytes,
indexed by `chrollo index` in ``DIR/grown-home``, that index kept aside, then B bytes written by
a process that is not chrollo. Each state starts from that kept index:

  grown        the index of A, a build held off (the bench holds the ``.building`` lock):
               every search reads the vault as it is without a catch-up
  first        the first search of the grown vault, the lock free: it leaves a catch-up build
  catching_up  the searches while that build runs (detached, niced)
  caught_up    once it is done
  deleted      the index deleted (the first search starts a full build, running meanwhile)
  sigint       a background build killed by SIGINT mid-way (the first search starts another)
  sigkill      the same killed by SIGKILL

Per query, in turn, with a warm page cache: bare `rg --count` (bench/deadline.py's), `chrollo
search --json` with the index (its stdout compared with CHROLLO_INDEX=0's, also timed), and the
recall hook (`chrollo hook UserPromptSubmit`, from process start to its reply; deadline 0.4 s).
Ratios are to rg --count in the same state (the machine is shared: ratios drift less).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deadline import p50, p90, rg_count  # noqa: E402
from index import env_for, run  # noqa: E402
from search import chrollo_cmd, grow, parse_size, sources_and_queries  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from chrollo.rg import rg_path  # noqa: E402
from chrollo.terms import query_terms  # noqa: E402

_GROW = """\
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
import json
from search import grow, sources_and_queries
src, _qs, replicate, _what = sources_and_queries(Path(sys.argv[2]))
print(json.dumps(grow(Path(sys.argv[3]), src, replicate, int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))))
"""

_CODE_GROW = """\
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from code_vault import copy_of, sources
out, target = Path(sys.argv[3]), int(sys.argv[4])
out.mkdir(parents=True, exist_ok=True)
src = sources(Path(sys.argv[2]))
size = r = 0
while size < target:
    for name, text in src:
        fname, body = copy_of(name, text, r)
        data = body.encode()
        if not (out / fname).exists():  # (what was there when it was indexed stays as it was)
            (out / fname).write_bytes(data)
        size += len(data)
        if size >= target:
            break
    r += 1
"""

_HOLD = """\
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""

_BUILD = "import sys; from chrollo.index.build import build_alone; build_alone(sys.argv[1])"


def make_vault(a, work: Path, home: Path, tmp: Path) -> tuple[Path, Path]:
    """(the vault grown to B, the folder holding its index as it was at A)."""
    here = str(Path(__file__).resolve().parent)
    vault = work / f"grown-{a.from_}-{a.to}{'-code' if a.code else ''}"
    kept = work / f"grown-index-{a.from_}-{a.to}{'-code' if a.code else ''}"
    if vault.exists() and kept.exists():
        return vault, kept
    shutil.rmtree(vault, ignore_errors=True)
    vault.mkdir(parents=True)
    if a.code:
        subprocess.run([sys.executable, "-c", _CODE_GROW, here, a.code_source, str(vault),
                        str(parse_size(a.from_))], check=True, stdout=subprocess.DEVNULL)
    else:
        src, _qs, replicate, _what = sources_and_queries(tmp)
        size, r = grow(vault, src, replicate, parse_size(a.from_))
    got = subprocess.run(chrollo_cmd() + ["index", "--dir", str(vault), "--json"], capture_output=True,
                         env=env_for(home), check=True)
    print("indexed at", a.from_, got.stdout.decode().strip(), flush=True)
    kept.mkdir(exist_ok=True)
    idx = Path(json.loads(got.stdout)["index"])
    for p in idx.parent.glob(idx.name + "*"):
        shutil.copy2(p, kept / p.name)
    # (another process writes the rest: plain files, chrollo not told)
    if a.code:
        subprocess.run([sys.executable, "-c", _CODE_GROW, here, a.code_source, str(vault),
                        str(parse_size(a.to))], check=True, stdout=subprocess.DEVNULL)
    else:
        subprocess.run([sys.executable, "-c", _GROW, here, str(tmp / "g"), str(vault), str(parse_size(a.to)),
                        str(size), str(r)], check=True, stdout=subprocess.DEVNULL)
    return vault, kept


def index_of(home: Path, vault: Path) -> Path:
    env = env_for(home)
    got = subprocess.run([sys.executable, "-c", "import sys; from chrollo.index.store import db_path; "
                          "print(db_path(sys.argv[1]))", str(vault)], capture_output=True, env=env, check=True)
    return Path(got.stdout.decode().strip())


def restore(idx: Path, kept: Path, home: Path, vault: Path) -> None:
    """The index as it was at A (and nothing of a later build): a build still under way from the
    state before would otherwise put its whole index over the restored one."""
    wait_built(home, vault, limit=3600)
    if building(home, vault):
        sys.exit("a build of the grown vault still runs after an hour: the next state would not be what it says")
    for p in idx.parent.glob(idx.name + "*"):
        if not p.name.endswith(".building"):
            p.unlink()
    for p in kept.iterdir():
        shutil.copy2(p, idx.parent / p.name)


def indexed(idx: Path) -> int:
    """How many files the index at ``idx`` has rows for (what a state starts from)."""
    import sqlite3

    con = sqlite3.connect(f"file:{idx}?mode=ro", uri=True)
    try:
        return con.execute("SELECT count(*) FROM files").fetchone()[0]
    except sqlite3.Error:
        return -1
    finally:
        con.close()


def building(home: Path, vault: Path) -> bool:
    got = subprocess.run([sys.executable, "-c", "import sys; from chrollo.index.build import building; "
                          "print(int(building(sys.argv[1])))", str(vault)], capture_output=True,
                         env=env_for(home), check=True)
    return got.stdout.strip() == b"1"


def wait_built(home: Path, vault: Path, limit: float = 900) -> float:
    t0 = time.monotonic()
    time.sleep(0.5)
    while building(home, vault) and time.monotonic() - t0 < limit:
        time.sleep(0.5)
    return round(time.monotonic() - t0, 1)


def killed_build(home: Path, vault: Path, sig: int, after: float) -> None:
    """A background build (build_alone, niced as a search's is) killed by ``sig`` mid-way."""
    # (SIGINT back to its default in the build: a bench started with `&` or nohup ignores it,
    # and a build that inherited that went on to index every file)
    proc = subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", _BUILD, str(vault)], env=env_for(home),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(after)
    proc.send_signal(sig)
    proc.wait()


def differs(out: bytes, want: bytes) -> str:
    """What tells two ``search --json`` outputs apart: the top-level keys whose values differ
    (the hits: how many, and from which rank on)."""
    try:
        a, b = json.loads(out), json.loads(want)
    except ValueError:
        return "not JSON"
    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    ha, hb = a.get("hits") or [], b.get("hits") or []
    if "hits" in keys:
        at = next((i for i, (x, y) in enumerate(zip(ha, hb)) if x != y), min(len(ha), len(hb)))
        keys[keys.index("hits")] = f"hits ({len(ha)} vs {len(hb)}, from rank {at + 1})"
    if "error" in keys:
        keys[keys.index("error")] = f"error ({json.dumps(a.get('error') or b.get('error'))[:300]})"
    return " ".join(keys)


class Timer:
    def __init__(self, a, home: Path, vault: Path, queries: list, tmp: Path):
        self.a, self.home, self.vault, self.queries, self.tmp = a, home, vault, queries, tmp
        self.rg, self.search = rg_path(), chrollo_cmd() + ["search"]
        self.hook = chrollo_cmd() + ["hook", "UserPromptSubmit", "--harness", "claude-code"]
        self.n_hook = 0

    def one(self, q: str) -> dict:
        home, vault = self.home, self.vault
        t_rg = run(rg_count(self.rg, query_terms(q), vault), env_for(home))[0]
        t_s, _r, out = run(self.search + [q, "--dir", str(vault), "--json"], env_for(home))
        t_scan, _r, want = run(self.search + [q, "--dir", str(vault), "--json"], env_for(home, index=False))
        self.n_hook += 1
        payload = {"session_id": f"5ca1e000-0000-4000-8000-{self.n_hook:012d}", "hook_event_name": "UserPromptSubmit",
                   "cwd": str(self.tmp), "prompt": q, "transcript_path": str(self.tmp / "none.jsonl")}
        t_hook = run(self.hook, env_for(home, vault), json.dumps(payload).encode())[0]
        return {"rg": t_rg, "search": t_s, "scan": t_scan, "hook": t_hook, "same": out == want,
                "differs": "" if out == want else differs(out, want)}

    def state(self, name: str, queries: list, note: str = "") -> dict:
        got = [self.one(q) for q in queries]
        ratio = [g["search"] / g["rg"] for g in got]
        row = {"state": name, "queries": len(got), "load": round(os.getloadavg()[0], 1),
               "rg_p50_ms": p50([g["rg"] for g in got]), "search_p50_ms": p50([g["search"] for g in got]),
               "search/rg_p50": round(statistics.median(ratio), 2), "search/rg_max": round(max(ratio), 2),
               "scan/rg_p50": round(statistics.median(g["scan"] / g["rg"] for g in got), 2),
               "scan/rg_max": round(max(g["scan"] / g["rg"] for g in got), 2),
               "hook_p50_ms": p50([g["hook"] for g in got]), "hook_p90_ms": p90([g["hook"] for g in got]),
               "identical": sum(g["same"] for g in got), "note": note}
        why = sorted({g["differs"] for g in got if g["differs"]})
        if why:
            row["note"] += "; differing: " + ", ".join(why)
        print(json.dumps(row), flush=True)
        return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--from", dest="from_", default="10MB")
    ap.add_argument("--to", default="100MB")
    ap.add_argument("--queries", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kill-after", type=float, default=4.0, help="seconds a killed build runs first")
    ap.add_argument("--code", action="store_true", help="coding sessions (bench/code_vault.py)")
    ap.add_argument("--code-source", help="with --code: code_to_md.py's folder of vaults")
    ap.add_argument("--states", default="grown,first,catching_up,caught_up,deleted,sigint,sigkill")
    a = ap.parse_args()
    if a.code and not a.code_source:
        ap.error("--code needs --code-source (the folder of ../shared/eval/code/code_to_md.py's vaults)")
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    home = work / "grown-home"
    tmp = Path(tempfile.mkdtemp(prefix="chrollo-grown-"))
    _src, qs, _rep, what = sources_and_queries(tmp)
    if a.code:
        from search import SHARED_EVAL

        qs = [json.loads(line)["query"] for line in open(SHARED_EVAL / "code" / "code_questions_dev.jsonl")]
        what = "code dev questions on bench/code_vault.py's sessions"
    queries = [q for q in random.Random(a.seed).sample(qs, len(qs)) if query_terms(q)][: a.queries]
    vault, kept = make_vault(a, work, home, tmp)
    idx = index_of(home, vault)
    files = sum(1 for _ in os.scandir(vault))
    print(f"source: {what}; {vault}: {files} files; index kept at {a.from_}; chrollo {' '.join(chrollo_cmd())}; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    t = Timer(a, home, vault, queries, tmp)
    run(rg_count(t.rg, query_terms(queries[0]), vault), env_for(home))  # warm the page cache
    want = a.states.split(",")
    rows = []
    if "grown" in want:
        restore(idx, kept, home, vault)
        hold = subprocess.Popen([sys.executable, "-c", _HOLD, str(idx) + ".building"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)
        assert hold.stdout.readline().strip() == b"held"
        try:
            rows.append(t.state("grown", queries, "no catch-up: the bench holds the build lock"))
        finally:
            hold.stdin.close()
            hold.wait()
    if {"first", "catching_up", "caught_up"} & set(want):
        restore(idx, kept, home, vault)
        rows.append(t.state("first", queries[:1], "the search that leaves the catch-up"))
        rows.append(t.state("catching_up", queries[1:], f"build under way at the start: {building(home, vault)}"))
        waited = wait_built(home, vault)
        rows.append(t.state("caught_up", queries, f"waited {waited} s more for the build"))
    if "deleted" in want:
        for p in idx.parent.glob(idx.name + "*"):
            p.unlink()
        rows.append(t.state("deleted", queries, "the first search starts a full build"))
        rows[-1]["note"] += f"; still building at the end: {building(home, vault)}"
        wait_built(home, vault)
    for sig, name in ((signal.SIGINT, "sigint"), (signal.SIGKILL, "sigkill")):
        if name not in want:
            continue
        restore(idx, kept, home, vault)
        at_a = indexed(idx)
        killed_build(home, vault, sig, a.kill_after)
        rows.append(t.state(name, queries, f"build killed after {a.kill_after} s; lock free: "
                                           f"{not building(home, vault)} before the first search; files indexed "
                                           f"{at_a} restored, {indexed(idx)} after the kill"))
        wait_built(home, vault)
    print(f"\n{a.from_} indexed, grown to {a.to} by another process ({files} files); "
          f"{len(queries)} queries; ratios to rg --count in the same state\n")
    print("| state | search/rg p50 | search/rg max | no index/rg p50, max | rg p50 | search p50 | hook p50 "
          "| hook p90 | identical | load | note |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['state']} | {r['search/rg_p50']}× | {r['search/rg_max']}× | {r['scan/rg_p50']}×, {r['scan/rg_max']}× "
              f"| {r['rg_p50_ms']} ms "
              f"| {r['search_p50_ms']} ms | {r['hook_p50_ms']} ms | {r['hook_p90_ms']} ms "
              f"| {r['identical']}/{r['queries']} | {r['load']} | {r['note']} |")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
