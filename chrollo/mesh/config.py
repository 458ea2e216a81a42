"""This node's mesh identity, the swarm key, and the static peers (all under $CHROLLO_HOME/mesh/).

``mesh/config.json`` holds ``{"name": …, "peers": [{"address": "host:port", "node": …}]}``;
``mesh/swarm.key`` the key. Both owner-only (files 0600, folder 0700).
"""
from __future__ import annotations

import json
import os
import re
import socket
import time

from .. import vault as _vault
from ..errors import ChrolloError, UsageError

NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")  # use fullmatch: "$" accepts a trailing newline
DEFAULT_PORT = 47470


def mesh_dir() -> str:
    return os.path.join(_vault.home_path(), "mesh")


def valid_name(name) -> bool:
    return isinstance(name, str) and bool(NAME_RE.fullmatch(name)) and name != "peers"


def default_name() -> str:
    host = re.sub(r"[^a-z0-9-]+", "-", socket.gethostname().lower()).strip("-")[:32]
    return host if valid_name(host) else "node"


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = (text or "").strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"not a HOST:PORT address: {text!r}", "e.g. 127.0.0.1:47470", kind="bad_address")
    return host.strip("[]"), int(port)


class MeshConfig:
    def __init__(self, name: str, peers: list | None = None):
        self.name = name
        self.peers = peers or []

    # -- files ----------------------------------------------------------------------
    @staticmethod
    def exists() -> bool:
        return os.path.exists(os.path.join(mesh_dir(), "config.json"))

    @classmethod
    def load(cls) -> "MeshConfig":
        path = os.path.join(mesh_dir(), "config.json")
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise ChrolloError("mesh_not_initialized", "this node is not part of a mesh yet",
                               "Run `chrollo mesh init` (new mesh) or `chrollo mesh init --join KEY`.") from None
        except (OSError, ValueError) as e:
            raise ChrolloError("bad_config", f"{path} is not valid JSON ({e})")
        return cls(data.get("name", ""), [p for p in data.get("peers", []) if isinstance(p, dict)])

    def save(self) -> None:
        _vault.write_private(os.path.join(mesh_dir(), "config.json"),
                       json.dumps({"name": self.name, "peers": self.peers}, indent=2) + "\n")

    # -- key ------------------------------------------------------------------------
    @staticmethod
    def key_text() -> str:
        try:
            with open(os.path.join(mesh_dir(), "swarm.key"), encoding="utf-8") as fh:
                return fh.read().strip()
        except FileNotFoundError:
            raise ChrolloError("mesh_not_initialized", "no swarm key on this node",
                               "Run `chrollo mesh init` or `chrollo mesh init --join KEY`.") from None

    @classmethod
    def key_bytes(cls) -> bytes:
        from .crypto import parse_key

        return parse_key(cls.key_text())

    # -- peers ----------------------------------------------------------------------
    def add_peer(self, address: str) -> dict:
        host, port = parse_address(address)
        addr = f"{host}:{port}"
        for p in self.peers:
            if p.get("address") == addr:
                return p
        peer = {"address": addr, "node": None, "added": time.strftime("%Y-%m-%dT%H:%M:%S")}
        self.peers.append(peer)
        return peer

    def remove_peer(self, which: str) -> dict:
        for p in list(self.peers):
            if which in (p.get("address"), p.get("node")):
                self.peers.remove(p)
                return p
        raise UsageError(f"no peer {which!r}", "`chrollo mesh peers list` shows them.", kind="peer_not_found")

    def find_peer(self, which: str) -> dict:
        for p in self.peers:
            if which in (p.get("address"), p.get("node")):
                return p
        raise UsageError(f"no peer {which!r}", "`chrollo mesh peers add HOST:PORT` adds one.", kind="peer_not_found")


def init(name: str | None, join: str | None, force: bool = False) -> tuple[MeshConfig, str, bool]:
    """Create this node's identity and key (or join with ``join``); returns (config, key, new)."""
    from .crypto import new_key, parse_key

    if MeshConfig.exists() and not force:
        raise ChrolloError("mesh_exists", "this node already belongs to a mesh",
                           "`chrollo mesh key` prints its key; add --force to start over.")
    name = name or default_name()
    if not valid_name(name):
        raise UsageError(f"bad node name {name!r}: 1-32 of a-z, 0-9 and -", kind="bad_name")
    if join:
        parse_key(join)
    key = join.strip() if join else new_key()
    cfg = MeshConfig(name, MeshConfig.load().peers if MeshConfig.exists() else [])
    _vault.write_private(os.path.join(mesh_dir(), "swarm.key"), key + "\n")
    cfg.save()
    return cfg, key, not join
