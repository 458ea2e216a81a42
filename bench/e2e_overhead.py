"""Per-prompt overhead of chrollo's hooks in the real harnesses (issue #18).

For each harness: one private world (tests/e2e/kit: fake model on 127.0.0.1, private HOME),
N one-prompt sessions *without* chrollo installed and N *with* it (hooks and the MCP tool, as
`chrollo install <harness>` leaves them; the vault fills as it goes), in two worlds run in turn.
Prints the median wall time of each and the difference. Pinned versions unless
CHROLLO_E2E_VERSIONS=latest.

    .venv/bin/python bench/e2e_overhead.py [--runs 5] [--harness claude-code,codex,gemini,pi]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from e2e.drivers import DRIVERS  # noqa: E402
from e2e.kit import npm  # noqa: E402
from e2e.kit.world import World  # noqa: E402


def timed_runs(drv, n: int, label: str) -> list:
    out = []
    for i in range(n):
        t = time.perf_counter()
        r = drv.run(f"say: {label} run {i} of the overhead benchmark about the deploy pipeline")
        out.append(time.perf_counter() - t)
        if not r.ok:
            raise SystemExit(f"{drv.name} failed: {r.proc.stderr[-2000:]}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--harness", default=",".join(DRIVERS))
    args = ap.parse_args()
    folder = npm.ensure_installed()
    versions = npm.installed_versions(folder)
    print(f"{'harness':<12} {'version':<9} {'without s':>10} {'with s':>8} {'overhead s':>11} {'ratio':>6}")
    for name in args.harness.split(","):
        with tempfile.TemporaryDirectory(prefix=f"chrollo-bench-{name}-") as tmp:
            # Two worlds, one with chrollo and one without, run in turn: load drifts on a shared
            # machine, and runs taken in one block each would charge the drift to chrollo.
            bare = World(Path(tmp) / "bare", folder / "node_modules" / ".bin")
            hooked = World(Path(tmp) / "hooked", folder / "node_modules" / ".bin")
            try:
                drv_bare, drv_hooked = DRIVERS[name](bare), DRIVERS[name](hooked)
                drv_hooked.install()
                timed_runs(drv_bare, 1, "warm-up")
                timed_runs(drv_hooked, 1, "warm-up")
                without, with_ = [], []
                for i in range(args.runs):
                    without += timed_runs(drv_bare, 1, f"bare {i}")
                    with_ += timed_runs(drv_hooked, 1, f"chrollo {i}")
                assert len(hooked.vault_files()) == args.runs + 1, "chrollo did not capture every run"
                assert not bare.vault_files(), "the bare world captured something"
            finally:
                bare.close()
                hooked.close()
        a, b = statistics.median(without), statistics.median(with_)
        print(f"{name:<12} {versions[name]:<9} {a:>10.2f} {b:>8.2f} {b - a:>+11.2f} {b / a:>6.2f}", flush=True)

if __name__ == "__main__":
    main()
