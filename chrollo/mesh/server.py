"""`chrollo mesh serve`: this node's sessions, to peers holding the swarm key, and to no one else.

HTTP/1.1 (keep-alive) on 127.0.0.1 unless told otherwise. Two operations, both POST with a
sealed body (see :mod:`.crypto`): ``/v1/manifest`` and ``/v1/file`` (``{"name"}``). A request
is accepted only if it opens under the swarm key, its timestamp is within ±60 s, and its
random id was not seen before (replays are refused). Anything else gets a bare 401 (or 409
for a replay) and counts as a failure; a client address with 10 failures in a minute gets
429 without its request being looked at, until the minute has passed.
"""
from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .. import vault as _vault
from .crypto import BadMessage, Box
from .files import MAX_FILE, manifest, outgoing, own_files, valid_file_name
from .redact import Redactor

WINDOW = 60.0             # seconds a request's timestamp may be off
MAX_REQUEST = 64 << 10
FAIL_LIMIT, FAIL_WINDOW = 10, 60.0


class Guard:
    """Replay memory and the failed-auth rate limit (shared by the server's threads)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seen: dict = {}
        self.fails: dict = {}

    def blocked(self, ip: str) -> bool:
        with self.lock:
            now = time.monotonic()
            recent = [t for t in self.fails.get(ip, []) if now - t < FAIL_WINDOW]
            self.fails[ip] = recent
            return len(recent) >= FAIL_LIMIT

    def fail(self, ip: str) -> None:
        with self.lock:
            self.fails.setdefault(ip, []).append(time.monotonic())

    def first_time(self, request_id: str) -> bool:
        with self.lock:
            now = time.time()
            if len(self.seen) > 10_000:
                self.seen = {k: t for k, t in self.seen.items() if now - t < 2 * WINDOW}
            if request_id in self.seen:
                return False
            self.seen[request_id] = now
            return True


class MeshServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, name: str, key: bytes, vault: str, home: str, log=None):
        self.node, self.box, self.vault, self.home = name, Box(key), vault, home
        self.redactor = Redactor.from_config(home)
        self.guard = Guard()
        self.log = log or (lambda msg: None)
        self.cache = os.path.join(home, "state", "mesh", "manifest-cache.json")
        super().__init__(addr, Handler)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "chrollo-mesh/1"
    sys_version = ""

    def log_message(self, fmt, *args):  # quiet: failures go to the server's log
        pass

    def _bare(self, code: int) -> None:
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self._bare(405)

    def do_POST(self):
        srv: MeshServer = self.server
        ip = self.client_address[0]
        op = self.path[len("/v1/"):] if self.path.startswith("/v1/") else ""
        if srv.guard.blocked(ip):
            self.close_connection = True
            return self._bare(429)
        try:
            length = int(self.headers.get("Content-Length", "-1"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_REQUEST:
            self.close_connection = True
            return self._bare(413)
        blob = self.rfile.read(length)
        if op not in ("manifest", "file"):
            return self._bare(404)
        try:
            msg = json.loads(srv.box.open_request(op, blob))
            rid, ts = msg["id"], float(msg["ts"])
            if not isinstance(rid, str) or not 16 <= len(rid) <= 64:
                raise ValueError("bad id")
        except (BadMessage, ValueError, KeyError, TypeError) as e:
            srv.guard.fail(ip)
            srv.log(f"refused {op} from {ip}: {type(e).__name__}: {e}")
            return self._bare(401)
        if abs(time.time() - ts) > WINDOW:
            srv.guard.fail(ip)
            srv.log(f"refused {op} from {ip}: stale timestamp")
            return self._bare(401)
        if not srv.guard.first_time(rid):
            srv.guard.fail(ip)
            srv.log(f"refused {op} from {ip}: replayed request")
            return self._bare(409)
        try:
            status, payload = self._answer(op, msg.get("args") or {})
        except Exception as e:  # noqa: BLE001 — one bad request never stops the server
            srv.log(f"error answering {op}: {type(e).__name__}: {e}")
            status, payload = 500, json.dumps({"error": "internal"}).encode()
        body = srv.box.seal_response(rid, payload)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _answer(self, op: str, args: dict) -> tuple[int, bytes]:
        srv: MeshServer = self.server
        if op == "manifest":
            files = manifest(srv.vault, srv.redactor, srv.cache)
            return 200, json.dumps({"node": srv.node, "files": files}).encode()
        name = args.get("name")
        if not valid_file_name(name) or name not in {e.name for e in own_files(srv.vault)}:
            return 404, json.dumps({"error": "no such session"}).encode()
        path = os.path.join(srv.vault, name)
        if os.path.getsize(path) > MAX_FILE:
            return 404, json.dumps({"error": "too large"}).encode()
        return 200, outgoing(path, srv.redactor)


def serve(bind: str, port: int, vault: str | None = None, ready=None, announce: bool = False) -> None:
    """Serve until interrupted; ``ready(host, port)`` is called once listening; ``announce``
    also publishes the node over mDNS (extra ``chrollo[lan]``)."""
    from .config import MeshConfig

    cfg = MeshConfig.load()
    key = MeshConfig.key_bytes()
    vault = vault or _vault.memories_path()
    home = _vault.home_path()
    def log(msg: str) -> None:
        _vault.append_log("mesh", msg, who="chrollo mesh")

    httpd = MeshServer((bind, port), cfg.name, key, vault, home, log)
    host, real_port = httpd.server_address[:2]
    beacon = None
    try:
        if announce:
            from .discovery import Announcement

            beacon = Announcement(cfg.name, bind, real_port)
        if ready:
            ready(host, real_port)
        httpd.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        if beacon is not None:
            beacon.close()
        httpd.server_close()
