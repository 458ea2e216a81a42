"""Rewrite a converted LoCoMo folder (../shared/eval/locomo_to_md.py, format 1) in format 2.

The same sessions go through chrollo's real writer with format 2's frontmatter, headings,
titled names and links; each conversation's evidence map is moved to the new names and
lines. Running ../shared/eval/retrieval.py on both folders shows what format 2 changes in
retrieval (it should change nothing):

    python3 ../shared/eval/locomo_to_md.py --locomo ../shared/eval/data/locomo-dev --out /tmp/l1
    python3 bench/format2_locomo.py /tmp/l1 /tmp/l2
    python3 ../shared/eval/retrieval.py --converted /tmp/l1 --retrievers chrollo
    python3 ../shared/eval/retrieval.py --converted /tmp/l2 --retrievers chrollo
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src", help="a folder written by locomo_to_md.py")
    ap.add_argument("dst", help="where to write the format-2 copy (must not exist)")
    a = ap.parse_args()
    os.environ["CHROLLO_HOME"] = tempfile.mkdtemp(prefix="chrollo-f2-")  # the writer's locks
    from chrollo.session import SessionMeta, SessionWriter, Turn, read_session

    src, dst = Path(a.src), Path(a.dst)
    dst.mkdir(parents=True)
    for qa_path in sorted(src.glob("*.json")):
        conv = json.loads(qa_path.read_text("utf-8"))
        if "memory_dir" not in conv:  # (the run's index: copied as is)
            (dst / qa_path.name).write_text(qa_path.read_text("utf-8"), "utf-8")
            continue
        moved: dict = {}  # old name -> (new name, line offset)
        for f in sorted((src / conv["memory_dir"]).glob("*.md")):
            s = read_session(f)
            m = s.meta
            started = dt.datetime.strptime(s.turns[0].timestamp, "%Y-%m-%d %H:%M:%S")
            meta = SessionMeta(str(m["session_id"]), started, str(m["harness"]), str(m.get("cwd", "")),
                               machine="eval")
            turns = [Turn(t.role, dt.datetime.strptime(t.timestamp, "%Y-%m-%d %H:%M:%S"), [t.text])
                     for t in s.turns]
            out = SessionWriter(meta, dst / conv["memory_dir"], fsync=False, record=False).append(turns)
            new = read_session(out)
            old_lines = f.read_text("utf-8").split("\n")
            new_lines = out.read_text("utf-8").split("\n")
            shift = new.body_start - s.body_start
            for i, ln in enumerate(old_lines[s.body_start - 1:], s.body_start):  # same body, "## " headers
                got = new_lines[i - 1 + shift]
                assert got == ln or got == "## " + ln, (f, i, ln, got)
            moved[f.name] = (out.name, shift)
        conv["dia_map"] = {k: [moved[n][0], a_ + moved[n][1], b + moved[n][1]]
                           for k, (n, a_, b) in conv["dia_map"].items()}
        (dst / qa_path.name).write_text(json.dumps(conv), "utf-8")
        print(f"{conv['conv']}: {len(moved)} sessions rewritten in format 2")


if __name__ == "__main__":
    main()
