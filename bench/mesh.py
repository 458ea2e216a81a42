#!/usr/bin/env python3
"""Mesh sync throughput (figures for closing notes): two peers on loopback, real processes.

    python bench/mesh.py [--mb 100] [--files 1000]

Node B's vault gets --files session files totalling --mb megabytes (realistic turns, a few
secrets sprinkled in so redaction does work); B runs `chrollo mesh serve`; A runs
`chrollo mesh sync --all` twice: the first pull, then a re-sync with nothing new.
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
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="chrollo-bench-mesh-"))
    cmd = chrollo_cmd()
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    envs = {n: dict(env0, CHROLLO_HOME=str(work / n)) for n in ("a", "b")}
    server = None
    try:
        key = subprocess.run(cmd + ["mesh", "init", "--name", "a"], env=envs["a"], capture_output=True,
                             text=True, check=True).stdout.strip()
        subprocess.run(cmd + ["mesh", "init", "--name", "b", "--join", key], env=envs["b"], check=True,
                       capture_output=True)
        vault = work / "b" / "memories"
        vault.mkdir(parents=True)
        rnd = random.Random(0)
        each = int(a.mb * 1e6 / a.files)
        total = 0
        for i in range(a.files):
            text = session(i, each, rnd)
            (vault / f"2026-10-01_{i // 60 % 24:02d}{i % 60:02d}00_b{i:07d}.md").write_text(text)
            total += len(text.encode())
        server = subprocess.Popen(cmd + ["mesh", "serve", "--port", "0"], env=envs["b"],
                                  stderr=subprocess.PIPE, text=True)
        port = int(server.stderr.readline().rsplit(":", 1)[1])
        subprocess.run(cmd + ["mesh", "peers", "add", f"127.0.0.1:{port}"], env=envs["a"], check=True,
                       capture_output=True)
        rows = []
        for label in ("first sync", "re-sync (nothing new)"):
            t0 = time.perf_counter()
            p = subprocess.run(cmd + ["mesh", "sync", "--all", "--json"], env=envs["a"], capture_output=True, text=True)
            dt = time.perf_counter() - t0
            r = json.loads(p.stdout)["peers"][0]
            rows.append((label, dt, r))
        print(f"{a.files} files, {total / 1e6:.1f} MB in B's vault; {' '.join(cmd)}")
        print("\n| run | seconds | files transferred | MB transferred | MB/s of vault |\n|---|---|---|---|---|")
        for label, dt, r in rows:
            print(f"| {label} | {dt:.2f} | {r['downloaded']} | {r['bytes'] / 1e6:.1f} | {total / 1e6 / dt:.1f} |")
        got = work / "a" / "memories" / "peers" / "b"
        print(f"\nA holds {len(list(got.glob('*.md')))} files from b; errors: {rows[0][2]['errors'][:3]}")
    finally:
        if server:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
