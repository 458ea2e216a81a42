"""Operating the mesh as a user would: a server that cannot listen, more than one git remote,
re-pairing, and what `mesh status` keeps — real CLI subprocesses, real git, real sockets."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess

import pytest

from conftest import run, run_json
from meshkit import mesh  # noqa: F401 (the fixture)


def bare(path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def no_traceback(p):
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr


# ------------------------------------------------------------------ mesh serve (#33 item 3)

def serve_fails(node, *args):
    p = run(["mesh", "serve", *map(str, args)], node.home)
    no_traceback(p)
    assert p.stdout == "" and "chrollo: error:" in p.stderr, p.stderr
    return p


def test_serve_on_a_taken_port_or_a_bad_address_is_a_clear_error(mesh):
    a = mesh("alpha")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        p = serve_fails(a, "--port", port)
        assert p.returncode == 1 and f"127.0.0.1:{port} is already in use" in p.stderr
        assert "hint:" in p.stderr and "--port" in p.stderr
    finally:
        taken.close()
    for bad in ("999.1.1.1", "no-such-host.invalid", "192.0.2.1"):  # (TEST-NET-1: not this machine's)
        p = serve_fails(a, "--bind", bad, "--port", 0)
        assert p.returncode == 2 and bad in p.stderr and "--bind" in p.stderr, (bad, p.stderr)
    p = run(["mesh", "serve", "--port", "70000"], a.home)
    no_traceback(p)
    assert p.returncode == 2 and "70000" in p.stderr


# ------------------------------------------------------------------ git: more than one remote (#33 item 5)

def branch_files(remote, node_id) -> set:
    p = subprocess.run(["git", "--git-dir", str(remote), "ls-tree", "--name-only", f"chrollo-mesh:{node_id}"],
                       capture_output=True, text=True)
    return set(p.stdout.split())


def test_a_second_git_remote_works_and_so_does_one_after_a_failed_fetch(mesh, tmp_path):
    a, b = mesh("alpha"), mesh("bravo")
    a.session("aaaa0001-x", "alpha deploys the kubernetes ingress with helm")
    b.session("bbbb0001-x", "bravo rotates the postgres replication password monthly")
    a.pair(b)
    b.pair(a)
    r1, r2 = bare(tmp_path / "r1.git"), bare(tmp_path / "r2.git")
    for n in (a, b, a, b):
        p, out = n.sync("--git", r1)
        assert p.returncode == 0, out
    for n in (a, b, a, b):  # the same sealed files, through a second remote
        p, out = n.sync("--git", r2)
        assert p.returncode == 0 and out["errors"] == [], out
    assert len(branch_files(r2, a.id)) == 2 and branch_files(r2, a.id) == branch_files(r1, a.id)
    # a remote that cannot be fetched says so (not "git mktree failed … unavailable") …
    r3 = tmp_path / "r3.git"
    p, out = a.sync("--git", r3)
    assert p.returncode == 1 and "fetch" in out["errors"][0] and "mktree" not in json.dumps(out), out
    # … and works once it exists
    bare(r3)
    p, out = a.sync("--git", r3)
    assert p.returncode == 0 and out["errors"] == [] and len(branch_files(r3, a.id)) == 2, out


# ------------------------------------------------------------------ re-pairing and removing (#33 item 8)

def hits(node, *query):
    p, out = run_json(["search", *query], node.home)
    assert p.returncode == 0, out
    return sorted({(h.get("peer"), h["session_id"]) for h in out["hits"]})  # one per file


def test_pairing_a_known_id_under_a_new_name_is_refused_and_remove_takes_its_files(mesh, tmp_path):
    a, b = mesh("alpha"), mesh("bravo")
    b.session("bbbb0001-x", "bravo rotates the postgres replication password monthly")
    a.pair(b)
    b.pair(a)
    shared = tmp_path / "shared"
    shared.mkdir()
    for n in (a, b, a, b, a):
        n.sync("--folder", shared)
    assert hits(a, "postgres", "replication") == [("bravo", "bbbb0001-x")]
    p, out = run_json(["mesh", "peers", "add", "--id", b.id, "--name", "desktop"], a.home)
    assert p.returncode == 2 and out["error"]["kind"] == "already_paired", out
    assert "bravo" in out["error"]["message"] and "peers remove bravo" in out["error"]["hint"]
    p = a.cli("mesh", "peers", "add", "--id", b.id, "--name", "desktop")
    assert p.returncode == 2 and "already paired as 'bravo'" in p.stderr
    assert [x["name"] for x in json.loads(a.cli("mesh", "peers", "--json").stdout)["peers"]] == ["bravo"]
    a.sync("--folder", shared)
    assert hits(a, "postgres", "replication") == [("bravo", "bbbb0001-x")]  # one copy, not two
    # the same name and ID again is fine (it may bring an address)
    assert a.cli("mesh", "peers", "add", "--id", b.id, "--name", "bravo").returncode == 0
    # remove: the peer is unpaired and what it sent goes from the vault
    p, out = run_json(["mesh", "peers", "remove", "bravo"], a.home)
    assert p.returncode == 0 and out["name"] == "bravo" and out["files_removed"] == 1, out
    assert not (a.vault / "peers" / "bravo").exists() and hits(a, "postgres", "replication") == []
    # paired again under a new name, its files come back once, under that name
    a.cli("mesh", "peers", "add", "--id", b.id, "--name", "desktop")
    p, out = a.sync("--folder", shared)
    assert p.returncode == 0 and out["peers"][0]["downloaded"] == 1, out
    assert hits(a, "postgres", "replication") == [("desktop", "bbbb0001-x")]
    # --keep-files keeps them
    p, out = run_json(["mesh", "peers", "remove", "desktop", "--keep-files"], a.home)
    assert p.returncode == 0 and out["files_removed"] == 0 and (a.vault / "peers" / "desktop").is_dir()


# ------------------------------------------------------------------ mesh status (#33 item 10)

def test_status_keeps_the_last_good_sync_and_shows_a_failure_apart(mesh, tmp_path):
    a, b = mesh("alpha"), mesh("bravo")
    b.session("bbbb0001-x", "bravo rotates the postgres replication password monthly")
    b.session("bbbb0002-x", "bravo tunes autovacuum", start="2026-10-02T10:00:00")
    a.pair(b)
    b.pair(a)
    shared = tmp_path / "shared"
    shared.mkdir()
    for n in (a, b, a, b):
        n.sync("--folder", shared)
    p, out = a.sync("--folder", shared)
    assert p.returncode == 0 and out["peers"][0]["files"] == 2
    good = json.loads(a.cli("mesh", "status", "--json").stdout)["peers"][0]
    assert good["last_sync"] and good["files"] == 2 and good["errors"] == 0 and not good.get("last_error")
    (shared / b.id / "manifest.json").write_bytes(b"not a signed manifest")  # the next sync fails
    p, out = a.sync("--folder", shared)
    assert p.returncode == 1 and out["peers"][0]["errors"]
    st = json.loads(a.cli("mesh", "status", "--json").stdout)["peers"][0]
    assert (st["last_sync"], st["files"], st["bytes"]) == (good["last_sync"], 2, good["bytes"])
    assert st["errors"] == 1 and st["last_error"] and st["last_failure"]
    text = a.cli("mesh", "status").stdout
    assert f"last sync {good['last_sync']} · 2 files" in text and "last attempt failed" in text, text


def test_the_git_mirror_is_owner_only(mesh, tmp_path):
    """#44: the mirror of a git remote (every peer's sealed files) was made 0755."""
    a = mesh("alpha")
    a.session("aaaa0001-x", "alpha deploys the kubernetes ingress with helm")
    r = bare(tmp_path / "r.git")
    p, out = a.sync("--git", r)
    assert p.returncode == 0, out
    mirrors = list((a.home / "mesh" / "git").glob("*.git"))
    assert mirrors and all(m.stat().st_mode & 0o777 == 0o700 for m in mirrors), \
        [oct(m.stat().st_mode) for m in mirrors]


