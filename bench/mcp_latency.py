#!/usr/bin/env python3
"""MCP latency: connect (spawn `chrollo mcp`, handshake) + first read_memory call, and warm calls.

    python bench/mcp_latency.py [--runs 5] [--dir PATH]

Uses the real MCP SDK client over stdio against the bundled demo vault (or --dir).
Not a test: it prints figures.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from chrollo.demo import copy_sample  # noqa: E402


async def once(cmd: list, vault: str, warm: int) -> tuple[float, float, list]:
    t0 = time.perf_counter()
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", "--dir", vault])
    async with Client(params) as client:
        t1 = time.perf_counter()
        r = await client.call_tool("read_memory", {"query": "flaky test race", "limit": 5})
        t2 = time.perf_counter()
        assert not r.is_error, r.content
        warms = []
        for q in ["redis rate limit", "rollback staging deploy", "memory leak worker"] * warm:
            a = time.perf_counter()
            await client.call_tool("read_memory", {"query": q})
            warms.append(time.perf_counter() - a)
    return t1 - t0, t2 - t0, warms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", help="memory folder (default: a copy of the demo vault)")
    a = ap.parse_args()
    exe = Path(sys.executable).with_name("chrollo")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "chrollo"]
    vault = a.dir or str(copy_sample(Path(tempfile.mkdtemp(prefix="chrollo-bench-mcp-"))))
    conn, first, warm = [], [], []
    for _ in range(a.runs):
        c, f, w = asyncio.run(once(cmd, vault, 2))
        conn.append(c)
        first.append(f)
        warm += w
    ms = lambda xs: f"{statistics.median(xs) * 1000:.0f} ms"  # noqa: E731
    print(f"server: {' '.join(cmd)} mcp --dir {vault}")
    print(f"connect (spawn + handshake), median of {a.runs}: {ms(conn)}")
    print(f"connect + first read_memory, median of {a.runs}: {ms(first)}")
    print(f"warm read_memory call, median of {len(warm)}: {ms(warm)}")


if __name__ == "__main__":
    main()
