#!/usr/bin/env python3
"""Hook latency (figures for closing notes): recall at 10/100 MB, capture on a long transcript.

    python bench/hooks.py [--sizes 10MB,100MB] [--queries 30] [--turns 2000] [--keep DIR]

recall   the whole `chrollo hook UserPromptSubmit --harness claude-code` process, from start
         to reply, with a LoCoMo question as the prompt, over vaults built like
         bench/search.py's; each query under a fresh session id (so dedup never short-cuts).
capture  a synthetic Claude Code transcript of N turns (tool calls, thinking, progress
         records, like the real ones): the first Stop (backfilling all N turns), then 20
         rounds of "append one turn, run Stop" — the per-turn cost with the watermark.
imports  `python -X importtime` of the recall hook: the modules that cost the most.

    python bench/hooks.py --receipts DIR [--queries 30] [--rounds 3]

receipts the recall hook with the recall log on and off, interleaved prompt by prompt (the
         order alternating), over a copy of the vault DIR (CHROLLO_MEMORIES_DIR: the hook
         captures each prompt into it, so DIR itself is never written), with bare
         `rg -c -i -w` of each prompt's longest word over the copy in the same run for the ratio.
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
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import chrollo_cmd, grow, parse_size, sources_and_queries  # noqa: E402


def run_hook(cmd: list, payload: dict, env: dict) -> tuple[float, bytes]:
    dt, _cpu, out = run_hook_cpu(cmd, payload, env)
    return dt, out


def run_hook_cpu(cmd: list, payload: dict, env: dict) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds — user + system, of the hook and the processes it waited
    for, rg included —, stdout) of one hook process. On a shared machine the CPU time holds
    still where the wall time follows the load."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=err, env=env)
        p.stdin.write(json.dumps(payload).encode())
        p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)  # (not p.wait(): its rusage is the CPU time)
        dt = time.perf_counter() - t0
        p.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            raise RuntimeError(f"hook exited {code}: {err.read()[-300:]!r}")
        out.seek(0)
        return dt, ru.ru_utime + ru.ru_stime, out.read()


def pct(xs: list, q: float) -> float:
    xs = sorted(xs)
    return xs[int(q * (len(xs) - 1))]


def claude_turn(i: int, sid: str, t: float) -> list:
    """The records of one Claude Code turn: prompt, thinking, text, a tool call and its result."""
    ts = lambda k: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t + k)) + ".000Z"  # noqa: E731
    mid = f"msg_{uuid.uuid4().hex[:20]}"
    base = {"sessionId": sid, "cwd": "/home/user/project", "isSidechain": False}
    return [
        {**base, "type": "user", "uuid": str(uuid.uuid4()), "timestamp": ts(0),
         "message": {"role": "user", "content": f"step {i}: refactor the parser module and rerun the tests"}},
        {**base, "type": "progress", "uuid": str(uuid.uuid4()), "timestamp": ts(1), "data": {"x": "y" * 200}},
        {**base, "type": "assistant", "uuid": str(uuid.uuid4()), "timestamp": ts(2),
         "message": {"id": mid, "role": "assistant", "content": [{"type": "thinking", "thinking": "hmm " * 80}]}},
        {**base, "type": "assistant", "uuid": str(uuid.uuid4()), "timestamp": ts(3),
         "message": {"id": mid, "role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                                                 "input": {"command": f"pytest -q tests/test_{i}.py"}}]}},
        {**base, "type": "user", "uuid": str(uuid.uuid4()), "timestamp": ts(4),
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok\n" * 200}]}},
        {**base, "type": "assistant", "uuid": str(uuid.uuid4()), "timestamp": ts(5),
         "message": {"id": mid + "b", "role": "assistant",
                     "content": [{"type": "text", "text": f"Step {i} done: the parser is split in two and all tests pass."}]}},
    ]


def bench_capture(work: Path, cmd: list, env: dict, turns: int) -> dict:
    sid = str(uuid.uuid4())
    tr = work / f"{sid}.jsonl"
    t0 = time.time() - turns * 60
    with open(tr, "w") as fh:
        for i in range(turns):
            fh.writelines(json.dumps(r) + "\n" for r in claude_turn(i, sid, t0 + i * 60))
    stop = {"session_id": sid, "transcript_path": str(tr), "cwd": "/home/user/project",
            "hook_event_name": "Stop", "stop_hook_active": False}
    first, _ = run_hook(cmd + ["hook", "Stop", "--harness", "claude-code"], stop, env)
    per_turn, per_turn_cpu = [], []
    for k in range(20):
        i = turns + k
        recs = claude_turn(i, sid, time.time())
        with open(tr, "a") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in recs)
        payload = dict(stop, last_assistant_message=recs[-1]["message"]["content"][0]["text"])
        wall, cpu, _out = run_hook_cpu(cmd + ["hook", "Stop", "--harness", "claude-code"], payload, env)
        per_turn.append(wall)
        per_turn_cpu.append(cpu)
    return {"turns": turns, "transcript_mb": round(tr.stat().st_size / 1e6, 1),
            "first_stop_backfill_ms": round(first * 1000, 1),
            "per_turn_p50_ms": round(statistics.median(per_turn) * 1000, 1),
            "per_turn_p90_ms": round(pct(per_turn, 0.9) * 1000, 1),
            "per_turn_cpu_p50_ms": round(statistics.median(per_turn_cpu) * 1000, 1)}


def import_breakdown(cmd: list, env: dict, payload: dict, top: int = 12) -> list:
    py = cmd[0] if cmd[0].endswith(("python", "python3")) else sys.executable
    p = subprocess.run([py, "-X", "importtime", "-m", "chrollo", "hook", "UserPromptSubmit",
                        "--harness", "claude-code"], input=json.dumps(payload).encode(),
                       capture_output=True, env=env)
    rows = []
    for line in p.stderr.decode().splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cum_us, name = line[len("import time:"):].split("|", 2)
        rows.append((int(cum_us), int(self_us), name.rstrip()))
    total = sum(c for c, _s, n in rows if not n.startswith("  "))  # top-level imports
    return [{"total_ms": round(total / 1000, 1)}] + [
        {"module": n.strip(), "cumulative_ms": round(c / 1000, 1), "self_ms": round(s / 1000, 1)}
        for c, s, n in sorted(rows, reverse=True)[:top]]


def bench_receipts(source: Path, queries: list, rounds: int) -> dict:
    """p50 of the recall hook with the recall log on vs off, interleaved (see the doc)."""
    from chrollo.rg import rg_path

    cmd = chrollo_cmd() + ["hook", "UserPromptSubmit", "--harness", "claude-code"]
    work = Path(tempfile.mkdtemp(prefix="chrollo-bench-receipts-"))
    # (a real copy: the hook writes each prompt into its vault, and DIR may be shared)
    vault = Path(shutil.copytree(source, work / "vault", symlinks=True))
    envs = {}
    for mode in ("on", "off"):
        home = work / mode
        home.mkdir()
        (home / "privacy.json").write_text(json.dumps({"recall_log": mode == "on"}))
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
        envs[mode] = dict(env, CHROLLO_HOME=str(home), CHROLLO_MEMORIES_DIR=str(vault))
    times: dict = {"on": [], "off": [], "rg": []}
    try:
        for q in queries[:2]:
            for mode in ("on", "off"):
                run_hook(cmd, {"session_id": "warm-" + uuid.uuid4().hex, "prompt": q, "cwd": "/"}, envs[mode])
        k = 0
        for _ in range(rounds):
            for q in queries:
                order = ("on", "off") if k % 2 == 0 else ("off", "on")
                k += 1
                for mode in order:
                    payload = {"session_id": uuid.uuid4().hex, "transcript_path": None, "cwd": "/",
                               "hook_event_name": "UserPromptSubmit", "prompt": q}
                    times[mode].append(run_hook(cmd, payload, envs[mode])[0])
                word = max(q.split(), key=len).strip("?.,!'\"")
                t0 = time.perf_counter()
                subprocess.run([rg_path(), "-c", "-i", "-w", "-F", "--", word, str(vault)], capture_output=True)
                times["rg"].append(time.perf_counter() - t0)
        logged = (work / "on" / "logs" / "recall.jsonl").read_text().count("\n")
        assert not (work / "off" / "logs" / "recall.jsonl").exists()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    p50 = {m: statistics.median(v) * 1000 for m, v in times.items()}
    return {"vault": str(source), "load": round(os.getloadavg()[0], 2), "prompts": len(times["on"]), "receipts_written": logged,
            "record_p50_us_in_process": _record_cost(),
            "hook_p50_log_on_ms": round(p50["on"], 1), "hook_p50_log_off_ms": round(p50["off"], 1),
            "added_ms": round(p50["on"] - p50["off"], 2), "rg_p50_ms": round(p50["rg"], 1),
            "ratio_on_to_rg": round(p50["on"] / p50["rg"], 2), "ratio_off_to_rg": round(p50["off"] / p50["rg"], 2)}


def _record_cost(n: int = 2000) -> float:
    """p50 of receipts.record() itself, in process (µs): what the log adds to a hook with an
    injection, free of the whole process's noise (a log near its size bound included)."""
    from chrollo import receipts

    home = tempfile.mkdtemp(prefix="chrollo-bench-record-")
    old = os.environ.get("CHROLLO_HOME")
    os.environ["CHROLLO_HOME"] = home
    trace = {"excerpts": [{"path": f"/v/2026-01-0{i}_100000_abcdef0{i}.md", "line": 40 + i, "start": 38,
                           "end": 52, "chars": 900} for i in range(1, 4)], "chars": 2900}
    try:
        out = []
        for i in range(n):
            t0 = time.perf_counter()
            receipts.record("claude-code", f"sess-{i % 7}", "how did we fix the flaky websocket test again", trace)
            out.append(time.perf_counter() - t0)
        return round(statistics.median(out) * 1e6, 1)
    finally:
        if old is None:
            os.environ.pop("CHROLLO_HOME", None)
        else:
            os.environ["CHROLLO_HOME"] = old
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10MB,100MB")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", help="build the vaults here and keep them")
    ap.add_argument("--receipts", metavar="DIR", help="only: the recall log's cost over the vault DIR")
    ap.add_argument("--rounds", type=int, default=3, help="with --receipts: passes over the prompts")
    a = ap.parse_args()
    if a.receipts:
        tmp = Path(tempfile.mkdtemp(prefix="chrollo-bench-q-"))
        try:
            _src, qs, _rep, _what = sources_and_queries(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        queries = random.Random(a.seed).sample(qs, min(a.queries, len(qs)))
        print(json.dumps(bench_receipts(Path(a.receipts), queries, a.rounds)))
        return
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="chrollo-bench-hooks-"))
    work.mkdir(parents=True, exist_ok=True)
    cmd = chrollo_cmd()
    home = work / "home"
    mem = home / "memories"
    mem.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    env.update(CHROLLO_HOME=str(home))
    try:
        src, qs, replicate, what = sources_and_queries(work)
        queries = random.Random(a.seed).sample(qs, min(a.queries, len(qs)))
        print(f"source: {what}; {len(queries)} prompts; chrollo {' '.join(cmd)}")
        size, r = 0, 0
        rows = []
        for target in sorted(parse_size(s) for s in a.sizes.split(",")):
            size, r = grow(mem, src, replicate, target, size, r)
            hook = cmd + ["hook", "UserPromptSubmit", "--harness", "claude-code"]
            for q in queries[:2]:  # warm the page cache
                run_hook(hook, {"session_id": "warm-" + uuid.uuid4().hex, "prompt": q, "cwd": "/"}, env)
            times, injected, chars = [], 0, []
            for q in queries:
                payload = {"session_id": uuid.uuid4().hex, "transcript_path": None, "cwd": "/",
                           "hook_event_name": "UserPromptSubmit", "prompt": q}
                t, out = run_hook(hook, payload, env)
                times.append(t)
                if out.strip():
                    injected += 1
                    chars.append(len(json.loads(out)["hookSpecificOutput"]["additionalContext"]))
            row = {"mb": round(size / 1e6, 1), "files": len(os.listdir(mem)),
                   "recall_p50_ms": round(statistics.median(times) * 1000, 1),
                   "recall_p90_ms": round(pct(times, 0.9) * 1000, 1),
                   "prompts_with_injection": f"{injected}/{len(queries)}",
                   "median_injected_chars": statistics.median(chars) if chars else 0}
            rows.append(row)
            print(json.dumps(row))
        cap = bench_capture(work, cmd, env, a.turns)
        print(json.dumps(cap))
        imports = import_breakdown(cmd, env, {"session_id": "imp-" + uuid.uuid4().hex, "cwd": "/",
                                              "hook_event_name": "UserPromptSubmit", "prompt": queries[0]})
        print("\n| vault | files | recall hook p50 | p90 | prompts with an injection | median chars |")
        print("|---|---|---|---|---|---|")
        for x in rows:
            print(f"| {x['mb']} MB | {x['files']} | {x['recall_p50_ms']} ms | {x['recall_p90_ms']} ms | "
                  f"{x['prompts_with_injection']} | {x['median_injected_chars']} |")
        print(f"\ncapture: {cap['turns']}-turn transcript ({cap['transcript_mb']} MB): first Stop "
              f"(backfills every turn) {cap['first_stop_backfill_ms']} ms; then per turn p50 "
              f"{cap['per_turn_p50_ms']} ms, p90 {cap['per_turn_p90_ms']} ms")
        print(f"\nimports on the recall path (python -X importtime): {imports[0]['total_ms']} ms in all")
        print("| module | cumulative | self |\n|---|---|---|")
        for m in imports[1:]:
            print(f"| {m['module']} | {m['cumulative_ms']} ms | {m['self_ms']} ms |")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
