"""#44: the faults real machines have. A long command stopped by Ctrl-C, SIGTERM or SIGKILL
ends at once, prints no traceback, leaves no lock held and no orphan behind, and the next
command works; a full disk is a clear error; a FIFO where a file is read is skipped, never
waited on. Real CLI subprocesses, real signals, real rlimits, a generated vault."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, cli_env, run

# (the build's worker pool starts above POOL_BYTES: scaled down so a small vault uses it)
_SMALL_POOL = ("import sys; from chrollo.index import build as index; index.POOL_BYTES = 1 << 20; "
               "index.CHUNK_BYTES = 1 << 17; from chrollo.entry import main; sys.argv[0] = 'chrollo'; main()")


def _vault(root: Path, n: int = 1500) -> Path:
    vault = root / "vault"
    vault.mkdir()
    body = ("---\nsession_id: \"{sid}\"\ndate: \"{d}\"\nharness: \"claude-code\"\n---\n\n"
            "[{d} 10:00:00] [User]\n{text}\n\n[{d} 10:00:30] [Agent]\nok, noted.\n")
    for i in range(n):
        ts = time.gmtime(1_600_000_000 + i * 3600)
        d = time.strftime("%Y-%m-%d", ts)
        sid = f"{i:08x}-0000-4000-8000-000000000000"
        text = " ".join(f"word{(i * 7 + k) % 9973}x" for k in range(900)) + (" zebracorn" if i == 3 else "")
        (vault / f"{time.strftime('%Y-%m-%d_%H%M%S', ts)}_{sid[:8]}.md").write_text(body.format(sid=sid, d=d, text=text))
    return vault


def _start_build(home: Path, vault: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _SMALL_POOL, "index", "--rebuild", "--dir", str(vault)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(home),
                            cwd=str(home.parent), start_new_session=True)


def _midway(home: Path, vault: Path, proc: subprocess.Popen, k: int) -> bool:
    """Wait until the command's workers are running, then a little. Returns whether a worker
    was seen (or the command had already ended): checked when seen, not after the extra wait,
    in which a loaded machine's workers may finish their batch and be gone again."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None or _children_of(proc.pid):
            time.sleep(0.03 * k)
            return True
        time.sleep(0.005)
    return False


def _procs() -> list:
    """(pid, ppid, process group) of every live process (a zombie is dead: not listed)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                state, ppid, pgrp = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[:3]
            except (OSError, ValueError):
                continue
            if state != "Z":
                out.append((int(d), int(ppid), int(pgrp)))
    return out


def _children_of(pid: int) -> list:
    return [p for p, ppid, _g in _procs() if ppid == pid]


def _group_gone(pgid: int) -> bool:
    """Whether every process of the group has ended (within a second: a killed worker's exit
    takes a moment)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < 1:
        if not any(g == pgid for _p, _pp, g in _procs()):
            return True
        time.sleep(0.01)
    return False


def _search_finds(home: Path, vault: Path) -> None:
    p = run(["index", "--dir", vault], home)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    t0 = time.monotonic()
    s = run(["search", "zebracorn", "--dir", vault], home)
    assert s.returncode == 0 and "zebracorn" in s.stdout, (s.stdout, s.stderr)
    assert time.monotonic() - t0 < 10


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_during_a_rebuild_stops_it_cleanly(home, tmp_path, sig):
    """The signal goes to the whole process group, as a terminal's Ctrl-C does: the build ends
    within seconds, no traceback (a worker's KeyboardInterrupt) on stderr, no worker left, and
    the next `chrollo index` and a search work."""
    vault = _vault(tmp_path)
    for k in range(6):
        proc = _start_build(home, vault)
        _midway(home, vault, proc, k)
        os.killpg(proc.pid, sig)
        try:
            out, err = proc.communicate(timeout=8)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"try {k}: the interrupted build hung")
        assert b"Traceback" not in err, (k, err.decode()[-2000:])
        assert proc.returncode != 0 or b"indexed" in out, (k, proc.returncode, err)
        assert _group_gone(proc.pid), f"try {k}: a worker of the build outlived it"
    _search_finds(home, vault)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")
