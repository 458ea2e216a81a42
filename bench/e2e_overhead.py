"""Per-prompt overhead of chrollo's hooks in the real harnesses (issues #18, #31).

For each harness, three private worlds (tests/e2e/kit: fake model on 127.0.0.1, private HOME)
run one-prompt sessions in turn: *bare* (no chrollo), *install* (hooks and the MCP tool as
`chrollo install <harness>` leaves them) and *package* (the harness's own package of chrollo,
installed with its own command: plugin, extension or pi package; see docs/install.md's *Install*).
The vaults fill as they go. Prints the median wall time of each, the overheads against bare,
and each overhead as a ratio to a bare `rg` over the same vault, timed in the same loop.
Codex's plugin system is turned on in all three worlds (the package needs it, and it costs
start-up time of its own). Pinned versions unless CHROLLO_E2E_VERSIONS=latest.

    .venv/bin/python bench/e2e_overhead.py [--runs 5] [--harness claude-code,codex,gemini,pi,qwen-code,copilot] [--hook-runs 21]

First, the recall hook alone: `chrollo install`'s command against the package's shim.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from e2e.drivers import DRIVERS  # noqa: E402
from e2e.kit import npm  # noqa: E402
from e2e.kit.world import World  # noqa: E402

VARIANTS = ("bare", "install", "package")


def timed_run(drv, label: str) -> float:
    t = time.perf_counter()
    r = drv.run(f"say: {label} of the overhead benchmark about the deploy pipeline")
    if not r.ok:
        raise SystemExit(f"{drv.name} ({label}) failed: {r.proc.stderr[-2000:]}")
    return time.perf_counter() - t


def timed_rg(vault: Path) -> float:
    from chrollo.rg import rg_path

    t = time.perf_counter()
    subprocess.run([rg_path(), "-c", "-i", "deploy pipeline", str(vault)], capture_output=True)
    return time.perf_counter() - t


def hook_alone(runs: int) -> None:
    """The recall hook by itself, outside any harness: `chrollo install`'s command (this
    installation's chrollo by absolute path) against the package's shim (sh, then the chrollo
    it finds), interleaved, on a small vault — what the package adds to every prompt."""
    import json
    import shlex

    from chrollo.install import hook_command

    with tempfile.TemporaryDirectory(prefix="chrollo-bench-hook-") as tmp:
        env = {**os.environ, "CHROLLO_HOME": tmp, "CHROLLO_BIN": str(Path(sys.executable).with_name("chrollo"))}
        env.pop("CHROLLO_MEMORIES_DIR", None)
        shim = ROOT / "hooks" / "claude-code" / "bin" / "chrollo-hook"
        cmds = {"install": shlex.split(hook_command("claude-code", "UserPromptSubmit")),
                "package": ["sh", str(shim), "claude-code", "UserPromptSubmit"]}
        times = {k: [] for k in cmds}
        for i in range(runs + 1):
            for k, cmd in cmds.items():
                payload = json.dumps({"session_id": f"bench-{k}-{i}", "cwd": tmp, "hook_event_name": "UserPromptSubmit",
                                      "prompt": "which port does the deploy pipeline use?"})
                t = time.perf_counter()
                subprocess.run(cmd, input=payload.encode(), capture_output=True, env=env, check=True)
                if i:
                    times[k].append(time.perf_counter() - t)
        m = {k: 1000 * statistics.median(v) for k, v in times.items()}
        print(f"hook alone (UserPromptSubmit, medians of {runs}): install {m['install']:.0f} ms, "
              f"package {m['package']:.0f} ms, the shim adds {m['package'] - m['install']:+.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--harness", default=",".join(DRIVERS))
    ap.add_argument("--hook-runs", type=int, default=21, help="runs of the hook-alone comparison (0: skip)")
    args = ap.parse_args()
    if args.hook_runs:
        hook_alone(args.hook_runs)
    folder = npm.ensure_installed()
    versions = npm.installed_versions(folder)
    print(f"load {os.getloadavg()[0]:.2f}; medians of {args.runs}, seconds")
    print(f"{'harness':<12} {'version':<9} {'bare':>6} {'install':>8} {'package':>8} "
          f"{'+install':>9} {'+package':>9} {'rg ms':>6} {'+inst/rg':>9} {'+pkg/rg':>8}")
    for name in filter(None, args.harness.split(",")):
        with tempfile.TemporaryDirectory(prefix=f"chrollo-bench-{name}-") as tmp:
            # The worlds run in turn: load drifts on a shared machine, and runs taken in one
            # block each would charge the drift to one variant.
            # (a harness chrollo ships no package for — a driver's has_package = False — runs bare and install only)
            variants = VARIANTS if DRIVERS[name].has_package else VARIANTS[:2]
            worlds = {v: World(Path(tmp) / v, folder / "node_modules" / ".bin") for v in variants}
            try:
                drv = {v: DRIVERS[name](w) for v, w in worlds.items()}
                drv["install"].install()
                if "package" in drv:
                    drv["package"].install_package()
                    for v in ("bare", "install"):
                        drv[v].extra_args = getattr(drv["package"], "extra_args", [])
                        drv[v].own_traffic = drv["package"].own_traffic
                times = {v: [] for v in variants}
                rg = []
                for v in variants:
                    timed_run(drv[v], "warm-up")
                for i in range(args.runs):
                    for v in variants:
                        times[v].append(timed_run(drv[v], f"{v} run {i}"))
                    rg.append(timed_rg(worlds["install"].vault))
                for v in variants[1:]:
                    assert len(worlds[v].vault_files()) == args.runs + 1, f"{v}: chrollo did not capture every run"
                assert not worlds["bare"].vault_files(), "the bare world captured something"
            finally:
                for w in worlds.values():
                    w.close()
        m = {v: statistics.median(t) for v, t in times.items()}
        r = statistics.median(rg)
        di = m["install"] - m["bare"]
        if "package" in m:
            dp = m["package"] - m["bare"]
            cells = (f"{m['package']:>8.2f}", f"{dp:>+9.2f}", f"{dp / r:>+8.0f}")
        else:
            cells = (f"{'-':>8}", f"{'-':>9}", f"{'-':>8}")
        print(f"{name:<12} {versions[name]:<9} {m['bare']:>6.2f} {m['install']:>8.2f} {cells[0]} "
              f"{di:>+9.2f} {cells[1]} {1000 * r:>6.1f} {di / r:>+9.0f} {cells[2]}", flush=True)


if __name__ == "__main__":
    main()
