#!/usr/bin/env python3
"""What the hardening of issue 15 costs, and what the hostile inputs cost now (closing-note figures).

    python bench/hardening.py [--runs 7]

sanitize   import time of chrollo.sanitize (it is on the recall path) and the time to
           clean a full recall block (6,000 characters, 24-line excerpts, some escapes).
query      `chrollo search` with a 100 KB query (cut to 100 words, pattern sent by -f) next
           to bare `rg --count` with one alternation of the same 100 words, same vault.
sparse     a Claude transcript with a 10 GB hole after its last turn: time and bytes read
           by one capture pass (the watermark keeps it from re-reading the hole).
gemini     the Gemini AfterAgent hook on a 1 GiB (sparse) whole-JSON chat: time, peak RSS.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def median_time(fn, runs: int) -> float:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def env_for(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    env.update(CHROLLO_HOME=str(home), PYTHONPATH=str(ROOT))
    return env


def bench_sanitize(runs: int) -> None:
    import py_compile

    py_compile.compile(str(ROOT / "chrollo" / "sanitize.py"))  # (PYTHONDONTWRITEBYTECODE may be set)
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", "import chrollo.sanitize"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    own = [ln for ln in p.stderr.splitlines() if ln.rstrip().endswith("chrollo.sanitize")]
    us = int(own[0].split("|")[1]) if own else -1
    from chrollo.sanitize import clean

    rnd = random.Random(1)
    lines = ["> " + " ".join("".join(rnd.choice(string.ascii_lowercase) for _ in range(6)) for _ in range(35))
             for _ in range(24)]
    lines[3] += "\x1b]52;c;ZWNobw==\x07"
    block = lines  # ~6,000 characters, like a medium recall block
    t = median_time(lambda: [clean(x) for x in block], runs * 20)
    print(f"sanitize   import {us / 1000:.2f} ms (self) · clean {sum(map(len, block))} chars "
          f"in {t * 1e6:.0f} µs")


def bench_query(runs: int, tmp: Path) -> None:
    from chrollo.rg import rg_path, words_regex
    from chrollo.terms import query_terms
    from tests.conftest import write_session

    vault = tmp / "v"
    rnd = random.Random(2)
    vocab = ["".join(rnd.choice(string.ascii_lowercase) for _ in range(rnd.randint(4, 9))) for _ in range(5000)]
    for i in range(400):
        write_session(vault, f"s{i:07d}-x", f"2026-0{1 + i % 9}-1{i % 10}T10:00:00",
                      [("user", "10:00:00", " ".join(rnd.choices(vocab, k=60))),
                       ("agent", "10:00:05", [" ".join(rnd.choices(vocab, k=120))])])
    query = " ".join(rnd.choices(vocab, k=15000))[:100_000]
    terms = query_terms(query)[:100]
    env = env_for(tmp / "home")
    cmd = [sys.executable, "-m", "chrollo", "search", query, "--dir", str(vault), "--json", "--no-expand"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr[-500:]
    t_chrollo = median_time(lambda: subprocess.run(cmd, capture_output=True, env=env), runs)
    rg = [rg_path(), "--no-config", "--count", "-i", "-e", words_regex(terms), str(vault)]
    t_rg = median_time(lambda: subprocess.run(rg, capture_output=True), runs)
    print(f"query      100 KB query over {sum(f.stat().st_size for f in vault.glob('*.md')) / 1e6:.1f} MB: "
          f"chrollo {t_chrollo * 1000:.0f} ms · bare rg --count {t_rg * 1000:.0f} ms · ratio {t_chrollo / t_rg:.1f}×")


def _rchar() -> int:
    with open("/proc/self/io") as fh:
        return int(next(ln for ln in fh if ln.startswith("rchar:")).split()[1])


def bench_sparse(tmp: Path) -> None:
    os.environ["CHROLLO_HOME"] = str(tmp / "home-sparse")
    from chrollo.capture import Capture
    from chrollo.harness import claude_code

    path = tmp / "big.jsonl"
    with open(path, "wb") as fh:
        for i, (kind, text) in enumerate([("user", "why does the relay drop events"), ("assistant", "The queue is full.")]):
            fh.write((json.dumps({"type": kind, "uuid": f"u{i}", "sessionId": "big-x",
                                  "timestamp": "2026-10-01T10:00:00Z",
                                  "message": {"role": kind, "content": text}}) + "\n").encode())
        fh.truncate(10 << 30)
    for n in (1, 2):
        with Capture("big-x", "claude-code", "/nonexistent") as cap:
            before, t0 = _rchar(), time.perf_counter()
            units = cap.read_transcript(claude_code, str(path))
            dt, read = time.perf_counter() - t0, _rchar() - before
            cap.run(units)
        print(f"sparse     capture {n} of a 10 GB sparse transcript: {dt * 1000:.0f} ms, {read >> 20} MiB read")


def bench_gemini(tmp: Path) -> None:
    chat = tmp / "session-big.json"
    with open(chat, "wb") as fh:
        fh.write(b'{"sessionId": "gem-x", "messages": [')
        fh.truncate(1 << 30)
    payload = {"session_id": "gem-x", "transcript_path": str(chat), "cwd": "/nonexistent",
               "hook_event_name": "AfterAgent", "prompt": "summarise the relay incident",
               "prompt_response": "The queue is bigger now."}
    probe = ("import resource, sys\nfrom chrollo.hook import main\nmain(['AfterAgent', '--harness', 'gemini'])\n"
             "sys.stderr.write('maxrss=%d' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", probe], input=json.dumps(payload).encode(), capture_output=True,
                       env=env_for(tmp / "home-gemini"))
    dt = time.perf_counter() - t0
    rss = int(p.stderr.decode().rsplit("maxrss=", 1)[1]) / 1024
    print(f"gemini     AfterAgent on a 1 GiB JSON chat: {dt * 1000:.0f} ms, peak RSS {rss:.0f} MiB (refused, logged)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="chrollo-bench-hardening-") as tmp:
        tmp = Path(tmp)
        bench_sanitize(a.runs)
        bench_query(a.runs, tmp)
        bench_sparse(tmp)
        bench_gemini(tmp)


if __name__ == "__main__":
    main()
