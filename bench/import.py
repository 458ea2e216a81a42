#!/usr/bin/env python3
"""Import throughput (figures for closing notes): `chrollo import all` over ≥ 100 MB of transcripts.

    python bench/import.py [--mb 100] [--keep DIR]

Replicates ../shared/fixtures/transcripts (15 real sessions of the four harnesses) until the
tree holds --mb megabytes: each copy gets its own session ids (the first 8 hex digits of every
id replaced, as file names carry them) and its own project folder, so every file is a new session. Then times the
whole `chrollo import all` process (defaults pointed at the tree through HOME,
CLAUDE_CONFIG_DIR, CODEX_HOME, PI_CODING_AGENT_DIR) — first run and a no-op re-run — and
reports MB/s, files/s and the peak RSS (flat in file size: transcripts are streamed line by line).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "transcripts"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import chrollo_cmd  # noqa: E402

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
LAYOUT = {"claude-code": ("claude/projects", 1), "codex": ("codex/sessions", 0),
          "gemini": ("home/.gemini/tmp", 1), "pi": ("pi/sessions", 1)}


def replicate(dst: Path, target: int) -> tuple[int, int]:
    sources = [(h, p) for h in LAYOUT for p in sorted((FIXTURES / {"claude-code": "claude-code/projects",
                                                                     "codex": "codex/sessions", "gemini": "gemini/tmp",
                                                                     "pi": "pi/sessions"}[h]).rglob("*.json*"))]
    base = {h: FIXTURES / {"claude-code": "claude-code/projects", "codex": "codex/sessions",
                           "gemini": "gemini/tmp", "pi": "pi/sessions"}[h] for h in LAYOUT}
    size = files = r = 0
    while size < target:
        for h, p in sources:
            rel = str(p.relative_to(base[h]))
            if LAYOUT[h][1]:  # its own project folder per copy
                first, rest = rel.split("/", 1)
                rel = f"{first}-r{r}/{rest}"
            swap = lambda m: f"{(int(m.group()[:8], 16) + r * 2654435761) % 2**32:08x}" + m.group()[8:]  # noqa: E731
            out = dst / LAYOUT[h][0] / UUID.sub(swap, rel)
            out.parent.mkdir(parents=True, exist_ok=True)
            data = UUID.sub(swap, p.read_text("utf-8"))
            out.write_text(data, "utf-8")
            size += len(data.encode())
            files += 1
        r += 1
    return size, files


def timed(cmd: list, env: dict) -> tuple[float, int, dict]:
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    return time.perf_counter() - t0, ru.ru_maxrss, json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--keep")
    a = ap.parse_args()
    if not FIXTURES.is_dir():
        sys.exit("needs ../shared/fixtures beside the checkout")
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="chrollo-bench-import-"))
    try:
        size, files = replicate(work / "src", int(a.mb * 1e6))
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
        env.update(CHROLLO_HOME=str(work / "chrollo"), HOME=str(work / "src" / "home"),
                   CLAUDE_CONFIG_DIR=str(work / "src" / "claude"), CODEX_HOME=str(work / "src" / "codex"),
                   PI_CODING_AGENT_DIR=str(work / "src" / "pi"))
        cmd = chrollo_cmd() + ["import", "all", "--json"]
        print(f"{files} transcript files, {size / 1e6:.1f} MB; {' '.join(cmd)}")
        os.sync()  # let the writes of building the tree (and any earlier run's cleanup) settle
        time.sleep(3)
        first, rss1, out1 = timed(cmd, env)
        again, rss2, out2 = timed(cmd, env)
        vault = work / "chrollo" / "memories"
        md = sum(f.stat().st_size for f in vault.glob("*.md"))
        print(json.dumps({k: out1[k] for k in ("files", "imported", "updated", "unchanged", "skipped", "failed", "turns")}))
        print("\n| run | seconds | MB/s | files/s | peak RSS |\n|---|---|---|---|---|")
        print(f"| first import | {first:.2f} | {size / 1e6 / first:.1f} | {files / first:.0f} | {rss1 / 1024:.0f} MB |")
        print(f"| re-run (nothing new) | {again:.2f} | {size / 1e6 / again:.1f} | {files / again:.0f} | {rss2 / 1024:.0f} MB |")
        print(f"\n{out1['turns']} turns into {len(list(vault.glob('*.md')))} session files ({md / 1e6:.1f} MB of markdown); "
              f"re-run wrote {out2['turns']} turns")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
