#!/usr/bin/env python3
"""Thesaurus load time (cold, in a fresh process each run) and size. Prints figures."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = ("import time; t = time.perf_counter(); from chrollo import thesaurus; thesaurus.load(); "
        "print((time.perf_counter() - t) * 1000)")


def main() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), CHROLLO_HOME="/nonexistent-chrollo-home")
    runs = [float(subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                                 env=env, check=True).stdout) for _ in range(21)]
    path = ROOT / "chrollo" / "data" / "thesaurus.json"
    import json
    words = json.loads(path.read_text())["words"]
    print(f"thesaurus: {path.stat().st_size / 1e6:.2f} MB, {len(words)} words, "
          f"{sum(map(len, words.values()))} synonyms")
    print(f"load (import + parse), median of {len(runs)} fresh processes: {statistics.median(runs):.1f} ms "
          f"(max {max(runs):.1f} ms)")


if __name__ == "__main__":
    main()
