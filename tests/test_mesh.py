"""The mesh: real peers as subprocesses on 127.0.0.1, separate homes, real crypto, real HTTP."""
from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import cli_env, run, run_json, write_session

pytest.importorskip("cryptography", reason="the mesh needs the [mesh] extra (cryptography)")

from chrollo.mesh.crypto import Box, new_key, parse_key  # noqa: E402
from chrollo.mesh.redact import DEFAULT_PATTERNS, Redactor  # noqa: E402


class Node:
    """One chrollo home with a mesh identity, a vault, and (once started) a server process."""

    def __init__(self, root: Path, name: str, key: str):
        self.name, self.home = name, root / name / "home"
        self.vault = self.home / "memories"
        self.home.parent.mkdir(parents=True)
        p = run(["mesh", "init", "--name", name, "--join", key], self.home)
        assert p.returncode == 0, p.stderr
        self.proc = None
        self.port = None

    def session(self, sid: str, text: str, start: str = "2026-10-01T10:00:00") -> Path:
        return write_session(self.vault, sid, start, [("user", "10:00:00", text),
                                                     ("agent", "10:00:05", [f"Noted: {text}"])])

    def serve(self) -> "Node":
        self.proc = subprocess.Popen([sys.executable, "-m", "chrollo", "mesh", "serve", "--port", "0"],
                                     env=cli_env(self.home), stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        assert "serving on 127.0.0.1:" in line, line
        self.port = int(line.rsplit(":", 1)[1])
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def cli(self, *args):
        return run(list(args), self.home)

    def sync(self, *args):
        p, out = run_json(["mesh", "sync", *args], self.home)
        return p, out

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def mesh(tmp_path):
    key = new_key()
    nodes = []

    def make(name, with_key=None):
        n = Node(tmp_path, name, with_key or key)
        nodes.append(n)
        return n
    make.key = key
    yield make
    for n in nodes:
        n.stop()


def peer_files(node: Node, other: str) -> dict:
    folder = node.vault / "peers" / other
    return {p.name: p.read_text() for p in folder.glob("*.md")} if folder.is_dir() else {}


def test_three_peers_converge_and_resync_is_a_noop(mesh):
    a, b, c = mesh("alpha"), mesh("bravo"), mesh("charlie")
    a.session("aaaa0001-x", "alpha deploys the kubernetes ingress with helm")
    b.session("bbbb0001-x", "bravo rotates the postgres replication password monthly")
    c.session("cccc0001-x", "charlie tunes the kafka consumer lag alerts")
    for n in (a, b, c):
        n.serve()
    for n in (a, b, c):
        for o in (a, b, c):
            if o is not n:
                assert n.cli("mesh", "peers", "add", o.address).returncode == 0
    for n in (a, b, c):
        p, out = n.sync("--all")
        assert p.returncode == 0, out
        assert sorted(r["node"] for r in out["peers"]) == sorted(x.name for x in (a, b, c) if x is not n)
        assert all(r["downloaded"] == 1 for r in out["peers"])
    for n in (a, b, c):
        for o in (a, b, c):
            if o is not n:
                (body,) = peer_files(n, o.name).values()
                assert (next(o.vault.glob("*.md"))).read_text() == body
        assert not (n.vault / "peers" / n.name).exists()
    # nothing new: no file bodies move
    p, out = a.sync("--all")
    assert p.returncode == 0 and [(r["downloaded"], r["bytes"]) for r in out["peers"]] == [(0, 0), (0, 0)]
    # peer provenance in search, and in recall
    p, res = run_json(["search", "postgres", "replication", "password"], a.home)
    assert res["hits"][0]["peer"] == "bravo" and "/peers/bravo/" in res["hits"][0]["path"]
    p, res = run_json(["search", "postgres", "replication", "--no-peers"], a.home)
    assert res["hits"] == []
    hook = subprocess.run([sys.executable, "-m", "chrollo", "hook", "UserPromptSubmit", "--harness", "claude-code"],
                          input=json.dumps({"session_id": "live-1", "prompt": "how often do we rotate the postgres replication password?",
                                            "cwd": "/nonexistent"}), capture_output=True, text=True, env=cli_env(a.home))
    assert "peer bravo" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    st = json.loads(a.cli("mesh", "status", "--json").stdout)
    assert {p["node"] for p in st["peers"]} == {"bravo", "charlie"} and all(p["errors"] == 0 for p in st["peers"])


def test_grown_file_is_updated(mesh):
    a, b = mesh("alpha"), mesh("bravo")
    f = b.session("bbbb0002-x", "the first turn about terraform state locking")
    b.serve()
    a.cli("mesh", "peers", "add", b.address)
    assert a.sync("bravo" if False else b.address)[1]["peers"][0]["downloaded"] == 1
    with open(f, "a") as fh:
        fh.write("[2026-10-01 10:05:00] [User]\nand a second turn about dynamodb lock tables\n\n\n")
    p, out = a.sync("--all")
    assert out["peers"][0]["downloaded"] == 1
    assert "dynamodb lock tables" in peer_files(a, "bravo")[f.name]


def test_wrong_key_gets_nothing_and_is_rate_limited(mesh):
    b = mesh("bravo")
    b.session("bbbb0003-x", "secret project codename bluebird")
    b.serve()
    eve = mesh("eve", with_key=new_key())
    eve.cli("mesh", "peers", "add", b.address)
    p, out = eve.sync("--all")
    assert p.returncode == 1 and "refused our key" in out["peers"][0]["errors"][0]
    assert not (eve.vault / "peers").exists()
    for _ in range(12):
        p, out = eve.sync("--all")
    assert "rate-limited" in out["peers"][0]["errors"][0]


def _raw_post(port: int, path: str, body: bytes) -> int:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("POST", path, body)
    status = c.getresponse().status
    c.close()
    return status


def test_replayed_and_stale_requests_are_refused(mesh):
    b = mesh("bravo").serve()
    box = Box(parse_key(mesh.key))
    msg = {"node": "x", "ts": time.time(), "id": "0123456789abcdef0123", "args": {}}
    sealed = box.seal_request("manifest", json.dumps(msg).encode())
    assert _raw_post(b.port, "/v1/manifest", sealed) == 200
    assert _raw_post(b.port, "/v1/manifest", sealed) == 409  # the very same bytes again
    stale = dict(msg, id="fedcba9876543210fedc", ts=time.time() - 3600)
    assert _raw_post(b.port, "/v1/manifest", box.seal_request("manifest", json.dumps(stale).encode())) == 401
    # a request sealed for one operation does not open as another
    other = dict(msg, id="aaaabbbbccccdddd0000")
    assert _raw_post(b.port, "/v1/file", box.seal_request("manifest", json.dumps(other).encode())) == 401
    assert _raw_post(b.port, "/v1/manifest", b"x" * 100) == 401


class FakePeer:
    """A hostile peer that holds the key: serves whatever manifest and bodies a test says."""

    def __init__(self, key: str, manifest: dict, bodies: dict | None = None, cut: bool = False):
        box = Box(parse_key(key))
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                op = self.path.rsplit("/", 1)[1]
                msg = json.loads(box.open_request(op, self.rfile.read(int(self.headers["Content-Length"]))))
                payload = json.dumps(outer.manifest).encode() if op == "manifest" else \
                    outer.bodies.get(msg["args"]["name"], b"")
                body = box.seal_response(msg["id"], payload)
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if outer.cut and op == "file":
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.manifest, self.bodies, self.cut = manifest, bodies or {}, cut
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


def sync_from(node: Node, fake: FakePeer):
    """``node`` syncs from ``fake`` once; the fake is closed whatever happens."""
    try:
        node.cli("mesh", "peers", "add", f"127.0.0.1:{fake.port}")
        return node.sync("--all")
    finally:
        fake.close()


def _entry(name: str, data: bytes) -> dict:
    import hashlib

    return {"name": name, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


GOOD = b"---\nsession_id: \"x\"\n---\n\n[2026-01-01 00:00:00] [User]\nhello\n"
HOSTILE = {
    "traversal": {"node": "evil", "files": [_entry("../../2026-01-01_000000_evil.md", GOOD)]},
    "absolute": {"node": "evil", "files": [_entry("/etc/2026-01-01_000000_evil.md", GOOD)]},
    "subfolder": {"node": "evil", "files": [_entry("sub/2026-01-01_000000_evil.md", GOOD)]},
    "not-a-session": {"node": "evil", "files": [_entry(".bashrc", GOOD)]},
    "oversize": {"node": "evil", "files": [dict(_entry("2026-01-01_000000_evil.md", GOOD), size=1 << 40)]},
    "too-many": {"node": "evil", "files": [_entry(f"2026-01-01_000000_e{i}.md", GOOD) for i in range(100_001)]},
    "bad-node": {"node": "../alpha", "files": [_entry("2026-01-01_000000_evil.md", GOOD)]},
    "our-own-name": {"node": "alpha", "files": [_entry("2026-01-01_000000_evil.md", GOOD)]},
    "peers-name": {"node": "peers", "files": [_entry("2026-01-01_000000_evil.md", GOOD)]},
    "not-a-list": {"node": "evil", "files": {"a": 1}},
    "manifest-over-32-MiB": {"node": "evil", "files": [_entry("2026-01-01_000000_evil.md", GOOD)],
                             "padding": "x" * (33 << 20)},
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_manifests_are_refused_and_nothing_is_written(mesh, case):
    a = mesh("alpha")
    own = a.session("aaaa0009-x", "our own session")
    before = own.read_bytes()
    p, out = sync_from(a, FakePeer(mesh.key, HOSTILE[case], {"2026-01-01_000000_evil.md": GOOD}))
    assert p.returncode == 1 and out["peers"][0]["errors"]
    assert not (a.vault / "peers").exists() or not any((a.vault / "peers").rglob("*"))
    assert sorted(x.name for x in a.vault.iterdir() if x.name != "peers") == [own.name]
    assert own.read_bytes() == before


def test_body_must_match_the_manifest_and_links_are_not_followed(mesh, tmp_path):
    a = mesh("alpha")
    name = "2026-01-01_000000_evil.md"
    fake = FakePeer(mesh.key, {"node": "evil", "files": [_entry(name, GOOD)]}, {name: GOOD + b"tampered"})
    try:
        a.cli("mesh", "peers", "add", f"127.0.0.1:{fake.port}")
        p, out = a.sync("--all")
        assert p.returncode == 1 and "does not match the manifest" in out["peers"][0]["errors"][0]
        assert not list((a.vault / "peers" / "evil").glob("*"))
        # a peers/<node> folder that is a symlink (to outside the vault) is refused
        shutil.rmtree(a.vault / "peers" / "evil")
        outside = tmp_path / "outside"
        outside.mkdir()
        (a.vault / "peers" / "evil").symlink_to(outside)
        fake.bodies[name] = GOOD
        p, out = a.sync("--all")
        assert p.returncode == 1 and "symlink" in out["peers"][0]["errors"][0]
        assert not list(outside.iterdir())
    finally:
        fake.close()


def test_killed_transfer_leaves_no_partial_file(mesh):
    a = mesh("alpha")
    name = "2026-01-01_000000_big.md"
    data = GOOD + b"x" * 200_000
    p, out = sync_from(a, FakePeer(mesh.key, {"node": "evil", "files": [_entry(name, data)]}, {name: data}, cut=True))
    assert p.returncode == 1 and out["peers"][0]["errors"]
    folder = a.vault / "peers" / "evil"
    assert not folder.exists() or list(folder.iterdir()) == []


class Relay:
    """A TCP relay on 127.0.0.1 that records every byte in both directions."""

    def __init__(self, target_port: int):
        self.captured = bytearray()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.target = target_port
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    def _pipe(self, src, dst):
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            self.captured += data
            dst.sendall(data)


def test_loopback_traffic_carries_no_transcript_text(mesh):
    a, b = mesh("alpha"), mesh("bravo")
    f = b.session("bbbb0004-x", "the launch code phrase is zebra-quantum-lighthouse")
    b.serve()
    relay = Relay(b.port)
    a.cli("mesh", "peers", "add", f"127.0.0.1:{relay.port}")
    p, out = a.sync("--all")
    assert p.returncode == 0 and out["peers"][0]["downloaded"] == 1
    assert "zebra-quantum-lighthouse" in peer_files(a, "bravo")[f.name]
    wire = bytes(relay.captured)
    assert len(wire) > 500
    for leak in (b"zebra-quantum-lighthouse", b"launch code", f.name.encode(), b"session_id", b"bravo"):
        assert leak not in wire


SECRETS = {
    "aws-access-key-id": "AKIAIOSFODNN7EXAMPLE",
    "aws-secret-access-key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "google-api-key": "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "github-token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "gitlab-token": "glpat-abcdefghij1234567890",
    "anthropic-key": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
    "openai-key": "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
    "slack-token": "xoxb-1234567890-abcdefghij",
    "private-key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "password-assignment": "DB_PASSWORD=hunter2hunter2",
}


def test_every_default_pattern_has_a_case():
    assert set(SECRETS) == set(DEFAULT_PATTERNS)


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_secret_is_redacted(name):
    text = f"before {SECRETS[name]} after"
    out, counts = Redactor().redact(text)
    assert name in counts, (name, out)
    secret_core = SECRETS[name].split("=")[-1].strip()[-12:]
    assert secret_core not in out and out.startswith("before ") and out.endswith(" after")


def test_redaction_is_configurable(tmp_path):
    home = tmp_path / "h"
    (home / "mesh").mkdir(parents=True)
    (home / "mesh" / "redact.json").write_text(json.dumps({"extra": {"ticket": r"TICKET-\d+"}, "disable": ["jwt"]}))
    r = Redactor.from_config(str(home))
    out, counts = r.redact(f"see TICKET-4242 and {SECRETS['jwt']}")
    assert counts == {"ticket": 1} and SECRETS["jwt"] in out


def test_secrets_never_leave_over_the_mesh(mesh):
    a, b = mesh("alpha"), mesh("bravo")
    f = b.session("bbbb0005-x", "my keys: " + " ; ".join(SECRETS.values()))
    b.serve()
    a.cli("mesh", "peers", "add", b.address)
    assert a.sync("--all")[0].returncode == 0
    got = peer_files(a, "bravo")[f.name]
    for name, secret in SECRETS.items():
        assert f"[REDACTED:{name}]" in got or name == "aws-access-key-id"
        assert secret.split("=")[-1].strip()[-12:] not in got
    assert "AKIAIOSFODNN7EXAMPLE" in f.read_text()  # the owner's own file is untouched


def test_git_transport_through_a_local_bare_repo(mesh, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    a, b = mesh("alpha"), mesh("bravo")
    a.session("aaaa0006-x", "alpha notes about the nightly backup job")
    b.session("bbbb0006-x", "bravo notes about the grafana dashboards")
    for n in (a, b, a):
        p, out = n.sync("--git", str(remote))
        assert p.returncode == 0, out
    assert "grafana dashboards" in "".join(peer_files(a, "bravo").values())
    assert "nightly backup job" in "".join(peer_files(b, "alpha").values())
    p, out = b.sync("--git", str(remote))
    assert out["received"] == 0 and out["pushed"] == 0
    log = subprocess.run(["git", "--git-dir", str(remote), "log", "--oneline", "chrollo-mesh"],
                         capture_output=True, text=True).stdout
    assert "alpha" in log and "bravo" in log


def test_cli_errors_and_owner_only_files(mesh, tmp_path):
    lone = tmp_path / "lone"
    p, err = run_json(["mesh", "sync", "--all"], lone)
    assert p.returncode == 1 and err["error"]["kind"] == "mesh_not_initialized"
    p, err = run_json(["mesh", "init", "--join", "not-a-key"], lone)
    assert p.returncode == 2 and err["error"]["kind"] == "bad_key"
    a = mesh("alpha")
    p, err = run_json(["mesh", "init"], a.home)
    assert p.returncode == 1 and err["error"]["kind"] == "mesh_exists"
    assert a.cli("mesh", "key").stdout.strip() == mesh.key
    p, err = run_json(["mesh", "peers", "add", "nohost"], a.home)
    assert p.returncode == 2 and err["error"]["kind"] == "bad_address"
    p, err = run_json(["mesh", "sync"], a.home)
    assert p.returncode == 2
    mesh_dir = a.home / "mesh"
    assert oct(mesh_dir.stat().st_mode & 0o777) == "0o700"
    for f in mesh_dir.iterdir():
        assert oct(f.stat().st_mode & 0o777) == "0o600"
    assert os.stat(a.home).st_mode & 0o077 == 0


DISCOVERY = r"""
set -e
ip link set lo up; ip link set lo multicast on; ip route add 224.0.0.0/4 dev lo
"$PY" -m chrollo mesh serve --announce --port 0 2> "$B_ERR" &
SERVER=$!
for i in $(seq 50); do grep -q "serving on" "$B_ERR" 2>/dev/null && break; sleep 0.1; done
CHROLLO_HOME="$A_HOME" "$PY" -m chrollo mesh peers discover --add --timeout 3 --json
CHROLLO_HOME="$A_HOME" "$PY" -m chrollo mesh sync --all --json > "$A_SYNC" || true
kill $SERVER
"""


def test_mdns_discovery_in_a_private_network_namespace(mesh, tmp_path):
    pytest.importorskip("zeroconf", reason="mDNS is the optional extra chrollo[lan]")
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True) if shutil.which("unshare") else None
    if probe is None or probe.returncode != 0:
        pytest.skip("cannot create a private network namespace here (unshare -rn)")
    a, b = mesh("alpha"), mesh("bravo")
    b.session("bbbb0007-x", "bravo found by multicast dns")
    env = cli_env(b.home, PY=sys.executable, A_HOME=str(a.home), B_ERR=str(tmp_path / "b.err"),
                  A_SYNC=str(tmp_path / "a.json"))
    p = subprocess.run(["unshare", "-rn", "sh", "-c", DISCOVERY], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    found = json.loads(p.stdout)["found"]
    assert [f["node"] for f in found] == ["bravo"] and found[0]["address"].startswith("127.0.0.1:")
    synced = json.loads((tmp_path / "a.json").read_text())["peers"]
    assert synced[0]["node"] == "bravo" and synced[0]["downloaded"] == 1
    assert "multicast dns" in "".join(peer_files(a, "bravo").values())
