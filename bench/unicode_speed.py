"""#47: text beyond ASCII costs what ASCII costs — index build and size on CJK text, and a
non-ASCII query on an indexed vault against an ASCII one, as ratios to bare rg in one run.

    python bench/unicode_speed.py --cjk GITDIR --english DIR [--mb 100] [--workdir DIR]

``--cjk``: a git directory of Chinese markdown (the figures in docs/ used github:ruanyf/weekly
at cf5e367 — a weekly newsletter in Chinese, 419 files, 9 MB; fetched, converted here, never
committed), read with ``git show``. ``--english``: a folder of chrollo session files
(e.g. the LoCoMo dev conversations and coding vaults that ../shared/eval converts), copied
round-robin. Builds, under the workdir:

* ``cjk/``: the Chinese files as sessions (one turn each paragraph), repeated to ``--cjk-mb``;
  ``chrollo index --rebuild`` on it: MB/s and index size ÷ vault size (the issue: ≥ 20 MB/s,
  ≤ 0.6×).
* ``mixed/``: ``--mb`` of English sessions with 10 % Chinese and 5 % accented (French/German
  words written into English sessions), indexed; then each query of the ASCII set and of the
  non-ASCII set through ``chrollo search --json`` (medians of ``--repeat``), beside ``rg
  --count`` of the query's words over the vault in the same run (the issue: a non-ASCII
  query ≤ 2× an ASCII one).
Prints one JSON object.
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
import time
from pathlib import Path

ASCII_QUERIES = ["adoption agencies research", "painting sunset", "nuxt migration", "connection pool exhausted",
                 "support group meeting", "camping trip plans"]
NON_ASCII_QUERIES = ["连接池", "开源软件", "数据库", "café croissant", "München Bahnhof", "人工智能 模型"]
ACCENTED = ["Le café près de la gare était fermé", "Wir trafen uns am Münchner Bahnhof",
            "Le croissant était délicieux", "Die Brücke über die Isar", "Él comió paella en València"]


def session(sid: str, day: int, paras: list) -> str:
    head = (f"---\nsession_id: {sid}\nharness: claude-code\ndate: 2026-0{1 + day % 9}-{1 + day % 28:02d}\n"
            f"cwd: /home/user/project\n---\n\n")
    body = "".join(f"## [2026-0{1 + day % 9}-{1 + day % 28:02d} 10:{i % 60:02d}:00] "
                   f"[{'User' if i % 2 == 0 else 'Agent'}]\n{'> ' if i % 2 else ''}{p}\n\n" for i, p in enumerate(paras))
    return head + body


def cjk_paragraphs(gitdir: str) -> list:
    names = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "-r", "--name-only", "HEAD"],
                           capture_output=True, text=True, check=True).stdout.split()
    out = []
    for n in names:
        if n.endswith(".md"):
            text = subprocess.run(["git", "--git-dir", gitdir, "show", f"HEAD:{n}"], capture_output=True,
                                  check=True).stdout.decode("utf-8", "replace")
            out.append([p.strip() for p in text.split("\n\n") if p.strip()][:60])
    return out


def write_vault(folder: Path, docs, english: list, mb: int, cjk_share: float, acc_share: float, seed=7) -> int:
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    total, n = 0, 0
    while total < mb << 20:
        r = rng.random()
        if r < cjk_share and docs:
            text = session(f"zh{n:06d}-x", n, docs[n % len(docs)])
        elif english:
            text = english[n % len(english)]
            if r < cjk_share + acc_share:
                text += f"\n## [2026-01-01 10:00:00] [User]\n{rng.choice(ACCENTED)}\n"
        else:
            text = session(f"zh{n:06d}-x", n, docs[n % len(docs)])
        name = f"2026-{1 + n % 9:02d}-{1 + n % 28:02d}_{100000 + n % 80000:06d}_s{n:07d}.md"
        (folder / name).write_text(text, "utf-8")
        total += len(text.encode())
        n += 1
    return total


def timed(cmd, env) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, env=env, check=False)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cjk", required=True)
    ap.add_argument("--english", required=True)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--cjk-mb", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", default="/tmp/chrollo-unicode-bench")
    ap.add_argument("--chrollo", default=shutil.which("chrollo") or "chrollo")
    a = ap.parse_args()
    work = Path(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    docs = cjk_paragraphs(a.cjk)
    english = [p.read_text("utf-8", "replace") for p in sorted(Path(a.english).rglob("*.md"))]
    env = dict(os.environ, CHROLLO_HOME=str(work / "home"), CHROLLO_NOW="2026-11-01T12:00:00")
    env.pop("CHROLLO_MEMORIES_DIR", None)
    rg = str(Path(a.chrollo).parent / "rg") if (Path(a.chrollo).parent / "rg").exists() else "rg"
    out = {"load": round(os.getloadavg()[0], 1)}

    cjk = work / "cjk"
    size = write_vault(cjk, docs, [], a.cjk_mb, 1.0, 0.0)
    t = time.perf_counter()
    p = subprocess.run([a.chrollo, "index", "--rebuild", "--dir", str(cjk), "--json"], capture_output=True, env=env)
    secs = time.perf_counter() - t
    built = json.loads(p.stdout) if p.stdout.strip() else {"error": p.stderr.decode()[-300:]}
    out["cjk_build"] = {"vault_mb": round(size / 1e6, 1), "seconds": round(secs, 2),
                        "mb_per_s_process": round(size / 1e6 / secs, 1), "mb_per_s": built.get("mb_per_s"),
                        "index_to_vault": round(built.get("index_bytes", 0) / size, 3)}

    mixed = work / "mixed"
    size = write_vault(mixed, docs, english, a.mb, 0.10, 0.05)
    subprocess.run([a.chrollo, "index", "--dir", str(mixed)], capture_output=True, env=env, check=True)
    rows = {}
    for label, queries in (("ascii", ASCII_QUERIES), ("non_ascii", NON_ASCII_QUERIES)):
        times, ratios = [], []
        for q in queries:
            s = statistics.median(timed([a.chrollo, "search", q, "--dir", str(mixed), "--json"], env)
                                  for _ in range(a.repeat))
            r = statistics.median(timed([rg, "--count", "-i", "-e", "|".join(q.split()), str(mixed)], env)
                                  for _ in range(a.repeat))
            times.append(s)
            ratios.append(s / r)
        rows[label] = {"p50_s": round(statistics.median(times), 3), "max_s": round(max(times), 3),
                       "p50_ratio_to_rg": round(statistics.median(ratios), 3)}
    rows["non_ascii_over_ascii"] = round(rows["non_ascii"]["p50_s"] / rows["ascii"]["p50_s"], 2)
    out["mixed"] = {"vault_mb": round(size / 1e6, 1), **rows}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
