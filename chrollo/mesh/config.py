"""This node's name and its paired peers (``$CHROLLO_HOME/mesh/config.json``, 0600).

``{"version": 2, "name": …, "peers": [{"id", "name", "address", "searchable", "recall",
"quota_mb"}]}``. A peer is paired by its node ID (pinned: nothing else is ever trusted), and
gets a local name chosen here — the folder ``<vault>/peers/<name>/`` its files land in, so
what a peer sends can only land under the ID it was paired with.
"""
from __future__ import annotations

import json
import os
import re

from .. import vault as _vault
from .. import layout as _layout
from ..errors import ChrolloError, UsageError
from .identity import parse_id

NAME_RE = _vault.PEER_NAME_RE
DEFAULT_PORT = 47470
DEFAULT_QUOTA_MB = _vault.PEER_DEFAULTS["quota_mb"]
DEFAULTS = _vault.PEER_DEFAULTS

MIGRATE_HINT = ("This node still holds the old shared swarm key (chrollo-mesh-v1), which gave every "
                "member every other member's powers. Run `chrollo mesh init --force` to make this "
                "node its own identity, then pair peers by ID: `chrollo mesh peers add [HOST:PORT] "
                "--id ID --name NAME` on each side.")


def mesh_dir() -> str:
    return _layout.mesh_dir()


def valid_name(name) -> bool:
    """A node/peer name: 1-32 of a-z, 0-9, '-' — a full-string match (``alice\\n`` is refused)."""
    return isinstance(name, str) and bool(NAME_RE.fullmatch(name)) and name != "peers"


def default_name() -> str:
    import socket  # (here: every `mesh sync` imports this module, only `init` names a node)

    host = re.sub(r"[^a-z0-9-]+", "-", socket.gethostname().lower()).strip("-")[:32]
    return host if valid_name(host) else "node"


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = (text or "").strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"not a HOST:PORT address: {text!r}", "e.g. 127.0.0.1:47470", kind="bad_address")
    return host.strip("[]"), int(port)


def _legacy() -> bool:
    return os.path.exists(_layout.mesh_legacy_key())


class MeshConfig:
    def __init__(self, name: str, peers: list | None = None):
        self.name = name
        self.peers = peers or []
        # {name: its search and recall switches} of peers removed with their files kept: the
        # files stay where they were, and so does what the user decided about them
        self.former: dict = {}

    @staticmethod
    def exists() -> bool:
        return os.path.exists(_layout.mesh_config_file())

    @classmethod
    def load(cls) -> "MeshConfig":
        path = _layout.mesh_config_file()
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise ChrolloError("mesh_not_initialized", "this node is not part of a mesh yet",
                               "Run `chrollo mesh init`.") from None
        except (OSError, ValueError) as e:
            raise ChrolloError("bad_config", f"{path} is not valid JSON ({e})")
        if not isinstance(data, dict) or data.get("version") != 2:
            raise ChrolloError("mesh_migrate", "this node's mesh setup is from an older chrollo",
                               MIGRATE_HINT)
        peers = [dict(DEFAULTS, **p) for p in data.get("peers", []) if isinstance(p, dict)
                 and isinstance(p.get("id"), str) and valid_name(p.get("name"))]
        cfg = cls(data.get("name", ""), peers)
        former = data.get("former")
        cfg.former = {k: v for k, v in former.items() if valid_name(k) and isinstance(v, dict)} \
            if isinstance(former, dict) else {}
        return cfg

    def save(self) -> None:
        data = {"version": 2, "name": self.name, "peers": self.peers}
        if self.former:
            data["former"] = self.former
        _vault.write_private(_layout.mesh_config_file(), json.dumps(data, indent=2) + "\n")

    def add_peer(self, node_id: str, name: str | None = None, address: str | None = None) -> dict:
        node_id = parse_id(node_id)
        name = ("peer-" + node_id[:4].lower()) if name is None else name
        if not valid_name(name) or name == self.name:
            raise UsageError(f"bad peer name {name!r}: 1-32 of a-z, 0-9 and -, not this node's own",
                             kind="bad_name")
        if address:
            host, port = parse_address(address)
            address = f"{host}:{port}"
        for p in self.peers:
            if p["id"] == node_id:
                if p["name"] != name:  # (a silent rename left its files twice: peers/old/ and peers/new/)
                    raise UsageError(f"this ID is already paired as {p['name']!r}",
                                     f"Keep that name, or rename it: `chrollo mesh peers remove {p['name']}`, "
                                     f"then add it as {name!r} (its files come again under that name).",
                                     kind="already_paired")
                if address:
                    p["address"] = address
                return p
            if p["name"] == name:
                raise UsageError(f"another peer is already called {name!r}", kind="bad_name")
        peer = dict(DEFAULTS, id=node_id, name=name, address=address)
        self.former.pop(name, None)
        self.peers.append(peer)
        return peer

    def find_peer(self, which: str) -> dict:
        for p in self.peers:
            if which in (p["name"], p["id"], p.get("address")):
                return p
        raise UsageError(f"no peer {which!r}", "`chrollo mesh peers` lists them.", kind="peer_not_found")

    def set_peer(self, which: str, *, searchable: bool | None = None, recall: bool | None = None,
                 quota_mb: int | None = None, address: str | None = None) -> dict:
        """Change a peer's switches (None: leave one as it is); returns the peer."""
        p = self.find_peer(which)
        for k, v in (("searchable", searchable), ("recall", recall), ("quota_mb", quota_mb)):
            if v is not None:
                p[k] = v
        if address:
            host, port = parse_address(address)
            p["address"] = f"{host}:{port}"
        return p

    def remove_peer(self, which: str) -> dict:
        p = self.find_peer(which)
        self.peers.remove(p)
        self.former[p["name"]] = {"searchable": p["searchable"], "recall": p["recall"]}
        return p

    def by_id(self) -> dict:
        return {p["id"]: p for p in self.peers}


def init(name: str | None, force: bool = False):
    """Create this node's identity (key pair + certificate); returns (config, identity)."""
    from .identity import Identity

    if MeshConfig.exists() and not force:
        if _legacy():
            raise ChrolloError("mesh_migrate", "this node belongs to an old swarm-key mesh", MIGRATE_HINT)
        raise ChrolloError("mesh_exists", "this node already has a mesh identity",
                           "`chrollo mesh id` prints its ID; add --force to make a new one (peers must re-pair).")
    name = default_name() if name is None else name
    if not valid_name(name):
        raise UsageError(f"bad node name {name!r}: 1-32 of a-z, 0-9 and -", kind="bad_name")
    ident = Identity.generate(name)
    ident.save(mesh_dir())
    try:
        os.unlink(_layout.mesh_legacy_key())
    except FileNotFoundError:
        pass
    cfg = MeshConfig(name, [])
    cfg.save()
    return cfg, ident


# The peers' switches are read in chrollo.vault (search and recall never import the mesh).
peer_settings, hidden_peer = _vault.peer_switches, _vault.hidden_peer
