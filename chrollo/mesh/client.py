"""`chrollo mesh sync`: pull what is new or grown from each peer into <vault>/peers/<node>/.

One keep-alive HTTP connection per peer; the manifest first, then only the files whose
sha256 differs from what this node already holds (remembered in ``state/mesh/peers/``, so a
re-sync with nothing new transfers no file bodies). Every response must open under the swarm
key *and* answer this request's id, or it is refused. A peer that fails is reported and the
others still sync.
"""
from __future__ import annotations

import http.client
import json
import os
import secrets
import time

from .. import vault as _vault
from .crypto import BadMessage, Box
from .files import MAX_FILE, MAX_MANIFEST, Refused, check_manifest, local_sha, peer_folder, receive
from .config import MeshConfig, parse_address

TIMEOUT = 30.0
MANIFEST_TIMEOUT = 600.0  # the first manifest of a big vault hashes (and redacts) every file


class SyncError(Exception):
    pass


class Connection:
    """A sealed request/response channel to one peer."""

    def __init__(self, address: str, box: Box, me: str, timeout: float = TIMEOUT):
        host, port = parse_address(address)
        self.conn = http.client.HTTPConnection(host, port, timeout=timeout)
        self.box, self.me = box, me

    def call(self, op: str, args: dict | None = None, limit: int = MAX_MANIFEST,
             timeout: float | None = None) -> tuple[int, bytes]:
        rid = secrets.token_hex(16)
        self.conn.timeout = timeout or TIMEOUT
        if self.conn.sock is not None:
            self.conn.sock.settimeout(self.conn.timeout)
        msg = json.dumps({"node": self.me, "ts": time.time(), "id": rid, "args": args or {}}).encode()
        try:
            self.conn.request("POST", f"/v1/{op}", self.box.seal_request(op, msg),
                              {"Content-Type": "application/octet-stream"})
            resp = self.conn.getresponse()
            length = int(resp.getheader("Content-Length") or -1)
            if not 0 <= length <= limit + 64:
                self.conn.close()
                raise Refused(f"{op}: response of {length} bytes refused")
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            self.conn.close()
            raise SyncError(f"{op}: {type(e).__name__}: {e}") from None
        if resp.status in (401, 409, 413, 429):
            reason = {401: "the peer refused our key (different mesh?)", 409: "refused as a replay",
                      413: "request too large", 429: "rate-limited after failed attempts"}[resp.status]
            raise SyncError(f"{op}: {resp.status} {reason}")
        try:
            return resp.status, self.box.open_response(rid, data)
        except BadMessage:
            raise SyncError(f"{op}: the answer does not open under our key (not our mesh)") from None

    def close(self) -> None:
        self.conn.close()


def sync_peer(cfg: MeshConfig, peer: dict, box: Box, vault: str, home: str) -> dict:
    started = time.monotonic()
    out = {"peer": peer["address"], "node": peer.get("node"), "files": 0, "downloaded": 0, "bytes": 0,
           "unchanged": 0, "errors": []}
    conn = Connection(peer["address"], box, cfg.name)
    try:
        status, payload = conn.call("manifest", timeout=MANIFEST_TIMEOUT)
        if status != 200:
            raise SyncError(f"manifest: peer answered {status}")
        try:
            data = json.loads(payload)
        except ValueError:
            raise Refused("manifest is not JSON") from None
        node = data.get("node") if isinstance(data, dict) else None
        entries = check_manifest(node, data.get("files") if isinstance(data, dict) else None)
        if peer.get("node") and peer["node"] != node:
            raise Refused(f"the peer at {peer['address']} now says it is {node!r}, not {peer['node']!r}: "
                          "remove and re-add it if that is right")
        peer["node"] = out["node"] = node
        folder = peer_folder(vault, node, cfg.name)
        known_path = os.path.join(home, "state", "mesh", "peers", f"{node}.json")
        known = _vault.read_json(known_path)
        out["files"] = len(entries)
        for e in entries:
            name, sha = e["name"], e["sha256"]
            dest = os.path.join(folder, name)
            if known.get(name) == sha and os.path.exists(dest):
                out["unchanged"] += 1
                continue
            if os.path.exists(dest) and local_sha(dest) == sha:
                known[name] = sha
                out["unchanged"] += 1
                continue
            try:
                st, body = conn.call("file", {"name": name}, limit=MAX_FILE)
                if st != 200:
                    raise SyncError(f"{name}: peer answered {st}")
                receive(folder, e, body)
            except (SyncError, Refused, OSError) as err:
                out["errors"].append(str(err))
                conn.close()
                conn = Connection(peer["address"], box, cfg.name)
                continue
            known[name] = sha
            out["downloaded"] += 1
            out["bytes"] += len(body)
        _vault.write_private(known_path, json.dumps(known))
    except (SyncError, Refused, OSError) as err:
        out["errors"].append(str(err))
    finally:
        conn.close()
    out["seconds"] = round(time.monotonic() - started, 3)
    _record_status(home, out)
    return out


def sync(which: str | None = None, vault: str | None = None) -> list:
    """Sync from one peer (address or node name) or, with None, from all of them."""
    cfg = MeshConfig.load()
    box = Box(MeshConfig.key_bytes())
    vault = vault or _vault.memories_path()
    home = _vault.home_path()
    peers = [cfg.find_peer(which)] if which else list(cfg.peers)
    if not peers:
        from ..errors import UsageError

        raise UsageError("no peers to sync with", "Add one: `chrollo mesh peers add HOST:PORT`.", kind="no_peers")
    results = [sync_peer(cfg, p, box, vault, home) for p in peers]
    os.sync()  # received files are renamed into place unsynced; one flush for the whole run
    cfg.save()  # learned node names
    return results


def _record_status(home: str, result: dict) -> None:
    path = os.path.join(home, "state", "mesh", "status.json")
    status = _vault.read_json(path)
    entry = status.get(result["peer"], {})
    entry.update(node=result["node"], last_sync=time.strftime("%Y-%m-%dT%H:%M:%S"), files=result["files"],
                 downloaded=result["downloaded"], bytes=entry.get("bytes", 0) + result["bytes"],
                 errors=len(result["errors"]), last_error=result["errors"][-1] if result["errors"] else None)
    if not result["errors"]:
        entry["last_ok"] = entry["last_sync"]
    status[result["peer"]] = entry
    _vault.write_private(path, json.dumps(status))


def status() -> dict:
    cfg = MeshConfig.load()
    st = _vault.read_json(os.path.join(_vault.home_path(), "state", "mesh", "status.json"))
    return {"name": cfg.name, "peers": [{**p, **st.get(p["address"], {})} for p in cfg.peers]}
