"""Shared fixtures: a private CHROLLO_HOME per test, a frozen clock, the real CLI as a subprocess."""
from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# A test run started in the background by a non-interactive shell (`bash .ci/run &`, nohup)
# ignores SIGINT, and so does every process it starts: the tests that stop a build, an import
# or a mesh sync with Ctrl-C sent a signal nobody heard (a "killed" build went on to index
# every file). The default comes back here; what the tests start inherits it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from chrollo.session import SessionMeta, SessionWriter, ToolCall, Turn

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
NOW = "2026-11-01T12:00:00"  # the frozen clock every CLI run sees


@pytest.fixture(autouse=True)
def _never_the_real_home(tmp_path_factory, monkeypatch):
    """No test may read or write the machine's ~/.chrollo, even by accident."""
    monkeypatch.setenv("CHROLLO_HOME", str(tmp_path_factory.mktemp("default-home") / "chrollo"))


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A private CHROLLO_HOME (and no inherited vault override) for in-process calls."""
    h = tmp_path / "home"
    monkeypatch.setenv("CHROLLO_HOME", str(h))
    monkeypatch.delenv("CHROLLO_MEMORIES_DIR", raising=False)
    monkeypatch.setenv("CHROLLO_NOW", NOW)
    return h


def cli_env(home: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    env.update(CHROLLO_HOME=str(home), CHROLLO_NOW=NOW, PYTHONPATH=str(ROOT))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(args: list, home: Path, *, prefix: list | None = None, cwd=None, input=None, **env):
    """Run the real ``chrollo`` CLI in a subprocess."""
    cmd = (prefix or []) + [sys.executable, "-m", "chrollo", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=cli_env(home, **env),
                          cwd=cwd or home.parent, input=input, timeout=120)


def run_json(args: list, home: Path, **kw):
    p = run([*args, "--json"], home, **kw)
    assert p.stdout.strip(), p.stderr
    return p, json.loads(p.stdout)


def without_root_bypass() -> list:
    """A command prefix under which permission bits bite: root reads and writes everything, so
    drop the capabilities that let it (skips where that cannot be done)."""
    if os.geteuid() != 0:
        return []
    import shutil

    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: cannot make permission bits bite")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


@pytest.fixture
def cli(home):
    """``cli(args...)`` runs the CLI against this test's home."""
    def _run(*args, **kw):
        return run(list(args), home, **kw)
    return _run


def write_session(vault: Path, sid: str, start: str, turns: list, harness: str = "claude-code",
                  cwd: str = "/home/user/project", fmt: int = 1) -> Path:
    """Write a session through the real writer. ``turns``: (role, "HH:MM:SS" or full stamp, text|parts).

    ``fmt``: the file format. Search fixtures default to format 1 (their expected line
    numbers predate format 2; test_obsidian checks that both formats rank the same)."""
    t0 = dt.datetime.fromisoformat(start)
    meta = SessionMeta(sid, t0, harness, cwd, machine="testbox")
    out = []
    for role, when, body in turns:
        ts = dt.datetime.fromisoformat(when) if len(when) > 8 else dt.datetime.combine(t0.date(), dt.time.fromisoformat(when))
        parts = body if isinstance(body, list) else [body]
        out.append(Turn(role, ts, parts))
    from chrollo.privacy import writer_scrub  # (what capture hands the writer)

    return SessionWriter(meta, vault, fsync=False, fmt=fmt, scrub=writer_scrub).append(out)


@pytest.fixture
def make_session(home):
    return write_session


__all__ = ["ToolCall", "run", "run_json", "write_session", "SHARED", "ROOT", "NOW"]


def docstring_ids(tree) -> set:
    """ids of the docstring nodes of a parsed module (the AST checks leave docs aside)."""
    import ast

    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