def test_status_says_nothing_was_received_when_nothing_was(mesh, tmp_path):
    """#44: `mesh status` said "0 B received" for a peer that sent nothing, and after a sync
    that took nothing new still showed the bytes of earlier ones as "received"."""
    a, b = mesh("alpha"), mesh("bravo")
    a.pair(b)
    b.pair(a)
    shared = tmp_path / "shared"
    shared.mkdir()
    for n in (a, b, a):
        n.sync("--folder", shared)
    text = a.cli("mesh", "status").stdout
    assert "nothing received" in text and "0 B received" not in text, text
    b.session("bbbb0001-x", "bravo rotates the postgres replication password monthly")
    for n in (b, a):
        n.sync("--folder", shared)
    text = a.cli("mesh", "status").stdout
    assert "received in all (1 new in the last sync)" in text, text
    a.sync("--folder", shared)
    assert "(0 new in the last sync)" in a.cli("mesh", "status").stdout


def test_sync_to_a_missing_folder_says_so_once(mesh, tmp_path):
    """#44: the missing folder's error was printed for the publication and again for each peer."""
    a, b = mesh("alpha"), mesh("bravo")
    a.session("aaaa0001-x", "alpha deploys the kubernetes ingress with helm")
    a.pair(b)
    p = a.cli("mesh", "sync", "--folder", tmp_path / "nope")
    assert p.returncode == 1 and p.stderr.count("nope") == 1, p.stderr
    no_traceback(p)


def test_sync_to_a_read_only_folder_names_the_folder(mesh, tmp_path):
    """#44: a read-only shared folder's error named the node id ("Permission denied: LQL4-…")
    and asked to check "the path you gave"."""
    from conftest import without_root_bypass

    prefix = without_root_bypass()
    a = mesh("alpha")
    a.session("aaaa0001-x", "alpha deploys the kubernetes ingress with helm")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o555)
    try:
        p = run(["mesh", "sync", "--folder", shared, "--json"], a.home, prefix=prefix)
    finally:
        shared.chmod(0o755)
    no_traceback(p)
    out = json.loads(p.stdout)
    errors = out.get("errors") or [out.get("error", {}).get("message", "")]
    assert p.returncode == 1 and errors and all(str(shared) in e and a.id not in e for e in errors), out
    assert "path you gave" not in json.dumps(out)
