"""No data loss: concurrent appenders and a kill -9 mid-append (real processes)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from chrollo.session import read_session
from conftest import ROOT

APPENDER = textwrap.dedent("""
    import datetime as dt, sys
    from pathlib import Path
    from chrollo.session import SessionMeta, SessionWriter, Turn, ToolCall
    who, n, vault = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    big = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    meta = SessionMeta("shared-session-0001", dt.datetime(2026, 6, 10, 14, 0, 0), "claude-code", "/w")
    w = SessionWriter(meta, vault, fsync=False)
    for j in range(n):
        body = f"writer {who} turn {j} " + "x" * big + f" end {who}-{j}"
        t = dt.datetime(2026, 6, 10, 14, 0, 0)
        w.append([Turn.user(body + "\\nsecond line " + who, t),
                  Turn.agent([ToolCall("Bash", f"echo {who} {j}"), f"reply {who}-{j}\\nline two"], t)])
""")


def _spawn(home, args):
    env = dict(os.environ, CHROLLO_HOME=str(home), PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", APPENDER, *map(str, args)], env=env)


def test_16_processes_x_100_turns_lose_duplicate_interleave_nothing(home, tmp_path):
    vault = tmp_path / "v"
    procs = [_spawn(home, [f"p{i:02d}", 100, vault]) for i in range(16)]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    files = list(vault.glob("*.md"))
    assert len(files) == 1, files  # one session, one file
    turns = read_session(files[0]).turns
    assert len(turns) == 16 * 100 * 2
    users = [t.text for t in turns if t.role == "user"]
    expected = {f"writer p{i:02d} turn {j}  end p{i:02d}-{j}\nsecond line p{i:02d}"
                for i in range(16) for j in range(100)}
    assert set(users) == expected and len(users) == len(expected)  # none lost, none duplicated
    # every user turn is directly followed by its own agent turn: no interleaving
    for u, a in zip(turns[0::2], turns[1::2]):
        who, j = u.text.split()[1], u.text.split()[3]
        assert a.text == f"reply {who}-{j}\nline two"
        assert a.tools == [f"<tool>$ echo {who} {j}</tool>"]
    # per writer, its turns are in order
    for i in range(16):
        mine = [int(t.split()[3]) for t in users if t.split()[1] == f"p{i:02d}"]
        assert mine == sorted(mine)


def test_kill_9_mid_append_leaves_earlier_turns_readable(home, tmp_path):
    vault = tmp_path / "v"
    p = _spawn(home, ["k", 100000, vault, 200_000])  # ~200 KB turns: kills land mid-write
    deadline = time.time() + 30
    while time.time() < deadline and not list(vault.glob("*.md")):
        time.sleep(0.01)
    time.sleep(0.3)
    p.send_signal(signal.SIGKILL)
    p.wait()
    f = next(vault.glob("*.md"))
    turns = read_session(f).turns
    assert len(turns) >= 2
    complete = [t for t in turns if t.role == "user"][:-1]  # the last one may be torn
    for j, t in enumerate(complete):
        assert t.text == f"writer k turn {j} {'x' * 200_000} end k-{j}\nsecond line k"
    # the session goes on: a new writer appends a clean turn after whatever was torn
    q = _spawn(home, ["after", 1, vault])
    assert q.wait(timeout=60) == 0
    tail = read_session(f).turns
    assert tail[-2].text == "writer after turn 0  end after-0\nsecond line after"
    assert tail[-1].text == "reply after-0\nline two"
