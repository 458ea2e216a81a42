"""Transport: any git remote (GitHub, SSH, a bare repo on a NAS). Moves bytes only.

The branch ``chrollo-mesh`` holds one folder per node, ``<node ID>/`` with its signed
``manifest.json`` and its redacted sessions. chrollo never checks the branch out: it keeps a
bare mirror in ``$CHROLLO_HOME/mesh/git/``, writes its own folder with plumbing (blobs →
``mktree`` → ``commit-tree`` → push, rebuilt on top of whatever others pushed meanwhile: nodes
never touch each other's folders) and reads its paired peers' folders blob by blob from the
object database. No work tree means nothing on disk can be a symlink a peer planted; a tree
entry that is a link or a submodule is refused, never taken.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile

from .. import vault as _vault
from ..errors import ChrolloError
from .files import MAX_OUTER, Refused, valid_blob_name
from .manifests import Source, TransportError

BRANCH = "chrollo-mesh"
REF = f"refs/remotes/origin/{BRANCH}"
MANIFEST = "manifest.json"
REGULAR = (b"100644", b"100755")
NET_TIMEOUT = 600


class Repo:
    def __init__(self, home: str, remote: str):
        from ..executables import which

        # (by absolute path: an empty PATH entry would run the working folder's own ./git)
        self.exe = which("git")
        if self.exe is None:
            raise ChrolloError("git_missing", "git is not installed", "Install git, or use another transport.")
        self.remote = remote
        from ..layout import mesh_git_mirror

        self.path = mesh_git_mirror(hashlib.sha256(remote.encode()).hexdigest()[:16], home)
        if not os.path.isfile(os.path.join(self.path, "HEAD")):  # (none, or an init cut short)
            _vault.make_private_dirs(self.path)  # (0700 first: git init makes it as the umask says)
            self.git("init", "-q", "--bare", self.path, bare_path=False)
        self._cat = None

    def blob_cache(self) -> str:
        """Where the ids of the blobs this node wrote into this mirror are kept: beside them, so
        one remote's cache never names another mirror's blobs."""
        return self.path + ".blobs.json"

    def git(self, *args: str, input: bytes | None = None, check: bool = True, bare_path: bool = True,
            timeout: float = NET_TIMEOUT) -> subprocess.CompletedProcess:
        env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_CONFIG_NOSYSTEM="1")
        cmd = [self.exe, *(["--git-dir", self.path] if bare_path else []), "-c", "user.name=chrollo",
               "-c", "user.email=mesh@chrollo.invalid", "-c", "commit.gpgsign=false", *args]
        try:
            p = subprocess.run(cmd, input=input, capture_output=True, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TransportError(f"git {args[0]} took more than {timeout:.0f} s") from None
        if check and p.returncode != 0:
            raise TransportError(f"git {args[0]} failed: {p.stderr.decode(errors='replace').strip()[-300:]}")
        return p

    def fetch(self) -> str | None:
        """The remote branch's commit (None if it does not exist yet)."""
        p = self.git("fetch", "-q", "--no-tags", self.remote, f"+refs/heads/{BRANCH}:{REF}", check=False)
        if p.returncode != 0:
            err = p.stderr.decode(errors="replace")
            if "couldn't find remote ref" not in err and "could not find remote ref" not in err.lower():
                raise TransportError(f"git fetch {self.remote} failed: {err.strip()[-300:]}")
            self.git("update-ref", "-d", REF, check=False)
            return None
        return self.head()

    def head(self) -> str | None:
        p = self.git("rev-parse", "--verify", "-q", REF, check=False)
        return p.stdout.decode().strip() or None

    def ls(self, treeish: str) -> dict:
        """{name: (mode, type, oid, size)} of one tree (no recursion); {} if it does not exist."""
        p = self.git("ls-tree", "-z", "-l", treeish, check=False)
        out = {}
        for rec in p.stdout.split(b"\0"):
            if not rec:
                continue
            meta, _, name = rec.partition(b"\t")
            mode, typ, oid, size = meta.split()
            out[name.decode("utf-8", "replace")] = (mode, typ, oid.decode(), int(size) if size.isdigit() else 0)
        return out

    def blob(self, oid: str, limit: int) -> bytes:
        if self._cat is None:
            self._cat = subprocess.Popen([self.exe, "--git-dir", self.path, "cat-file", "--batch"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._cat.stdin.write(oid.encode() + b"\n")
        self._cat.stdin.flush()
        head = self._cat.stdout.readline().split()
        if len(head) != 3 or head[0] != oid.encode() or head[1] != b"blob" or not head[2].isdigit() \
                or int(head[2]) > limit:
            # the object's bytes are still in the pipe: left there, the next read would take
            # them for a header (a tree entry named "blob 99999999\n" blocked the reader for
            # good), so this reader is dropped and the next blob starts a fresh one
            self.close(kill=True)
            if len(head) == 3 and head[1] == b"blob" and head[2].isdigit():
                raise Refused(f"object {oid}: {int(head[2])} bytes (at most {limit})")
            raise Refused(f"object {oid} is not a blob")
        size = int(head[2])
        data = self._cat.stdout.read(size + 1)[:size]
        return data

    def close(self, kill: bool = False) -> None:
        if self._cat is not None:
            if kill:
                self._cat.kill()
            try:
                self._cat.stdin.close()
            except OSError:
                pass
            self._cat.wait()
            self._cat.stdout.close()
            self._cat = None


def _blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def publish(repo: Repo, node_id: str, pub) -> bool:
    """Push this node's folder if it changed (retrying over others' pushes); True if pushed."""
    cache_path = repo.blob_cache()
    oids = _vault.read_json(cache_path)  # token of sealed bytes -> git blob id, in this mirror
    # [real name, token, blob id, bytes, name on the branch]
    rows = [[MANIFEST, None, _blob_oid(pub.envelope), pub.envelope, MANIFEST]]
    for e in pub.entries:
        oid, data = oids.get(e["token"]), None
        if oid is None:
            try:
                data = pub.data(e["name"])
            except Refused:
                continue
            oid = _blob_oid(data)
        rows.append([e["name"], e["token"], oid, data, pub.blob(e["name"])])
    # every blob is checked, cached ones too: one the mirror lacks (pruned, or a mirror made
    # afresh) is written again rather than named in a tree git cannot build
    ids = list(dict.fromkeys(r[2] for r in rows))
    have = repo.git("cat-file", "--batch-check", input="".join(o + "\n" for o in ids).encode()).stdout
    missing = {o for o, line in zip(ids, have.splitlines()) if line.endswith(b"missing")}
    new = {}
    for r in rows:
        if r[2] in missing:
            if r[3] is None:
                try:
                    r[3] = pub.data(r[0])
                except Refused:
                    r[2] = None
                    continue
                r[2] = _blob_oid(r[3])
            new[r[2]] = r[3]
    rows = [r for r in rows if r[2]]
    if new:
        with tempfile.TemporaryDirectory(prefix="chrollo-git-") as tmp:
            paths = []
            for o, data in new.items():
                p = os.path.join(tmp, o)
                with open(p, "wb") as fh:
                    fh.write(data)
                paths.append(p)
            repo.git("hash-object", "-w", "--no-filters", "--stdin-paths", input="\n".join(paths).encode())
    oids.update((r[1], r[2]) for r in rows if r[1])
    _vault.write_private(cache_path, json.dumps(oids))
    lines = [b"100644 blob %s\t%s" % (oid.encode(), name.encode()) for _r, _t, oid, _d, name in rows]
    mine = repo.git("mktree", "-z", input=b"\0".join(lines) + b"\0").stdout.decode().strip()
    base = repo.head()
    for _ in range(5):
        top = [f"{m.decode()} {t.decode()} {o}\t{n}".encode() for n, (m, t, o, _s) in
               (repo.ls(base).items() if base else []) if n != node_id]
        top.append(f"040000 tree {mine}\t{node_id}".encode())
        tree = repo.git("mktree", "-z", input=b"\0".join(top) + b"\0").stdout.decode().strip()
        if base and repo.git("rev-parse", f"{base}^{{tree}}").stdout.decode().strip() == tree:
            return False
        commit = repo.git("commit-tree", tree, *(["-p", base] if base else []),
                          "-m", f"chrollo mesh: {node_id}").stdout.decode().strip()
        if repo.git("push", "-q", repo.remote, f"{commit}:refs/heads/{BRANCH}", check=False).returncode == 0:
            repo.git("update-ref", REF, commit)
            return True
        base = repo.fetch()  # someone pushed meanwhile: rebuild on top of theirs
    raise TransportError("push rejected 5 times (others pushing at the same moment?); try again")


class GitSource(Source):
    def __init__(self, repo: Repo):
        self.repo = repo
        self.head = repo.head()
        self._trees: dict = {}

    def _tree(self, peer_id: str) -> dict | None:
        if peer_id not in self._trees:
            top = self.repo.ls(self.head) if self.head else {}
            entry = top.get(peer_id)
            if entry is None:
                self._trees[peer_id] = None
            elif entry[0] != b"040000":
                raise Refused(f"{peer_id} on the branch is not a folder (mode {entry[0].decode()}): refused")
            else:
                self._trees[peer_id] = self.repo.ls(entry[2])
        return self._trees[peer_id]

    def _regular(self, peer_id: str, name: str, limit: int) -> bytes | None:
        tree = self._tree(peer_id)
        if tree is None or name not in tree:
            return None
        mode, typ, oid, size = tree[name]
        if mode not in REGULAR or typ != b"blob":
            raise Refused(f"{peer_id}/{name} is not a regular file (mode {mode.decode()}: a link?): refused")
        if size > limit:
            raise Refused(f"{peer_id}/{name}: {size} bytes (at most {limit})")
        return self.repo.blob(oid, limit)

    def manifest(self, peer_id: str) -> bytes | None:
        return self._regular(peer_id, MANIFEST, MAX_OUTER)

    def file(self, peer_id: str, name: str, size: int) -> bytes:
        if not valid_blob_name(name):
            raise Refused(f"file name refused: {name!r}")
        data = self._regular(peer_id, name, size)
        if data is None:
            raise TransportError(f"{name}: not on the branch")
        return data