def test_a_build_killed_with_sigkill_leaves_no_worker_holding_its_lock(home, tmp_path):
    """kill -9 of the build alone (not its group): its workers die with it — none prints a
    traceback, none keeps the background build's lock (an inherited file) — so the next build
    takes the lock at once."""
    from chrollo.index import build as index

    vault = _vault(tmp_path)
    code = ("import sys; from chrollo.index import build as index; index.POOL_BYTES = 1 << 20; index.CHUNK_BYTES = 1 << 17; "
            "index.remove(sys.argv[1]); index.build_alone(sys.argv[1])")
    for k in range(3):
        proc = subprocess.Popen([sys.executable, "-c", code, str(vault)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=cli_env(home), start_new_session=True)
        _midway(home, vault, proc, k)
        workers = _children_of(proc.pid)
        assert index.building(str(vault)) and workers, k
        proc.kill()
        proc.wait()
        t0 = time.monotonic()
        while index.building(str(vault)) and time.monotonic() - t0 < 5:
            time.sleep(0.01)
        held = time.monotonic() - t0
        _out, err = proc.communicate(timeout=10)  # (EOF: every holder of the pipe, workers too, is gone)
        assert held < 0.25, (k, held)
        assert b"Traceback" not in err, err.decode()[-2000:]
    assert index.build_alone(str(vault)) is not None
    _search_finds(home, vault)


def test_import_skips_a_fifo_named_like_a_transcript_instead_of_hanging(home, tmp_path):
    """A FIFO named `*.jsonl` in the source folder (nobody writes to it): import never opens it
    for reading — sorting the files by start time used to block on it forever."""
    src = tmp_path / "chats"
    src.mkdir()
    (src / "real.jsonl").write_text(
        '{"role": "user", "content": "the fifo test question", "timestamp": "2026-05-01T10:00:00Z", '
        '"session_id": "fifo-0001"}\n')
    os.mkfifo(src / "a-pipe.jsonl")
    try:
        p = subprocess.run([sys.executable, "-m", "chrollo", "import", "jsonl", "--source", str(src), "--json"],
                           capture_output=True, text=True, env=cli_env(home), cwd=str(tmp_path), timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("import hung on the FIFO")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["imported"] == 1 and "Traceback" not in p.stderr
    pipe = [f for f in out["problems"] if f["path"].endswith("a-pipe.jsonl")]
    assert pipe and pipe[0]["status"] == "skipped", out


def test_index_on_a_full_disk_is_a_clear_error_and_the_next_index_works(home, tmp_path):
    """RLIMIT_FSIZE stands in for a full disk (SQLite's write fails as it does on ENOSPC): exit 1
    with the error envelope, no traceback; with room again the index builds and search finds."""
    import resource

    vault = _vault(tmp_path, 300)

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))   # the index of these 2.7 MB is ~0.5 MB

    for extra in ([], ["--rebuild"]):
        p = subprocess.run([sys.executable, "-m", "chrollo", "index", "--dir", str(vault), *extra, "--json"],
                           capture_output=True, text=True, env=cli_env(home), cwd=str(tmp_path),
                           preexec_fn=small_files, timeout=120)
        assert p.returncode == 1 and "Traceback" not in p.stderr, (p.stdout, p.stderr)
        assert json.loads(p.stdout)["error"]["kind"] == "index_unwritable"
        human = subprocess.run([sys.executable, "-m", "chrollo", "index", "--dir", str(vault), *extra],
                               capture_output=True, text=True, env=cli_env(home), cwd=str(tmp_path),
                               preexec_fn=small_files, timeout=120)
        assert human.returncode == 1 and "could not be written" in human.stderr and "Traceback" not in human.stderr
    _search_finds(home, vault)


