#!/usr/bin/env python3
"""MCP: how soon `chrollo mcp` answers, and how many characters a read_memory answer costs.

    python bench/mcp_latency.py [--runs 20] [--dir PATH] [--queries FILE]

1. Fresh processes: spawn `chrollo mcp`, send `initialize`, time the reply from process start
   (p50/p90 of --runs), then `tools/list` and a real `tools/call read_memory` on the same
   process (its text must be the compact hit format, without structuredContent). In the same
   run, for scale: a bare `python -c pass` start, `rg --version`, and `import mcp` (the SDK
   the server used before; skipped if it is not installed).
2. Characters per query on one vault: the `--json` object (what harnesses handed the model as
   structuredContent before), the terminal text (absolute paths, scores) and the compact text
   the tool returns now.

Raw JSON-RPC over pipes, no SDK: the figures are the server's, not a client library's.
Not a test: it prints figures.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chrollo.demo import copy_sample  # noqa: E402

QUERIES = ["flaky test race", "redis rate limit", "rollback staging deploy", "memory leak worker",
           "settle_refund ledger write", "why did we pin the ripgrep wheel", "nginx reverse proxy port",
           "database migration failed"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def _send(p, msg) -> dict:
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def session(cmd: list, query: str) -> dict:
    """One fresh server: ms to initialize, to tools/list, to the first read_memory answer."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    init = _send(p, INIT)
    t_init = time.perf_counter()
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    tools = _send(p, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    t_list = time.perf_counter()
    call = _send(p, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "read_memory", "arguments": {"query": query, "limit": 10}}})
    t_call = time.perf_counter()
    p.stdin.close()
    p.wait()
    assert init["result"]["protocolVersion"] == "2025-06-18", init
    assert [t["name"] for t in tools["result"]["tools"]] == ["read_memory", "read_memory_file"]
    res = call["result"]
    assert not res["isError"] and "structuredContent" not in res, res
    text = res["content"][0]["text"]
    assert text.startswith("--- ") and "→" in text, text[:200]
    return {"init": t_init - t0, "list": t_list - t0, "call": t_call - t_list, "text": text}


def timed(cmd: list) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--dir", help="memory folder (default: a copy of the demo vault)")
    ap.add_argument("--queries", help="a file of queries, one a line (default: a built-in set)")
    a = ap.parse_args()
    exe = Path(sys.executable).with_name("chrollo")
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "chrollo"]
    vault = a.dir or str(copy_sample(Path(tempfile.mkdtemp(prefix="chrollo-bench-mcp-"))))
    queries = Path(a.queries).read_text().split("\n") if a.queries else QUERIES
    queries = [q.strip() for q in queries if q.strip()]
    cmd = [*base, "mcp", "--dir", vault]

    from chrollo.rg import rg_path

    runs = [session(cmd, queries[0]) for _ in range(a.runs)]
    python = [timed([sys.executable, "-c", "pass"]) for _ in range(a.runs)]
    rg = [timed([rg_path(), "--version"]) for _ in range(a.runs)]
    try:
        import importlib.util

        has_sdk = importlib.util.find_spec("mcp") is not None
    except ValueError:
        has_sdk = False
    sdk = [timed([sys.executable, "-c", "import mcp.server.mcpserver"]) for _ in range(max(3, a.runs // 4))] \
        if has_sdk else []

    def ms(xs, q=0.5):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000

    init = [r["init"] for r in runs]
    print(f"server: {' '.join(cmd)}")
    print(f"fresh-process initialize, {a.runs} runs: p50 {ms(init):.0f} ms · p90 {ms(init, .9):.0f} ms "
          f"(target ≤ 150 ms)")
    print(f"  + tools/list answered at p50 {ms([r['list'] for r in runs]):.0f} ms from start")
    print(f"  first tools/call read_memory (loads the engine): p50 {ms([r['call'] for r in runs]):.0f} ms")
    print(f"same run: python -c pass p50 {ms(python):.0f} ms · rg --version p50 {ms(rg):.0f} ms "
          f"→ initialize = {ms(init) / ms(rg):.1f}× bare rg, {ms(init) / ms(python):.2f}× bare python")
    if sdk:
        print(f"          import mcp.server (the SDK, before) p50 {ms(sdk):.0f} ms "
              f"= {ms(sdk) / ms(init):.1f}× our whole initialize")
    print("sample read_memory answer (first 6 lines):")
    for line in runs[0]["text"].splitlines()[:6]:
        print("    " + line)

    # ---------------------------------------------------------------- characters per query
    from chrollo.output import compact_search, search_lines
    from chrollo.retrieval import search

    rows = []
    for q in queries:
        res = search(q, limit=10, dir=vault)
        if not res.hits:
            continue
        js = len(json.dumps(res.to_json(), ensure_ascii=False)) + 1
        human = len("".join(t + "\n" for _s, t in search_lines(res)))
        rows.append((q, len(res.hits), js, human, len(compact_search(res))))
    print(f"\nchars per query on {vault} ({len(rows)} queries with hits, limit 10):")
    print(f"{'query':<36}{'hits':>5}{'--json':>9}{'text':>8}{'compact':>9}{'ratio':>7}")
    for q, n, js, human, comp in rows:
        print(f"{q[:35]:<36}{n:>5}{js:>9}{human:>8}{comp:>9}{comp / js:>7.2f}")
    if rows:
        tj, th, tc = (sum(r[i] for r in rows) for i in (2, 3, 4))
        print(f"{'mean per query':<41}{tj / len(rows):>9.0f}{th / len(rows):>8.0f}{tc / len(rows):>9.0f}"
              f"{tc / tj:>7.2f}   (target ≤ 0.60 of --json)")


if __name__ == "__main__":
    main()
