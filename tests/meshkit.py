"""Test kit for the mesh: nodes with private homes (real CLI subprocesses), pairing, servers,
and a forger that signs manifests with a node's real key (to craft what a hostile member could)."""
from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_env, run, run_json, write_session


class Node:
    """One chrollo home with its own mesh identity, a vault, and (once started) a LAN server."""

    def __init__(self, root: Path, name: str):
        self.name, self.home = name, root / name / "home"
        self.vault = self.home / "memories"
        self.home.parent.mkdir(parents=True)
        p = run(["mesh", "init", "--name", name], self.home)
        assert p.returncode == 0, p.stderr
        self.id = p.stdout.strip()
        self.proc = None
        self.port = None

    def session(self, sid: str, text: str, start: str = "2026-10-01T10:00:00") -> Path:
        return write_session(self.vault, sid, start, [("user", "10:00:00", text),
                                                     ("agent", "10:00:05", [f"Noted: {text}"])])

    def pair(self, other: "Node", address: bool = False) -> None:
        args = ["mesh", "peers", "add", *([other.address] if address else []), "--id", other.id, "--name", other.name]
        p = self.cli(*args)
        assert p.returncode == 0, p.stderr

    def serve(self) -> "Node":
        self.proc = subprocess.Popen([sys.executable, "-m", "chrollo", "mesh", "serve", "--port", "0"],
                                     env=cli_env(self.home), stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        assert "serving on 127.0.0.1:" in line, line
        self.port = int(line.split("127.0.0.1:")[1].split()[0])
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def cli(self, *args):
        return run(list(args), self.home)

    def sync(self, *args):
        return run_json(["mesh", "sync", *args], self.home)

    def identity(self):
        from chrollo.mesh.identity import Identity

        return Identity.load(str(self.home / "mesh"))

    def peer_files(self, other: str) -> dict:
        folder = self.vault / "peers" / other
        return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.is_dir() else {}

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def entry(name: str, data: bytes) -> dict:
    import hashlib

    return {"name": name, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def forge(ident, files, *, seq: int = 1, node_id: str | None = None, raw_manifest: bytes | None = None,
          when: str = "2026-11-01T12:00:00Z") -> bytes:
    """A signed envelope made with ``ident``'s real key (claiming ``node_id`` if given), signed
    ``when`` (the tests' frozen clock: fresh)."""
    m = raw_manifest or json.dumps({"v": 2, "id": node_id or ident.id, "name": "x", "seq": seq,
                                    "time": when, "files": files}).encode()
    return json.dumps({"v": 2, "cert": ident.cert_pem.decode(), "manifest": base64.b64encode(m).decode(),
                       "sig": base64.b64encode(ident.sign(m)).decode()}).encode()


GOOD = b"---\nsession_id: \"x\"\n---\n\n[2026-01-01 00:00:00] [User]\nhello\n"


def seal_as(sender, recipients: dict, inner: bytes, files: dict, key: bytes | None = None):
    """(outer manifest, {name: sealed bytes}) as ``sender`` would publish them on a shared
    medium for ``recipients`` ({node ID: certificate PEM}), under content key ``key``."""
    import os

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from chrollo.mesh import seal as S

    key = key or os.urandom(32)
    keys = {}
    for rid, pem in recipients.items():
        nonce = os.urandom(12)
        keys[rid] = base64.b64encode(nonce + AESGCM(S._kek(sender, pem, sender.id, rid)).encrypt(nonce, key, b"wrap")).decode()
    outer = {"v": 2, "sealed": S.SCHEME, "cert": sender.cert_pem.decode(), "keys": keys,
             "box": base64.b64encode(S.seal(key, "manifest.json", inner)).decode()}
    return json.dumps(outer).encode(), {n: S.seal(key, n, d) for n, d in files.items()}


def content_key_of(reader, outer: bytes) -> bytes:
    """The content key a sender wrapped for ``reader`` (an Identity) in ``outer``."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from chrollo.mesh import seal as S
    from chrollo.mesh.identity import cert_id

    env = json.loads(outer)
    blob = base64.b64decode(env["keys"][reader.id])
    kek = S._kek(reader, env["cert"].encode(), cert_id(env["cert"].encode()), reader.id)
    return AESGCM(kek).decrypt(blob[:12], blob[12:], b"wrap")


# ------------------------------------------------------------------ fixtures shared by the mesh tests

@pytest.fixture
def mesh(tmp_path):
    nodes = []

    def make(name):
        n = Node(tmp_path, name)
        nodes.append(n)
        return n
    yield make
    for n in nodes:
        n.stop()


@pytest.fixture
def remote(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    r = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(r)], check=True)
    return r


def transport_args(kind: str, tmp_path: Path, remote_path=None) -> list:
    if kind == "git":
        return ["--git", str(remote_path)]
    shared = tmp_path / "shared"
    shared.mkdir(exist_ok=True)
    return ["--folder", str(shared)]


def introduce(args, *nodes):
    """On a shared medium a node seals for the peers whose certificates it has seen: one round
    each publishes every certificate, the second carries the files."""
    for n in nodes * 2:
        n.sync(*args)


def two(mesh, lan=False):
    a, b = mesh("alpha"), mesh("bravo")
    a.session("aaaa0001-x", "alpha deploys the kubernetes ingress with helm")
    b.session("bbbb0001-x", "bravo rotates the postgres replication password monthly")
    if lan:
        a.serve()
        b.serve()
    a.pair(b, address=lan)
    b.pair(a, address=lan)
    return a, b


def medium_name(reader, outer: bytes, name: str) -> str:
    """The opaque name session file ``name`` has on a shared medium, as a paired ``reader``
    (an Identity) can work it out from the sender's sealed manifest ``outer``."""
    from chrollo.mesh.seal import blob_name

    return blob_name(content_key_of(reader, outer), name)