def test_a_forget_killed_midway_is_completed_by_the_next_forget(home, tmp_path):
    """What a `forget --lines` killed midway leaves — a file scrubbed but not yet renamed (its
    title holds the marker, its name the forgotten word), a rename cut between its link and
    unlink (two names), the links to it not yet following, a temporary file of the dead
    process — is completed by the next forget: the vault ends as an uninterrupted one leaves it."""
    import shutil

    from conftest import write_session

    vault = tmp_path / "vault"
    for i in range(3):  # format 2: each name holds its title's words; b and c link to the one before
        write_session(vault, f"{'abc'[i] * 8}-0000-4000-8000-000000000000", f"2026-05-0{i + 1}T10:00:00",
                      [("user", "10:00:00", f"refund race {i}"), ("agent", "10:00:05", "lock it")],
                      cwd="/home/user/project", fmt=2)
    first = sorted(vault.iterdir())
    whole = tmp_path / "whole"
    shutil.copytree(vault, whole)
    assert run(["forget", "--lines", "refund", "--yes", "--dir", whole], home).returncode == 0
    done = {p.name: p.read_bytes() for p in whole.iterdir()}
    renamed = sorted(done)
    assert [p.name[:17] for p in first] == [n[:17] for n in renamed] and all("refund" not in n for n in renamed)
    # the first file scrubbed, its rename not made; the second renamed as far as its link
    def unfollowed(name):  # (its bytes as the whole forget leaves them, its link to the first as it was)
        return done[name].replace(f"[[{renamed[0][:-3]}]]".encode(), f"[[{first[0].stem}]]".encode())
    first[0].write_bytes(unfollowed(renamed[0]))
    first[1].write_bytes(unfollowed(renamed[1]))
    os.link(first[1], vault / renamed[1])
    (vault / f".{first[2].name}.forget.999999999.tmp").write_bytes(b"half")
    p = run(["forget", "--lines", "refund", "--yes", "--dir", vault, "--json"], home)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    got = {q.name: q.read_bytes() for q in vault.iterdir()}
    assert sorted(got) == sorted(done), p.stdout
    assert [n for n in got if got[n] != done[n]] == [], p.stdout


# (redaction's pool starts above POOL_MIN_BYTES, publishing redacts a batch per BATCH_BYTES:
# both scaled down so a small vault is redacted by worker processes, batch after batch)
_SMALL_REDACT = ("import sys; from chrollo import redact; redact.POOL_MIN_BYTES = 0; "
                 "from chrollo.mesh import manifests; manifests.BATCH_BYTES = 1 << 20; "
                 "from chrollo.entry import main; sys.argv[0] = 'chrollo'; main()")


@pytest.mark.skipif(not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2, reason="Linux /proc, 2+ cores")
def test_ctrl_c_during_a_redacting_mesh_sync_stops_it_cleanly(home, tmp_path):
    """Ctrl-C (SIGINT to the group) while `mesh sync` redacts what it publishes on every core:
    it ends within seconds, no worker's traceback, no worker left (one would hold the publish
    lock it inherited), and the next sync works."""
    vault = home / "memories"
    vault.parent.mkdir(parents=True)
    _vault(tmp_path).rename(vault)
    assert run(["mesh", "init", "--name", "fuzz"], home).returncode == 0
    shared = tmp_path / "shared"
    shared.mkdir()
    interrupted = 0
    for k in range(6):
        proc = subprocess.Popen([sys.executable, "-c", _SMALL_REDACT, "mesh", "sync", "--folder", str(shared)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(home),
                                cwd=str(tmp_path), start_new_session=True)
        assert _midway(home, vault, proc, k), f"try {k}: no redaction worker started"
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:  # (it ended between the worker seen and the Ctrl-C: no try)
            assert proc.wait() == 0
            continue
        interrupted += 1
        try:
            _out, err = proc.communicate(timeout=8)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"try {k}: the interrupted sync hung")
        assert b"Traceback" not in err, (k, err.decode()[-2000:])
        assert _group_gone(proc.pid), f"try {k}: a worker of the sync outlived it"
        from chrollo import layout
        from chrollo.vault import open_lock
        import fcntl

        fd = open_lock(layout.mesh_publish_lock(str(home)))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (free: nobody holds it)
        finally:
            os.close(fd)
    assert interrupted >= 3, f"only {interrupted} of 6 syncs were still running when Ctrl-C came"
    p = run(["mesh", "sync", "--folder", shared], home)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
