"""Regenerate the bundled sample memory (chrollo/data/demo) through chrollo's own writer.

Each sample session is read back (frontmatter and turns) and written again by
``chrollo.session.SessionWriter`` in the order live capture meets sessions (older first, a
session before its subagents), each into its own folder (the mesh peer's into
``peers/laptop``), so the files are exactly what capture writes today: format 2's title,
file name, tags, links (``previous``, ``parent``) and turn headings. The sessions in
``KEEP_FORMAT_1`` were captured before format 2 and stay byte for byte as they are: the demo
shows older files side by side with new ones.

    python3 bench/demo_sample.py            # rewrite chrollo/data/demo
    python3 bench/demo_sample.py --check    # exit 1 if it differs from what the writer writes

(``tests/test_demo.py`` runs the check, so a change to the writer that the sample does not
follow fails there: run this script and commit the result.)
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chrollo.demo import sample_vault  # noqa: E402
from chrollo.fileformat import TS_FMT, ToolCall  # noqa: E402
from chrollo.session import SessionMeta, SessionWriter, Turn, read_session  # noqa: E402

KEEP_FORMAT_1 = {"7b2e4f1a-3c8d-4e5f-a6b7-c8d9e0f1a2b3"}  # the oldest session, as written then


def _tool(line: str) -> ToolCall:
    """A tool line (``<tool>NAME ARG</tool>``, ``$`` for shell) back into its ToolCall."""
    name, _, arg = line[len("<tool>"):-len("</tool>")].partition(" ")
    return ToolCall(name, arg)


def _turns(session) -> list:
    """The session's turns as capture hands them to the writer (an agent's tool calls first,
    then its text: the order every sample turn has)."""
    out = []
    for t in session.turns:
        when = dt.datetime.strptime(t.timestamp, TS_FMT)
        if t.role == "user":
            out.append(Turn.user(t.text, when))
        else:
            out.append(Turn.agent([_tool(x) for x in t.tools] + ([t.text] if t.text else []), when))
    return out


def render(src: Path, dest: Path) -> None:
    """Write the sessions of ``src`` into ``dest`` as capture would.

    Needs a private CHROLLO_HOME (the writer keeps its locks there).
    """
    sessions = [(read_session(f), f) for f in sorted(src.rglob("*.md"))]
    sessions.sort(key=lambda sf: (sf[0].turns[0].timestamp, bool(sf[0].meta.get("parent_session"))))
    for s, f in sessions:
        folder = dest / f.parent.relative_to(src)
        m = s.meta
        if m["session_id"] in KEEP_FORMAT_1:
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, folder / f.name)
            continue
        meta = SessionMeta(m["session_id"], dt.datetime.strptime(s.turns[0].timestamp, TS_FMT),
                           m["harness"], m["cwd"], m.get("parent_session"), m["machine"])
        out = SessionWriter(meta, folder, fsync=False, record=False).append(_turns(s))
        again = read_session(out)  # nothing of the conversation was lost on the way
        assert [(t.role, t.timestamp, t.text, t.tools) for t in again.turns] == \
            [(t.role, t.timestamp, t.text, t.tools) for t in s.turns], f


def differences(src: Path) -> list:
    """What differs between the sample in ``src`` and what the writer writes from it."""
    with tempfile.TemporaryDirectory(prefix="chrollo-sample-") as tmp:
        out = Path(tmp)
        render(src, out)
        want = {p.relative_to(out): p.read_bytes() for p in out.rglob("*.md")}
        have = {p.relative_to(src): p.read_bytes() for p in src.rglob("*.md")}
    return sorted(str(k) for k in want.keys() | have.keys() if want.get(k) != have.get(k))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 on a difference")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="chrollo-sample-home-") as home:
        os.environ["CHROLLO_HOME"] = home  # the writer's locks, never the user's own
        os.environ.pop("CHROLLO_MEMORIES_DIR", None)
        src = sample_vault()
        if a.check:
            diff = differences(src)
            print("\n".join(diff) or "the sample is what the writer writes")
            sys.exit(1 if diff else 0)
        with tempfile.TemporaryDirectory(prefix="chrollo-sample-") as tmp:
            out = Path(tmp)
            render(src, out)
            for p in src.rglob("*.md"):
                p.unlink()
            for p in sorted(out.rglob("*.md")):
                shutil.copyfile(p, src / p.relative_to(out))
                print(p.relative_to(out))


if __name__ == "__main__":
    main()
