"""`chrollo mesh sync`: one entry point over the three transports.

Publishing (folder, git) and pulling go through the trust layer (:mod:`.manifests`); the transport
only moves bytes. Each paired peer is pulled on its own: a peer that fails is reported and the
others still sync.
"""
from __future__ import annotations

import os

from .. import vault as _vault
from ..errors import UsageError
from .config import MeshConfig, mesh_dir
from .identity import Identity
from .files import Refused
from .manifests import PEER_DEADLINE, TransportError, publish, pull


def sync(which: str | None = None, *, folder: str | None = None, remote: str | None = None,
         vault: str | None = None, timeout: float = PEER_DEADLINE) -> dict:
    """Publish (folder, git) and pull from ``which`` peer or all of them; ``timeout``: seconds
    for everything from one peer (what is left waits for the next sync)."""
    cfg = MeshConfig.load()
    ident = Identity.load(mesh_dir())
    vault = vault or _vault.memories_path()
    home = _vault.home_path()
    peers = [cfg.find_peer(which)] if which else list(cfg.peers)
    out = {"node": cfg.name, "id": ident.id, "published": None, "peers": [], "errors": []}
    if folder is not None:
        from .folder import FolderSource, publish as publish_folder, reachable

        out["transport"] = "folder"
        why = reachable(folder)
        if why:  # (said once: publishing and every peer's pull would each have said it)
            out["errors"].append(why)
            return out
        raw = FolderSource(folder)
        _shared(out, ident, cfg, peers, vault, home, lambda: raw,
                lambda pub: publish_folder(folder, ident.id, pub, home), timeout)
    elif remote is not None:
        from .gitsync import GitSource, Repo, publish as publish_git

        out["transport"] = "git"
        repo = Repo(home, remote)
        try:
            try:
                repo.fetch()
            except TransportError as e:  # (a push would fail too, with a murkier message)
                out["errors"].append(str(e))
                return out
            _shared(out, ident, cfg, peers, vault, home, lambda: GitSource(repo),
                    lambda pub: publish_git(repo, ident.id, pub), timeout)
        finally:
            repo.close()
    else:
        from .client import LanSource

        out["transport"] = "lan"
        if not which:  # --all over the LAN: the peers with an address (others sync by folder or git)
            peers = [p for p in peers if p.get("address")]
        if not peers:
            raise UsageError("no peers to sync with over the LAN",
                             "Pair one: `chrollo mesh peers add HOST:PORT --id ID`, or sync with --git/--folder.",
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
                out["peers"].append(pull(cfg.name, p, source, vault, home, "lan", timeout))
            finally:
                source.close()
    from ..layout import index_file

    if os.path.isfile(index_file(vault)):  # (what was received goes into the search index, if there is one;
        from ..index.build import ensure         # without one, the index is not even imported: ~0.05 s a sync)

        ensure(vault, under="peers")
    return out


def _shared(out: dict, ident, cfg, peers: list, vault: str, home: str, source, publish_to,
            timeout: float = PEER_DEADLINE) -> None:
    """A shared medium (folder, git): learn paired peers' certificates from what they published,
    publish ours sealed to every paired peer we know, then open and take theirs."""
    from .identity import known_cert
    from .seal import SealedPublication, SealedSource

    before = SealedSource(source(), ident)
    for p in cfg.peers:
        try:
            before.outer(p["id"])
        except (TransportError, Refused, OSError):
            pass  # reported when this peer is pulled
    certs = {p["id"]: known_cert(p["id"]) for p in cfg.peers}
    try:
        sealed = SealedPublication(publish(ident, cfg.name, vault, home), ident,
                                   {k: v for k, v in certs.items() if v})
        out["published"] = publish_to(sealed)
        out["sealed_for"] = sorted(cfg.by_id()[k]["name"] for k, v in certs.items() if v)
    except TransportError as e:
        out["errors"].append(str(e))
    after = SealedSource(source(), ident, before)
    learned: list = []  # per peer pulled: the ids of the nodes whose withdrawal statement it took
    out["peers"] = []
    for p in peers:
        got: list = []
        out["peers"].append(pull(cfg.name, p, after, vault, home, out["transport"], timeout, got))
        learned.append(set(got))
    # a peer pulled before another member told of its newer withdrawal: pulled again, so what
    # it withdrew goes now, not at the next sync (a replayed publication restores nothing)
    for k, p in enumerate(peers):
        if any(p["id"] in later for later in learned[k + 1:]):
            out["peers"][k] = pull(cfg.name, p, after, vault, home, out["transport"], timeout)
