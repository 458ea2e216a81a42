#!/usr/bin/env python3
"""What finding a session's repository costs the capture hook (#34, chrollo/repository.py).

    python bench/repository.py [--rounds 15]

Each round runs, interleaved, one first turn (UserPromptSubmit + Stop of Codex, no transcript:
the turn that creates the session's file, the only one that looks for the repository) in:

plain    a folder outside any repository (no field: the cost before #34)
url      a clone whose origin is a network URL (.git/config read)
loose    a repository without a network remote, commits loose (root commit from the files)
packed   the same after `git gc` (root commit from git the first time, then from state/)

and bare `rg -c` over the file just written, in the same run, for the ratio. Prints p50 per
variant (ms), its ratio to rg, and its difference from `plain`; then repository.identify()
alone, in process (µs): the first call of a repository (loose: 50 commits walked; packed: git
asked) and a later one (the root commit from state/).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "init.defaultBranch=main"]


def git(*args, cwd=None):
    subprocess.run([*GIT, *map(str, args)], cwd=cwd, check=True, capture_output=True)


def hook(home: Path, event: str, body: dict) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    env.update(CHROLLO_HOME=str(home), PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "chrollo", "hook", event, "--harness", "codex"],
                   input=json.dumps(body).encode(), env=env, capture_output=True, check=True)
    return time.perf_counter() - t0


def first_turn(home: Path, cwd: Path) -> float:
    sid = str(uuid.uuid4())
    base = {"session_id": sid, "cwd": str(cwd), "transcript_path": None, "model": "gpt-5.4"}
    hook(home, "UserPromptSubmit", dict(base, hook_event_name="UserPromptSubmit",
                                        prompt=f"why does the nightly backup fail {sid[:8]}"))
    return hook(home, "Stop", dict(base, hook_event_name="Stop", last_assistant_message="the bucket policy"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="chrollo-bench-repo-"))
    try:
        plain = tmp / "plain"
        plain.mkdir()
        url = tmp / "url"
        git("init", "-q", url)
        git("commit", "-q", "--allow-empty", "-m", "x", cwd=url)
        git("remote", "add", "origin", "git@github.com:acme/app.git", cwd=url)
        loose = tmp / "loose"
        git("init", "-q", loose)
        for n in range(50):
            git("commit", "-q", "--allow-empty", "-m", f"c{n}", cwd=loose)
        packed = tmp / "packed"
        git("clone", "-q", "--no-local", loose, packed)
        git("remote", "remove", "origin", cwd=packed)
        git("gc", "-q", cwd=packed)
        rg = shutil.which("rg") or str(Path(sys.executable).parent / "rg")
        times: dict = {k: [] for k in ("plain", "url", "loose", "packed", "rg")}
        for r in range(args.rounds):
            order = ["plain", "url", "loose", "packed"]
            order = order if r % 2 == 0 else order[::-1]
            for name in order:
                home = tmp / f"home-{name}-{r}" if name == "packed" and r == 0 else tmp / f"home-{name}"
                times[name].append(first_turn(home, tmp / name))
            f = next((tmp / "home-plain" / "memories").glob("*.md"))
            t0 = time.perf_counter()
            subprocess.run([rg, "-c", "backup", str(f)], capture_output=True)
            times["rg"].append(time.perf_counter() - t0)
        p50 = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        load = os.getloadavg()[0]
        print(f"first-turn Stop hook, p50 of {args.rounds} rounds (load {load:.1f}); bare rg -c p50 {p50['rg']:.1f} ms")
        for k in ("plain", "url", "loose", "packed"):
            print(f"  {k:7s} {p50[k]:7.1f} ms  {p50[k] / p50['rg']:5.1f}x rg  {p50[k] - p50['plain']:+6.1f} ms vs plain")
        first_packed = times["packed"][0] * 1e3
        print(f"  packed, first session of the repository (git asked): {first_packed:.1f} ms")
        # in process: what the hook's one call costs, without the process around it
        os.environ["CHROLLO_HOME"] = str(tmp / "home-inproc")
        sys.path.insert(0, str(ROOT))
        from chrollo import repository

        print("repository.identify() in process, p50 of 200 (µs):")
        for name, fresh in (("plain", False), ("url", False), ("loose", True), ("loose", False),
                            ("packed", True), ("packed", False)):
            ts = []
            for _ in range(200 if not fresh else 5):
                if fresh:
                    shutil.rmtree(tmp / "home-inproc", ignore_errors=True)
                t0 = time.perf_counter()
                repository.identify(str(tmp / name))
                ts.append(time.perf_counter() - t0)
            what = "first (no state/)" if fresh else "later"
            print(f"  {name:7s} {what:18s} {statistics.median(ts) * 1e6:8.0f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
