#!/usr/bin/env python3
"""A coding-size bench vault (issue 30): the dev coding vaults of ../shared/eval/code (real
coding-agent sessions, built by its code_to_md.py) copied again and again with fresh session
ids and later dates until the vault holds the size asked, so an index and a search meet real
coding text (identifiers, paths, errors, long agent turns) at 10 MB … 1 GB.

    python bench/code_vault.py --source DIR/code_md --out /tmp/index-code [--sizes 10MB,100MB,1000MB]

``--source``: the folder of code_to_md.py's vaults (one subfolder per project, session files
in each). Round ``r`` of the copies moves every date of a session ``6·r`` hours later and gives
it the session id uuid5(name, r): the copies are distinct sessions, newest last. A vault that
exists is left as it is (delete it to build it again).
"""
from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search import parse_size  # noqa: E402

_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})([ _T])(\d{2}):?(\d{2}):?(\d{2})")
_DAY = re.compile(r'^date: "(\d{4}-\d{2}-\d{2})"', re.M)
_ID = re.compile(r'^session_id: "[^"]*"', re.M)


def sources(folder: Path) -> list:
    """[(name, text)] of every session file under ``folder``, sorted."""
    return [(p.name, p.read_text("utf-8")) for p in sorted(folder.glob("*/*.md"))]


def copy_of(name: str, text: str, r: int) -> tuple[str, str]:
    """Session ``name`` as round ``r`` of the copies: dates 6·r hours later, a fresh id."""
    shift = dt.timedelta(hours=6 * r)
    sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"chrollo-bench-code/{name}/{r}"))

    def moved(m):
        sep = m.group(2)
        t = dt.datetime.strptime(f"{m.group(1)} {m.group(3)}{m.group(4)}{m.group(5)}", "%Y-%m-%d %H%M%S") + shift
        colons = ":" in m.group(0)[11:]
        return t.strftime("%Y-%m-%d") + sep + t.strftime("%H:%M:%S" if colons else "%H%M%S")

    body = _DATE.sub(moved, text)
    started = _DATE.search(body)
    body = _ID.sub(f'session_id: "{sid}"', body, count=1)
    when = dt.datetime.strptime(name[:17], "%Y-%m-%d_%H%M%S") + shift
    body = _DAY.sub(f'date: "{when:%Y-%m-%d}"', body, count=1) if started else body
    return f"{when:%Y-%m-%d_%H%M%S}_{sid[:8]}.md", body


def grow(out: Path, src: list, target: int) -> tuple[int, int]:
    """Write copies into ``out`` until it holds ``target`` bytes; (bytes, files)."""
    out.mkdir(parents=True, exist_ok=True)
    size = files = r = 0
    while size < target:
        for name, text in src:
            fname, body = copy_of(name, text, r)
            data = body.encode()
            (out / fname).write_bytes(data)
            size, files = size + len(data), files + 1
            if size >= target:
                break
        r += 1
    return size, files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True, help="code_to_md.py's output folder (one subfolder per vault)")
    ap.add_argument("--out", required=True, help="the vaults go to OUT/10MB …")
    ap.add_argument("--sizes", default="10MB,100MB,1000MB")
    a = ap.parse_args()
    src = sources(Path(a.source))
    if not src:
        sys.exit(f"no session files under {a.source}/*/")
    for label in a.sizes.split(","):
        vault = Path(a.out) / label
        if vault.exists():
            print(f"{vault}: exists, left as it is")
            continue
        size, files = grow(vault, src, parse_size(label))
        print(f"{vault}: {files} files, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
