"""`chrollo mesh sync --git REMOTE`: the same peers/ layout through any git remote you have.

Each node commits its own sessions (redacted, as over HTTP) into ``<node>/`` on the branch
``chrollo-mesh`` of a clone kept in ``$CHROLLO_HOME/mesh/git/``, pushes (rebasing on what
others pushed meanwhile — nodes never touch each other's folders, so this cannot conflict),
then copies every other node's folder into ``<vault>/peers/<node>/`` with the same checks as
an HTTP sync (names, sizes, no symlinks, atomic writes). Git's own transport and auth apply.
"""
from __future__ import annotations

import hashlib
import os
import subprocess

from .. import vault as _vault
from ..errors import ChrolloError
from .config import MeshConfig, valid_name
from .files import MAX_FILE, Refused, local_sha, outgoing, own_files, peer_folder, receive, valid_file_name
from .redact import Redactor

BRANCH = "chrollo-mesh"


def _git(repo: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    p = subprocess.run(["git", "-C", repo, "-c", "user.name=chrollo", "-c", "user.email=mesh@chrollo.invalid",
                        "-c", "commit.gpgsign=false", *args], capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise ChrolloError("git_failed", f"git {args[0]} failed: {(p.stderr or p.stdout).strip()[-300:]}",
                           "Check that the remote exists and that you can push to it.")
    return p


def sync_git(remote: str, vault: str | None = None) -> dict:
    import shutil

    if shutil.which("git") is None:
        raise ChrolloError("git_missing", "git is not installed", "Install git, or sync over HTTP.")
    cfg = MeshConfig.load()
    home = _vault.home_path()
    vault = vault or _vault.memories_path()
    repo = os.path.join(home, "mesh", "git", hashlib.sha256(remote.encode()).hexdigest()[:16])
    out = {"remote": remote, "node": cfg.name, "pushed": 0, "received": 0, "peers": [], "errors": []}
    if not os.path.isdir(os.path.join(repo, ".git")):
        _vault.make_private_dirs(os.path.dirname(repo))
        p = subprocess.run(["git", "clone", "--quiet", remote, repo], capture_output=True, text=True,
                           env=dict(os.environ, GIT_TERMINAL_PROMPT="0"))
        if p.returncode != 0:
            raise ChrolloError("git_failed", f"git clone {remote} failed: {p.stderr.strip()[-300:]}",
                               "Pass a remote you can pull from and push to.")
    _update(repo)
    # 1. our own sessions, redacted, into <node>/
    redactor = Redactor.from_config(home)
    mine = os.path.join(repo, cfg.name)
    os.makedirs(mine, exist_ok=True)
    for e in own_files(vault):
        if e.stat().st_size > MAX_FILE:
            continue
        data = outgoing(e.path, redactor)
        dest = os.path.join(mine, e.name)
        if local_sha(dest) != hashlib.sha256(data).hexdigest():
            with open(dest, "wb") as fh:
                fh.write(data)
            out["pushed"] += 1
    _git(repo, "add", "-A", "--", cfg.name)
    if _git(repo, "diff", "--cached", "--quiet", check=False).returncode != 0:
        _git(repo, "commit", "-q", "-m", f"chrollo mesh: {cfg.name} ({out['pushed']} sessions)")
    for attempt in range(4):
        if _git(repo, "push", "-q", "origin", f"HEAD:refs/heads/{BRANCH}", check=False).returncode == 0:
            break
        _git(repo, "fetch", "-q", "origin")
        _git(repo, "rebase", "-q", f"origin/{BRANCH}")
    else:
        out["errors"].append("push rejected 4 times; try again")
    # 2. everyone else's folders into peers/<node>/
    for node in sorted(os.listdir(repo)):
        src = os.path.join(repo, node)
        if node.startswith(".") or node == cfg.name or not os.path.isdir(src) or os.path.islink(src):
            continue
        if not valid_name(node):
            out["errors"].append(f"folder {node[:40]!r} refused: not a node name")
            continue
        try:
            folder = peer_folder(vault, node, cfg.name)
        except Refused as e:
            out["errors"].append(str(e))
            continue
        out["peers"].append(node)
        for name in sorted(os.listdir(src)):
            path = os.path.join(src, name)
            if not valid_file_name(name) or os.path.islink(path) or not os.path.isfile(path) \
                    or os.path.getsize(path) > MAX_FILE:
                out["errors"].append(f"{node}/{name[:80]} refused")
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            sha = hashlib.sha256(data).hexdigest()
            if local_sha(os.path.join(folder, name)) == sha:
                continue
            receive(folder, {"name": name, "size": len(data), "sha256": sha}, data)
            out["received"] += 1
    return out


def _update(repo: str) -> None:
    """Bring the clone to the remote's chrollo-mesh branch (or start it)."""
    _git(repo, "fetch", "-q", "origin", check=False)
    if _git(repo, "rev-parse", "--verify", "-q", f"origin/{BRANCH}", check=False).returncode == 0:
        _git(repo, "checkout", "-q", "-B", BRANCH, f"origin/{BRANCH}")
        _git(repo, "reset", "-q", "--hard", f"origin/{BRANCH}")
    elif _git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False).returncode != 0:
        _git(repo, "checkout", "-q", "--orphan", BRANCH)
    else:
        _git(repo, "checkout", "-q", "-B", BRANCH)
