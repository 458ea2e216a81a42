"""Issue 47 item 4: no cliff, whatever delivered the files. A vault that grew behind its index
(files another program wrote: a sync tool, a restored backup) is caught up by one detached
build a search leaves behind — never two at once, a dead build's lock taken over — and every
index state (none, stale, being built, killed mid-way, damaged, another version) gives the
results a search without the index gives. Real CLI subprocesses, real rg, frozen clock."""
from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chrollo.index import build as index_build
from chrollo.index import store as index_store
from chrollo.layout import log_file
from conftest import ROOT, cli_env, run, run_json, write_session

WORDS = ("falcon quartz ingest worker parser lantern cobalt ripple meadow harbor tundra "
         "glacier saffron orbit velvet beacon parse_config loadSettings").split()
QUERIES = ["falcon quartz", "parse config", "glacier saffron orbit", "harbor"]
# (the selection of a large vault's best files at the tests' size: above 12 files a vault is
# "large"; the catch-up shares are retrieval/tuning.py's own)
KNOBS = {"CHROLLO_SELECT_AFTER": 12, "CHROLLO_SELECT_FILES": 5}


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))


def _sessions(folder: Path, rng: random.Random, first: int, n: int) -> None:
    for k in range(first, first + n):
        turns = [("user" if j % 2 == 0 else "agent", f"10:{j:02d}:00", _text(rng)) for j in range(rng.randint(1, 4))]
        write_session(folder, f"s{k:06d}-{rng.randrange(16**6):06x}", f"2026-0{1 + k % 9}-{1 + k % 28:02d}T10:00:00",
                      turns)


def _another_program_adds(vault: Path, staging: Path) -> None:
    """A sync tool delivering sessions: plain file writes by a process that is not chrollo."""
    code = ("import os, sys\n"
            "for name in sorted(os.listdir(sys.argv[1])):\n"
            "    with open(os.path.join(sys.argv[1], name), 'rb') as src, "
            "open(os.path.join(sys.argv[2], name), 'wb') as dst:\n"
            "        dst.write(src.read())\n")
    subprocess.run([sys.executable, "-c", code, str(staging), str(vault)], check=True)


@pytest.fixture
def grown(home, tmp_path):
    """A vault of 20 sessions indexed by `chrollo index`, then grown to 100 by another program."""
    rng = random.Random(47)
    vault, staging = tmp_path / "vault", tmp_path / "staging"
    _sessions(vault, rng, 0, 20)
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)  # (files changed within RACY_NS are read directly)
    p = run(["index", "--dir", vault], home)
    assert p.returncode == 0, p.stderr
    _sessions(staging, rng, 20, 80)
    _another_program_adds(vault, staging)
    return vault


def search_out(home: Path, vault: Path, query: str, index: bool = True) -> tuple[str, str]:
    """(stdout, stderr) of `chrollo search QUERY --dir VAULT --json`."""
    p = run(["search", query, "--dir", vault, "--json"], home, CHROLLO_INDEX="1" if index else "0", **KNOBS)
    assert p.returncode == 0, p.stderr
    return p.stdout, p.stderr


def indexed_files(vault: Path) -> int:
    con = sqlite3.connect(index_store.db_path(str(vault)))
    try:
        return con.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        con.close()


def builds(home: Path) -> list:
    """The background builds that ran, as their log lines say (one line each, when done)."""
    try:
        lines = Path(log_file("index")).read_text().splitlines()
    except OSError:
        return []
    return [line for line in lines if "background build of" in line]


def wait_for_builds(home: Path, n: int, timeout: float = 60) -> list:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = builds(home)
        if len(got) >= n:
            return got
        time.sleep(0.05)
    raise AssertionError(f"{n} background build(s) never finished: {builds(home)}")


def read_of(line: str) -> int:
    return int(line.split(" read ")[1].split()[0])


_HOLDER = """\
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""

# A real background build (build_alone: the lock, then the build), slowed between its segments
# so that it can be killed mid-way, after it committed some and before the last.
_SLOW_BUILD = """\
import sys, time
from chrollo.index import build as b
b.CHUNK_BYTES = 2000
real = b._tokenised
def slow(todo):
    for got in real(todo):
        yield got
        print("segment", flush=True)
        time.sleep(0.3)
