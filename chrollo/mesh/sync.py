"""`chrollo mesh sync`: one entry point over the three transports.

Publishing (folder, git) and pulling go through the trust layer (:mod:`.trust`); the transport
only moves bytes. Each paired peer is pulled on its own: a peer that fails is reported and the
others still sync.
"""
from __future__ import annotations

import os

from .. import vault as _vault
from ..errors import UsageError
from .config import MeshConfig, mesh_dir
from .identity import Identity
from .trust import TransportError, publish, pull


def sync(which: str | None = None, *, folder: str | None = None, remote: str | None = None,
         vault: str | None = None) -> dict:
    cfg = MeshConfig.load()
    ident = Identity.load(mesh_dir())
    vault = vault or _vault.memories_path()
    home = _vault.home_path()
    peers = [cfg.find_peer(which)] if which else list(cfg.peers)
    out = {"node": cfg.name, "id": ident.id, "published": None, "peers": [], "errors": []}
    if folder is not None:
        from .folder import FolderSource, publish as publish_folder

        out["transport"] = "folder"
        try:
            out["published"] = publish_folder(folder, ident.id, publish(ident, cfg.name, vault, home))
        except TransportError as e:
            out["errors"].append(str(e))
        source = FolderSource(folder)
        out["peers"] = [pull(cfg.name, p, source, vault, home, "folder") for p in peers]
    elif remote is not None:
        from .gitsync import GitSource, Repo, publish as publish_git

        out["transport"] = "git"
        repo = Repo(home, remote)
        try:
            try:
                repo.fetch()
                out["published"] = publish_git(repo, ident.id, publish(ident, cfg.name, vault, home), home)
            except TransportError as e:
                out["errors"].append(str(e))
            source = GitSource(repo)
            out["peers"] = [pull(cfg.name, p, source, vault, home, "git") for p in peers]
        finally:
            repo.close()
    else:
        from .client import LanSource

        out["transport"] = "lan"
        if not peers:
            raise UsageError("no peers to sync with", "Pair one: `chrollo mesh peers add HOST:PORT --id ID`.",
                             kind="no_peers")
        kp, cp = ident.paths(mesh_dir())
        for p in peers:
            try:
                source = LanSource(ident, p, kp, cp)
            except TransportError as e:
                out["peers"].append({"peer": p["name"], "id": p["id"], "transport": "lan", "files": 0,
                                     "downloaded": 0, "bytes": 0, "errors": [str(e)]})
                continue
            try:
                out["peers"].append(pull(cfg.name, p, source, vault, home, "lan"))
            finally:
                source.close()
    os.sync()  # received files are renamed into place unsynced; one flush for the whole run
    return out
