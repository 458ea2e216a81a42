"""#42: a folder's ``.git`` never makes chrollo run anything, nor hang it.

A downloaded archive carries its ``.git/config``; git runs what a config names (a partial
clone's lazy fetch through an ``ext::`` transport, a promisor's ``uploadpack``, fsmonitor…).
Every command and the MCP tools run in such a folder — the config in it and in a folder above
it, owned by this user and by another — and nothing runs: no marker file appears, no ``git``
is started (a ``git`` on PATH that logs, and one in the folder reached through an empty PATH
entry), and each finishes within its bound. Real git builds the repositories; real CLI
subprocesses; the real MCP SDK client."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import ROOT, cli_env, write_session

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
NOBODY = 65534
BOUND = 2.0  # seconds any command may take here (doctor, which fires sample hooks, gets more)
SID = "6e6e0000-0000-4000-8000-0000000000{:02d}"


def git(*args, cwd=None):
    p = subprocess.run([*GIT, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def _marker_script(path, marker) -> None:
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\nexec /usr/bin/env -u PATH true\n")
    path.chmod(0o755)


def hostile_repository(top, marks, vector: str) -> None:
    """A repository at ``top`` whose HEAD commit is missing (so git would fetch it lazily) and
    whose config names a command for that fetch (``vector``)."""
    git("init", "-q", top)
    (top / "f").write_text("x\n")
    git("add", "f", cwd=top)
    git("commit", "-qm", "one", cwd=top)
    git("repack", "-qad", cwd=top)
    # HEAD names a commit the repository does not have: only a (lazy) fetch could give it
    (top / ".git" / "refs" / "heads" / "main").write_text("1" * 40 + "\n")
    for p in (top / ".git" / "objects" / "pack").glob("*"):
        p.unlink()
    cfg = top / ".git" / "config"
    text = cfg.read_text() + "[core]\n\trepositoryformatversion = 1\n" \
        f"\tfsmonitor = touch {marks / 'fsmonitor-ran'}\n" \
        f"\tsshCommand = touch {marks / 'ssh-ran'}\n" \
        "[extensions]\n\tpartialClone = origin\n"
    if vector == "ext":
        text += ('[protocol "ext"]\n\tallow = always\n[protocol]\n\tallow = always\n'
                 f'[remote "origin"]\n\turl = "ext::sh -c touch% {marks / "ext-ran"}"\n\tpromisor = true\n')
    else:  # a local path (no URL key), fetched through the command uploadpack names
        other = top.parent / (top.name + "-origin")
        git("init", "-q", "--bare", other)
        text += ('[protocol "file"]\n\tallow = always\n[protocol]\n\tallow = always\n'
                 f'[remote "origin"]\n\turl = {other}\n\tpromisor = true\n'
                 f'\tuploadpack = "touch {marks / "uploadpack-ran"}; git-upload-pack"\n')
    cfg.write_text(text)


@pytest.fixture(params=["ext-here", "uploadpack-here", "ext-above-other-user", "uploadpack-above-other-user"])
def place(request, tmp_path):
    """(working folder, marker folder, env): the hostile ``.git`` in the working folder itself,
    or in a shared folder above it owned by another user."""
    vector, _, where = request.param.partition("-")
    marks = tmp_path / "marks"
    marks.mkdir()
    if where == "here":
        top = tmp_path / "download"
        hostile_repository(top, marks, vector)
        work = top / "src"
        work.mkdir()
    else:
        if os.geteuid() != 0:
            pytest.skip("making a folder another user owns needs root")
        top = tmp_path / "shared"
        hostile_repository(top, marks, vector)
        for dirpath, dirnames, filenames in os.walk(top):
            for n in dirnames + filenames:
                os.lchown(os.path.join(dirpath, n), NOBODY, NOBODY)
        os.lchown(top, NOBODY, NOBODY)
        work = top / "mine"
        work.mkdir()
    # a `git` first on PATH that leaves a mark, and `git`/`rg` in the folder an empty PATH entry reaches
    logging_bin = tmp_path / "bin"
    logging_bin.mkdir()
    _marker_script(logging_bin / "git", marks / "git-started")
    for name in ("git", "rg", "chrollo"):
        _marker_script(work / name, marks / f"cwd-{name}-ran")
    env = {"PATH": f":{logging_bin}:{os.environ['PATH']}", "HOME": str(tmp_path / "user")}
    (tmp_path / "user").mkdir()
    return work, marks, env


def _run(args, home, cwd, env, bound=BOUND, input=None):
    started = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "chrollo", *map(str, args)], input=input, capture_output=True,
                       env=cli_env(home, **env), cwd=str(cwd), timeout=60)
    took = time.monotonic() - started
    assert b"Traceback" not in p.stderr, p.stderr.decode(errors="replace")
    assert took <= bound, f"chrollo {' '.join(map(str, args))} took {took:.1f}s"
    return p


def _payload(sid, cwd, event, **kw):
    return json.dumps({"session_id": sid, "transcript_path": None, "cwd": str(cwd), "hook_event_name": event,
                       "model": "gpt-5", "turn_id": "t1", **kw}).encode()


def test_no_command_nor_mcp_tool_runs_what_a_folders_git_config_names(place, tmp_path):
    """Every command that may ask who the folder's repository is — capture (creating the file,
    with an exclusion by URL in force), import of a transcript from the folder, search,
    sessions, forget, exclude, stats, read, init, recall, index, doctor, config, install and
    uninstall, demo, mesh status — and both MCP tools, run from the hostile folder."""
    work, marks, env = place
    home = tmp_path / "home"
    vault = home / "memories"
    write_session(vault, SID.format(1), "2026-10-01T10:00:00",
                  [("user", "10:00:00", "an older question about the lighthouse")], cwd=str(work))

    # capture creating the session file, with and then without an exclusion by URL in force
    for n, rule in enumerate((None, "github.com/someone/private")):
        if rule:
            _run(["exclude", "add", rule], home, work, env)
        sid = SID.format(10 + n)
        for event, extra in (("UserPromptSubmit", {"prompt": "a question in the downloaded folder"}),
                             ("Stop", {"last_assistant_message": "an answer"})):
            p = _run(["hook", event, "--harness", "codex"], home, work, env, input=_payload(sid, work, event, **extra))
            assert p.returncode == 0, p.stderr
    captured = [f for f in vault.glob("*.md") if "6e6e0000" in f.name and f.name.endswith(SID.format(10)[:8] + ".md")]
    assert captured, sorted(f.name for f in vault.glob("*.md"))

    # import: a transcript whose cwd is the folder (its session files are created there too)
    src = tmp_path / "claude" / "projects" / "-x"
    src.mkdir(parents=True)
    fixture = next((ROOT / "tests" / "fixtures" / "harness" / "transcripts" / "claude-code").rglob("*.jsonl"))
    (src / fixture.name).write_text(fixture.read_text("utf-8").replace('"cwd":"/home/user/project"',
                                                                      json.dumps({"cwd": str(work)})[1:-1]))
    p = _run(["import", "claude-code", "--source", src.parent], home, work, env, bound=10)
    assert p.returncode == 0 and any(str(work) in f.read_text() for f in vault.glob("*.md")), p.stderr
    settings = tmp_path / "user" / "settings.json"
    for args in (["config"], ["install", "claude-code", "--config", settings], ["uninstall", "claude-code", "--config", settings],
                 ["demo", "--keep", tmp_path / "demo"], ["mesh", "status"],
                 ["search", "lighthouse", "--project", work], ["sessions", "--project", work],
                 ["forget", "--project", work, "--dry-run"], ["exclude", "add", work], ["exclude", "list"],
                 ["exclude", "remove", work], ["stats"], ["read", SID.format(1)], ["init", "--list"],
                 ["recall", "log"], ["index"], ["search", "lighthouse"]):
        p = _run(args, home, work, env)
        assert p.returncode in (0, 1), (args, p.stderr)
    _run(["doctor"], home, work, env, bound=30)

    async def mcp_calls():
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        params = StdioServerParameters(command=sys.executable, args=["-m", "chrollo", "mcp"],
                                       env=cli_env(home, **env), cwd=str(work))
        async with Client(params) as client:
            await client.list_tools()
            for project in (str(work), str(work.parent), "download"):
                r = await client.call_tool("read_memory", {"query": "lighthouse", "project": project})
                assert r.content
            r = await client.call_tool("read_memory_file", {"path": next(vault.glob("*.md")).name, "line": 1})
            assert r.content

    pytest.importorskip("mcp", reason="the test extra is not installed")
    started = time.monotonic()
    asyncio.run(mcp_calls())
    assert time.monotonic() - started <= 4 * BOUND

    assert sorted(os.listdir(marks)) == []


def test_an_empty_or_relative_path_entry_never_finds_the_working_folders_programs(tmp_path, monkeypatch):
    """``PATH=:$PATH`` (or ``.``/``bin`` relative entries) means the working folder to execvp
    and shutil.which: chrollo's own lookup skips them, for rg, git, chrollo and the harnesses."""
    from chrollo.executables import which

    work = tmp_path / "download"
    (work / "bin").mkdir(parents=True)
    for name in ("rg", "git", "chrollo"):
        for d in (work, work / "bin"):
            _marker_script(d / name, tmp_path / "ran")
    real = tmp_path / "real"
    real.mkdir()
    _marker_script(real / "git", tmp_path / "ok")
    monkeypatch.chdir(work)
    monkeypatch.setenv("PATH", f":.:bin:{real}")
    assert which("git") == str(real / "git")
    assert which("rg") is None and which("chrollo") is None
    assert shutil.which("rg") is not None  # (what the standard lookup would have run)
