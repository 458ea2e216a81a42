"""The long fuzz run (#33): tests/test_fuzz.py's properties with many more examples and a
seed of its own (CI runs ~2,100 with a fixed one).

    .venv/bin/python bench/fuzz.py --scale 25 --seed 1   # ~52,000 examples

Prints pytest's output: per property pass/fail, then the example counts, the slowest runs and
what belongs to another helper's open item (tests/fuzzkit.py KNOWN).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=25.0, help="times CI's example counts (default 25)")
    ap.add_argument("--seed", type=int, default=1, help="hypothesis seed (CI's run is derandomized)")
    ap.add_argument("-k", default=None, help="only the properties matching this pytest -k expression")
    ap.add_argument("--progress", metavar="FILE", help="write the example counts so far to FILE (JSON)")
    a = ap.parse_args()
    env = dict(os.environ, CHROLLO_FUZZ_SCALE=str(a.scale), CHROLLO_FUZZ_SEED=str(a.seed))
    if a.progress:
        env["CHROLLO_FUZZ_PROGRESS"] = a.progress
    cmd = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", str(ROOT / "tests" / "test_fuzz.py")]
    if a.k:
        cmd += ["-k", a.k]
    t0 = time.monotonic()
    rc = subprocess.call(cmd, cwd=ROOT, env=env)
    print(f"fuzz: scale {a.scale}, seed {a.seed}: {time.monotonic() - t0:.0f} s, exit {rc}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
