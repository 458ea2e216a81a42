"""The folder transport over a REAL Syncthing pair on 127.0.0.1: two chrollo nodes, each
pointing `chrollo mesh sync --folder` at its own replica of one Syncthing folder."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from meshkit import GOOD, Node, medium_name
from syncthing_kit import Pair, wait

if shutil.which("syncthing") is None:
    if os.environ.get("CI"):
        raise RuntimeError("syncthing is missing: .ci/run installs it (apt-get install -y syncthing)")
    pytest.skip("syncthing is not installed (apt-get install -y syncthing)", allow_module_level=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("st")
    pair = Pair(root)
    a, b = Node(root, "alpha"), Node(root, "bravo")
    a.pair(b)
    b.pair(a)
    a.session("aaaa0001-x", "alpha tunes the kafka consumer lag alerts")
    b.session("bbbb0001-x", "bravo rotates the postgres replication password=hunter2hunter2 monthly")
    yield pair, a, b, root
    pair.stop()


def replicated(src: Path, dst: Path, node_id: str, timeout: float = 30.0) -> None:
    """Wait until Syncthing has carried ``src/<node_id>/`` to ``dst`` byte for byte."""
    def same():
        want = {p.name: p.read_bytes() for p in (src / node_id).iterdir() if not p.name.startswith(".")}
        have = {p.name: p.read_bytes() for p in (dst / node_id).iterdir() if not p.name.startswith(".")}
        return want and want == have
    wait(same, timeout)


def sync(node: Node, data: Path):
    return node.sync("--folder", str(data))


def test_two_nodes_sync_both_ways_through_syncthing_and_a_stranger_gets_nothing(world):
    pair, a, b, root = world
    A, B = pair.a.data, pair.b.data
    assert sync(a, A)[0].returncode == 0          # alpha publishes (and its certificate)
    replicated(A, B, a.id)
    assert sync(b, B)[0].returncode == 0          # bravo learns alpha's cert, seals for it
    replicated(B, A, b.id)
    p, out = sync(a, A)                           # alpha takes bravo's file, seals for bravo
    assert p.returncode == 0 and out["peers"][0]["downloaded"] == 1, out
    replicated(A, B, a.id)
    p, out = sync(b, B)
    assert p.returncode == 0 and out["peers"][0]["downloaded"] == 1, out
    assert b"kafka consumer lag" in b"".join(b.peer_files("alpha").values())
    got = b"".join(a.peer_files("bravo").values())
    assert b"postgres replication" in got and b"hunter2hunter2" not in got
    # what Syncthing carried is sealed: no transcript text in either replica
    for data in (A, B):
        blob = b"".join(p.read_bytes() for p in data.rglob("*") if p.is_file())
        assert b"kafka" not in blob and b"postgres" not in blob
    # a third node with a valid identity, reading the same folder, pairs alpha: gets nothing
    eve = Node(root, "eve")
    eve.pair(a)
    p, out = sync(eve, B)
    assert out["peers"][0]["downloaded"] == 0 and not eve.peer_files("alpha")
    assert "nothing sealed for this node" in out["peers"][0]["note"]
    assert pair.loopback_only() == []


def test_tampering_in_the_syncthing_folder_is_refused(world):
    pair, a, b, root = world
    A, B = pair.a.data, pair.b.data
    if not a.peer_files("bravo"):
        pytest.skip("needs the first test's pairing")
    (fname,) = a.peer_files("bravo")
    good = a.peer_files("bravo")[fname]
    old_manifest = (B / b.id / "manifest.json").read_bytes()
    b.session("bbbb0002-x", "bravo's second session", start="2026-10-02T10:00:00")
    assert sync(b, B)[0].returncode == 0
    replicated(B, A, b.id)
    assert sync(a, A)[1]["peers"][0]["seq"] == 2
    outside = root / "outside.txt"
    outside.write_text("outside")
    bdir = B / b.id                               # a member tampers on its side; Syncthing carries it
    blob = medium_name(a.identity(), (bdir / "manifest.json").read_bytes(), fname)  # (its opaque name there)
    cases = {
        "replaced": lambda: (bdir / blob).write_bytes(b"CHS2" + b"\0" * 40),
        "symlink": lambda: ((bdir / blob).unlink(), (bdir / blob).symlink_to(outside)),
        "rollback": lambda: (bdir / "manifest.json").write_bytes(old_manifest),
        "unsigned": lambda: (bdir / "manifest.json").write_bytes(b'{"v": 2, "files": []}'),
    }
    (a.vault / "peers" / "bravo" / fname).unlink()  # alpha wants the file again
    for case, tamper in cases.items():
        tamper()
        (bdir / "2026-09-09_000000_foreign.md").write_bytes(GOOD)  # a file nobody signed
        wait(lambda: all(_same(bdir / n, A / b.id / n) for n in (blob, "manifest.json", "2026-09-09_000000_foreign.md")), 30)
        p, out = sync(a, A)
        errors = " ".join(out["peers"][0]["errors"])
        assert p.returncode == 1 and errors, (case, out)
        assert fname not in a.peer_files("bravo") and "2026-09-09_000000_foreign.md" not in a.peer_files("bravo")
        assert outside.read_text() == "outside"
    assert good  # (alpha had the genuine file before; the tampered copies never replaced it)
    assert not any(x.is_symlink() for x in a.vault.rglob("*"))


def _same(p: Path, q: Path) -> bool:
    if p.is_symlink() or q.is_symlink():
        return p.is_symlink() and q.is_symlink() and os.readlink(p) == os.readlink(q)
    return p.read_bytes() == q.read_bytes()
