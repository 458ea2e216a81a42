#!/usr/bin/env python3
"""Mesh sync throughput (figures for closing notes): two paired nodes, real processes.

    python bench/mesh.py [--mb 100] [--files 1000] [--transports lan,folder,git]

Node B's vault gets --files session files totalling --mb megabytes (realistic turns, a few
secrets sprinkled in so redaction does work). Per transport, A takes everything (first
sync), then re-syncs with nothing new. LAN: B runs `chrollo mesh serve` (TLS 1.3), A runs
`sync --all`. Folder / git: B publishes (`sync --folder|--git`, timed separately), A takes.
Baseline: `cp -r` of the vault in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import chrollo_cmd  # noqa: E402

WORDS = ("deploy rollback migration index cache request retry timeout worker queue schema release "
         "pipeline container cluster ingress gateway latency metric alert budget config branch").split()


def session(i: int, size: int, rnd: random.Random) -> str:
    head = (f'---\nsession_id: "bench{i:04d}-{rnd.getrandbits(64):016x}"\ndate: "2026-10-01"\n'
            f'harness: "claude-code"\ncwd: "/home/user/p{i % 17}"\nchrollo_format: 1\n---\n\n')
    out, n = [head], len(head)
    t = 0
    while n < size:
        line = " ".join(rnd.choice(WORDS) for _ in range(14))
        turn = (f"[2026-10-01 10:{t // 60 % 60:02d}:{t % 60:02d}] [User]\n{line}?\n\n\n"
                f"[2026-10-01 10:{t // 60 % 60:02d}:{t % 60:02d}] [Agent]\n> {line}.\n> <tool>$ make {rnd.choice(WORDS)}</tool>\n"
                + (f"> password={rnd.getrandbits(48):x}\n" if t % 40 == 0 else "") + "\n\n")
        out.append(turn)
        n += len(turn)
        t += 1
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--transports", default="lan,folder,git")
    a = ap.parse_args()
    ap_transports = [t for t in a.transports.split(",") if t]
    work = Path(tempfile.mkdtemp(prefix="chrollo-bench-mesh-"))
    cmd = chrollo_cmd()
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    envs = {n: dict(env0, CHROLLO_HOME=str(work / n)) for n in ("a", "b")}
    server = None

    def run(node, *args, check=True):
        p = subprocess.run(cmd + list(args), env=envs[node], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise SystemExit(f"{node}: {' '.join(args)} failed: {p.stdout[-500:]} {p.stderr[-500:]}")
        return p

    def timed(node, *args):
        t0 = time.perf_counter()
        p = run(node, *args, "--json")
        return time.perf_counter() - t0, json.loads(p.stdout)
    try:
        ids = {n: run(n, "mesh", "init", "--name", n).stdout.strip() for n in ("a", "b")}
        vault = work / "b" / "memories"
        vault.mkdir(parents=True)
        rnd = random.Random(0)
        each = int(a.mb * 1e6 / a.files)
        total = 0
        for i in range(a.files):
            text = session(i, each, rnd)
            (vault / f"2026-10-01_{i // 60 % 24:02d}{i % 60:02d}00_b{i:07d}.md").write_text(text)
            total += len(text.encode())
        t0 = time.perf_counter()
        shutil.copytree(vault, work / "cp-baseline")
        cp = time.perf_counter() - t0
        run("b", "mesh", "peers", "add", "--id", ids["a"], "--name", "a")
        rows = []
        for tr in ap_transports:
            for d in ("peers", "state"):
                shutil.rmtree(work / "a" / ("memories/peers" if d == "peers" else "state/mesh/peers"), ignore_errors=True)
            if tr == "lan":
                server = subprocess.Popen(cmd + ["mesh", "serve", "--port", "0"], env=envs["b"],
                                          stderr=subprocess.PIPE, text=True)
                port = int(server.stderr.readline().split("127.0.0.1:")[1].split()[0])
                run("a", "mesh", "peers", "add", f"127.0.0.1:{port}", "--id", ids["b"], "--name", "b")
                where = ["--all"]
            else:
                run("a", "mesh", "peers", "add", "--id", ids["b"], "--name", "b")
                if tr == "folder":
                    (work / "shared").mkdir(exist_ok=True)
                    where = ["--folder", str(work / "shared")]
                else:
                    subprocess.run(["git", "init", "-q", "--bare", str(work / "remote.git")], check=True)
                    where = ["--git", str(work / "remote.git")]
                run("a", "mesh", "sync", *where)  # a publishes its certificate
                dt, _ = timed("b", "mesh", "sync", *where)
                rows.append((f"{tr}: B publishes (redact, seal, write)", dt, None))
            for label in ("first sync", "re-sync (nothing new)"):
                dt, out = timed("a", "mesh", "sync", *where)
                rows.append((f"{tr}: A {label}", dt, out["peers"][0]))
            if server:
                server.kill()
                server.wait()
                server = None
        print(f"{a.files} files, {total / 1e6:.1f} MB in B's vault; {' '.join(cmd)}; cp -r baseline {cp:.2f} s")
        print("\n| run | seconds | × cp -r | files taken | MB taken | MB/s of vault |\n|---|---|---|---|---|---|")
        for label, dt, r in rows:
            took = f"{r['downloaded']} | {r['bytes'] / 1e6:.1f}" if r else "- | -"
            print(f"| {label} | {dt:.2f} | {dt / cp:.1f} | {took} | {total / 1e6 / dt:.1f} |")
        got = work / "a" / "memories" / "peers" / "b"
        print(f"\nA holds {len(list(got.glob('*.md')))} files from b")
    finally:
        if server:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