b._tokenised = slow
b.build_alone(sys.argv[1])
"""


def hold_lock(home: Path, vault: Path) -> subprocess.Popen:
    """A process holding the `.building` lock, as a build under way does."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, index_store.db_path(str(vault)) + ".building"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=cli_env(home))
    assert proc.stdout.readline().strip() == "held"
    return proc


def killed_build(home: Path, vault: Path, sig: int) -> None:
    """A background build of ``vault`` killed with ``sig`` once it committed a segment."""
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_BUILD, str(vault)], stdout=subprocess.PIPE, text=True,
                            env=cli_env(home))
    assert proc.stdout.readline().strip() == "segment"
    assert index_build.building(str(vault))
    proc.send_signal(sig)
    proc.wait(timeout=30)
    assert not index_build.building(str(vault))  # (the kernel let go of its flock)


# ----------------------------------------------------------------------------- one catch-up

def test_a_search_of_a_vault_grown_behind_its_index_leaves_one_catch_up_build(grown, home):
    """80 of 100 files delivered by another program: the first search answers as a search
    without the index does, says a build is under way and leaves exactly one, which indexes
    every file; the searches after it use the index and still give the same answer."""
    vault = grown
    want = {q: search_out(home, vault, q, index=False)[0] for q in QUERIES}
    assert indexed_files(vault) == 20
    out, err = search_out(home, vault, QUERIES[0])
    assert out == want[QUERIES[0]]
    assert "background" in err and "behind" in err
    done = wait_for_builds(home, 1)
    assert len(done) == 1 and read_of(done[0]) == 80
    assert indexed_files(vault) == 100
    for q in QUERIES:
        out, err = search_out(home, vault, q)
        assert out == want[q], q
        assert "background" not in err
    time.sleep(0.5)
    assert len(builds(home)) == 1  # (an index in step starts none)


def test_searches_at_once_leave_one_build_and_a_build_under_way_is_not_doubled(grown, home):
    """Four searches started together leave one build that reads the new files (a process
    that finds the lock taken reads none); while a build holds the lock, searches start none."""
    vault = grown
    holder = hold_lock(home, vault)
    try:
        for q in QUERIES[:2]:
            _out, err = search_out(home, vault, q)
            assert "background" not in err
        time.sleep(0.5)
        assert builds(home) == [] and indexed_files(vault) == 20
    finally:
        holder.stdin.close()
        holder.wait()
    procs = [subprocess.Popen([sys.executable, "-m", "chrollo", "search", q, "--dir", str(vault), "--json"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=cli_env(home, **KNOBS))
             for q in QUERIES]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    done = wait_for_builds(home, 1)
    time.sleep(1.0)  # (a second one, had it started, would be done by now)
    done = builds(home)
    assert sum(read_of(line) for line in done) == 80
    assert sum(1 for line in done if read_of(line)) == 1
    assert indexed_files(vault) == 100


# ----------------------------------------------------------------------------- every state

def _damage(vault: Path, how: str) -> None:
    db = index_store.db_path(str(vault))
    if how == "deleted":
        index_store.remove(str(vault))
    elif how == "garbage":
        data = bytearray(Path(db).read_bytes())
        for i in range(0, len(data), 997):
            data[i] ^= 0x5A
        Path(db).write_bytes(bytes(data))
    elif how == "other_version":
        con = sqlite3.connect(db)
        con.execute("UPDATE meta SET v = '0.0.0-other' WHERE k = 'version'")
        con.commit()
        con.close()


@pytest.mark.parametrize("state", ["stale", "deleted", "garbage", "other_version", "being_built",
                                   "killed_sigkill", "killed_sigint"])
def test_every_index_state_gives_the_results_of_no_index_then_catches_up(grown, home, state):
    vault = grown
    want = {q: search_out(home, vault, q, index=False)[0] for q in QUERIES}
    holder = None
    if state in ("deleted", "garbage", "other_version"):
        _damage(vault, state)
    elif state == "being_built":
        holder = hold_lock(home, vault)
    elif state.startswith("killed"):
        killed_build(home, vault, signal.SIGKILL if state == "killed_sigkill" else signal.SIGINT)
        assert 20 <= indexed_files(vault) < 100  # (mid-way: some segments committed, not all)
    try:
        for q in QUERIES:
            out, _err = search_out(home, vault, q)
            assert out == want[q], (state, q)
        if holder is not None:
            time.sleep(0.5)
            assert builds(home) == []  # (a build under way is not doubled)
    finally:
        if holder is not None:
            holder.stdin.close()
            holder.wait()
    if holder is not None:
        search_out(home, vault, QUERIES[0])  # (its lock let go: this one leaves the build)
    wait_for_builds(home, 1)
    assert indexed_files(vault) == 100
    for q in QUERIES:
        assert search_out(home, vault, q)[0] == want[q], (state, q, "caught up")


def test_the_recall_hook_on_a_vault_grown_behind_its_index_leaves_one_catch_up_build(grown, home, tmp_path):
    """The hook finds most of the vault missing from the index (its listing says so): it
    answers as ever (exit 0, its reply) and leaves one build, which indexes every file."""
    from hookkit import hook, ok

    body = {"session_id": "5ca1e000-0000-4000-8000-000000000047", "hook_event_name": "UserPromptSubmit",
            "cwd": str(tmp_path), "prompt": "what about the falcon quartz parser?",
            "transcript_path": str(tmp_path / "none.jsonl")}
    p = hook(home, "claude-code", "UserPromptSubmit", body, CHROLLO_MEMORIES_DIR=grown, CHROLLO_CAPTURE="off",
             **KNOBS)
    ok(p)
    assert b"falcon" in p.stdout
    done = wait_for_builds(home, 1)
    assert len(done) == 1 and read_of(done[0]) == 80
    assert indexed_files(grown) == 100


def test_a_complete_search_without_the_selection_also_asks_for_the_catch_up(grown, home, monkeypatch):
    """The index's read plan (a search the selection leaves to it) reads the 80 new files
    directly, as rg would, and says a build is due; an index in step says nothing."""
    from chrollo import retrieval
    from chrollo.retrieval import tuning

    monkeypatch.setattr(tuning, "INDEX_MIN_FILES", 0)
    monkeypatch.setattr(tuning, "SELECT_AFTER", 12)
    monkeypatch.setattr(tuning, "SELECT_FILES", 0)  # (no selection: the plan's path)
    monkeypatch.setenv("CHROLLO_INDEX", "1")
    got = retrieval.search("falcon quartz", dir=str(grown))
    assert got.unindexed == os.path.realpath(grown)
    monkeypatch.setenv("CHROLLO_INDEX", "0")
    assert retrieval.search("falcon quartz", dir=str(grown)).to_json() == got.to_json()
    monkeypatch.setenv("CHROLLO_INDEX", "1")
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)  # (files changed within RACY_NS are read directly)
    index_build.build(str(grown))
    again = retrieval.search("falcon quartz", dir=str(grown))
    assert again.unindexed is None and again.to_json() == got.to_json()


_RG_LOG = """#!/bin/sh
printf '%s\\n' "$*" >> "{log}"
exec "{rg}" "$@"
"""


def test_files_the_index_cannot_vouch_for_are_read_by_rg_as_a_walk_reads_them(home, tmp_path):
    """Files another program delivered (under DIRECT_SCAN_SHARE of the vault) were tokenised
    in Python, at about a fifth of rg's speed: reading them directly could cost more than a
    plain scan of the whole vault. rg reads them now — named on its command line, with the
    selection's regex a walk uses — and the answer is the walk's."""
    from chrollo.rg import rg_path

    rng = random.Random(48)
    vault, staging = tmp_path / "vault", tmp_path / "staging"
    _sessions(vault, rng, 0, 40)
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    assert run(["index", "--dir", vault], home).returncode == 0
    _sessions(staging, rng, 40, 4)
    _another_program_adds(vault, staging)
    log, wrapper = tmp_path / "rg.log", tmp_path / "rg"
    wrapper.write_text(_RG_LOG.format(log=log, rg=rg_path()))
    wrapper.chmod(0o755)
    want = search_out(home, vault, "falcon quartz", index=False)[0]
    log.write_text("")
    p = run(["search", "falcon quartz", "--dir", vault, "--json"], home, CHROLLO_INDEX="1", CHROLLO_RG=wrapper,
            **KNOBS)
    assert p.returncode == 0, p.stderr
    assert p.stdout == want, p.stderr
    added = {str(vault / name) for name in os.listdir(staging) if name.endswith(".md")}
    calls = log.read_text().splitlines()
    # (the walk's regex is on the command line, or in rg's stdin once the query's forms make it long)
    assert len(added) == 4 and any(all(a in c for a in added) and ("[A-Za-z0-9_]*" in c or " -f - " in c)
                                   for c in calls), calls
