"""Transport: the LAN server, `chrollo mesh serve` — HTTP/1.1 inside TLS 1.3 with mutual
authentication (Python's ``ssl``). Moves bytes only; the trust layer decides what they are.

Both sides present their node certificate; each pins the other's ID (the certificate's
fingerprint), so only paired nodes talk, and TLS 1.3's ephemeral key exchange gives forward
secrecy. A paired node connecting for the first time is not yet known by certificate, only by
ID: it connects without one and posts its certificate to ``/v2/hello``; the server keeps it
only if its fingerprint is a paired ID (a certificate is public, the ID pins it, and only the
key's holder can then authenticate with it). Authenticated peers may ``GET /v2/manifest``
(the signed envelope), ``GET /v2/file/<name>`` and ``POST /v2/files`` (a JSON list of names,
at most BATCH_FILES, answered with each file's length and bytes in turn, at most
MAX_BATCH_ANSWER bytes or one file).

Bounded: at most MAX_ANON connections not yet proved paired (a new one evicts the oldest),
each with its handshake within HANDSHAKE_TIMEOUT and, without a paired certificate, all of
it within ANON_DEADLINE; MAX_CONNECTIONS paired ones, each read within IDLE_TIMEOUT and each
connection within CONNECTION_DEADLINE (timers shut the socket, so a byte-dripping client
cannot hold one); failed handshakes and refused hellos count
against the address (FAIL_LIMIT per FAIL_WINDOW), which then only loses its junk hellos (429)
— a paired peer behind the same address is always served, and its hello always taken.
"""
from __future__ import annotations

import os
from collections import OrderedDict
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .. import vault as _vault
from . import identity as _identity
from .client import nodelay
from .files import (MAX_BATCH_ANSWER, MAX_BATCH_ASK, BATCH_FILES, NOT_SENT, Refused, bounded_json,
                    valid_file_name)

MAX_CONNECTIONS = 64      # paired nodes at once
MAX_ANON = 32             # connections not yet proved paired (the oldest goes for a new one)
ANON_DEADLINE = 10.0      # a connection without a paired certificate: its hello, whole
HANDSHAKE_TIMEOUT = 10.0
IDLE_TIMEOUT = 30.0
CONNECTION_DEADLINE = 1800.0
FAIL_LIMIT, FAIL_WINDOW = 10, 60.0
MAX_HELLO = 16 << 10


def shut(sock) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class Guard:
    """Failed-auth counts per address (shared by the server's threads)."""

    def __init__(self):
        self.lock = threading.Lock()
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
            if len(self.fails) > 10_000:
                self.fails.clear()


class MeshServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, addr, ident, name: str, vault: str, home: str, log=None):
        from .config import MeshConfig, mesh_dir

        self.ident, self.node, self.vault, self.home = ident, name, vault, home
        self.guard, self.slots = Guard(), threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.anon, self.anon_lock = OrderedDict(), threading.Lock()
        self.log = log or (lambda msg: None)
        from ..layout import mesh_config_file

        self._cfg_path = mesh_config_file()
        self._cfg_stamp, self._paired = None, set()
        self._load_config = MeshConfig.load
        self.pub_lock, self.pub = threading.Lock(), None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        kp, cp = ident.paths(mesh_dir())
        ctx.load_cert_chain(cp, kp)
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_verify_locations(cadata=ident.cert_pem.decode())
        self.ctx, self.trusted = ctx, set()
        for nid in self.paired():
            self.trust(nid, _identity.known_cert(nid))
        super().__init__(addr, Handler)

    def trust(self, nid: str, pem: bytes | None) -> None:
        """Let paired node ``nid`` authenticate with ``pem`` (once; a stored file that does not
        hold exactly its certificate is skipped and logged, never fatal)."""
        if not pem or nid in self.trusted:
            return
        try:
            got, canonical = _identity.one_cert(pem)
            if got != nid:
                raise ValueError(f"it is the certificate of {got}")
            self.ctx.load_verify_locations(cadata=canonical.decode())
        except (ValueError, ssl.SSLError) as e:
            self.log(f"stored certificate of {nid} skipped: {e}")
            return
        self.trusted.add(nid)

    def paired(self) -> set:
        """The paired IDs, re-read when the config changes (removing a peer revokes it at once)."""
        try:
            stamp = os.stat(self._cfg_path).st_mtime_ns
        except OSError:
            return set()
        if stamp != self._cfg_stamp:
            try:
                self._paired = {p["id"] for p in self._load_config().peers}
            except Exception:  # noqa: BLE001 — a config being rewritten: keep the last good one
                return self._paired
            self._cfg_stamp = stamp
        return self._paired

    def publication(self, fresh: bool):
        from .manifests import publish

        with self.pub_lock:
            if fresh or self.pub is None:
                self.pub = publish(self.ident, self.node, self.vault, self.home)
            return self.pub

    def process_request(self, request, client_address):
        # Until it has proved to be a paired node, a connection is one of at most MAX_ANON
        # anonymous ones; a new one evicts the oldest. So connections that never finish a
        # handshake (or finish it without a paired certificate and then drip) can never hold
        # the slots paired peers use, whatever their number.
        with self.anon_lock:
            while len(self.anon) >= MAX_ANON:
                _key, old = self.anon.popitem(last=False)
                shut(old)
            self.anon[id(request)] = request
        t = threading.Thread(target=self._one, args=(request, client_address), daemon=True)
        t.start()

    def _unlisted(self, request) -> bool:
        """Take ``request`` off the anonymous list; False if it was evicted meanwhile."""
        with self.anon_lock:
            return self.anon.pop(id(request), None) is not None

    def _one(self, request, client_address):
        """Handshake in the connection's own thread (never in the accept loop), bounded as a
        whole (a handshake dripped byte by byte ends at HANDSHAKE_TIMEOUT); then a paired node
        gets a slot and CONNECTION_DEADLINE, anyone else ANON_DEADLINE (a hello is one request)."""
        timer = threading.Timer(HANDSHAKE_TIMEOUT, shut, [request])
        timer.daemon = True
        timer.start()
        tls, slot = None, False
        try:
            nodelay(request)
            request.settimeout(HANDSHAKE_TIMEOUT)
            try:
                tls = self.ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                self.guard.fail(client_address[0])
                self.log(f"TLS handshake from {client_address[0]} failed: {type(e).__name__}: {e}")
                return
            timer.cancel()
            der = tls.getpeercert(binary_form=True)
            paired = bool(der) and _identity.node_id(der) in self.paired()
            if paired:
                if not self._unlisted(request):
                    return  # evicted while it shook hands
                slot = self.slots.acquire(blocking=False)
                if not slot:
                    return
            timer = threading.Timer(CONNECTION_DEADLINE if paired else ANON_DEADLINE, shut, [request])
            timer.daemon = True
            timer.start()
            tls.settimeout(IDLE_TIMEOUT if paired else ANON_DEADLINE)
            self.finish_request(tls, client_address)
        except Exception as e:  # noqa: BLE001 — one connection never stops the server
            self.log(f"connection from {client_address[0]}: {type(e).__name__}: {e}")
        finally:
            timer.cancel()
            self._unlisted(request)
            for s in (tls, request):
                if s is not None:
                    shut(s)
                    s.close()
            if slot:
                self.slots.release()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "chrollo-mesh/2"
    sys_version = ""

    def log_message(self, fmt, *args):  # quiet: failures go to the server's log
        pass

    def _send(self, code: int, body: bytes = b"", ctype: str = "application/octet-stream") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self._headers_buffer.append(b"\r\n")  # (end_headers, but the body goes in the same write)
        self.wfile.write(b"".join(self._headers_buffer) + body)
        self._headers_buffer = []

    def _peer(self) -> str | None:
        der = self.connection.getpeercert(binary_form=True)
        if not der:
            return None
        nid = _identity.node_id(der)
        return nid if nid in self.server.paired() else ""

    def do_GET(self):
        srv: MeshServer = self.server
        peer = self._peer()
        if not peer:
            self.close_connection = True
            srv.guard.fail(self.client_address[0])
            return self._send(403)
        if self.path == "/v2/manifest":
            return self._send(200, srv.publication(fresh=True).envelope, "application/json")
        if self.path.startswith("/v2/file/"):
            name = self.path[len("/v2/file/"):]
            if valid_file_name(name):
                try:
                    return self._send(200, srv.publication(fresh=False).data(name))
                except (Refused, OSError):
                    pass
        return self._send(404)

    def _length(self) -> int:
        """The request's Content-Length (-1: none, or not a number)."""
        try:
            return int(self.headers.get("Content-Length", "-1"))
        except ValueError:
            return -1

    def _files(self):
        """A batch of files for a paired peer: one request for many small files."""
        srv: MeshServer = self.server
        if not self._peer():
            self.close_connection = True
            srv.guard.fail(self.client_address[0])
            return self._send(403)
        length = self._length()
        if not 0 < length <= MAX_BATCH_ASK:
            self.close_connection = True
            return self._send(413)
        try:
            names = bounded_json(self.rfile.read(length), MAX_BATCH_ASK, depth=1)
        except Refused:
            names = None
        if not isinstance(names, list) or len(names) > BATCH_FILES:
            self.close_connection = True
            return self._send(400)
        pub, parts, total = srv.publication(fresh=False), [], 0
        for name in names:
            data = None
            if isinstance(name, str) and valid_file_name(name):
                try:
                    data = pub.data(name)
                except (Refused, OSError):
                    pass
            if data is None or (total and total + len(data) > MAX_BATCH_ANSWER):
                parts.append(NOT_SENT.to_bytes(8, "big"))
                continue
            parts += [len(data).to_bytes(8, "big"), data]
            total += len(data)
        return self._send(200, b"".join(parts))

    def do_POST(self):
        if self.path == "/v2/files":
            return self._files()
        srv: MeshServer = self.server
        ip = self.client_address[0]
        self.close_connection = True
        if self.path != "/v2/hello" or self._peer() is not None:
            return self._send(404)
        length = self._length()
        if not 0 < length <= MAX_HELLO:
            srv.guard.fail(ip)
            return self._send(413)
        pem = self.rfile.read(length)
        try:
            nid = _identity.one_cert(pem)[0]  # exactly one certificate: nothing more is looked at
        except Exception:  # noqa: BLE001 — junk is junk
            nid = None
        if nid not in srv.paired():  # a paired node's hello is always taken: junk never locks it out
            if srv.guard.blocked(ip):
                return self._send(429)
            srv.guard.fail(ip)
            srv.log(f"hello from {ip} refused: {nid or 'not exactly one certificate'} is not paired")
            return self._send(403)
        if nid not in srv.trusted:  # (a repeated hello costs nothing)
            srv.trust(nid, pem)
            _identity.remember_cert(pem)
        return self._send(204)

    do_PUT = do_DELETE = do_HEAD = lambda self: self._send(405)


def _listen(bind: str, port: int, make):
    """``make()`` (a server binding ``bind:port``), its failure to listen told in the error
    contract: a port in use (runtime, 1); an address that is not this machine's (usage, 2)."""
    import errno

    from ..errors import ChrolloError, UsageError

    try:
        return make()
    except socket.gaierror as e:
        raise UsageError(f"--bind {bind}: not an address or a host name that resolves ({e.strerror})",
                         BIND_HINT, kind="bad_address") from None
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise ChrolloError("port_in_use", f"{bind}:{port} is already in use (another `chrollo mesh serve`?)",
                               "Stop what listens there, or pick another port: --port N (0: any free one).") from None
        if e.errno == errno.EADDRNOTAVAIL:
            raise UsageError(f"--bind {bind}: not an address of this machine", BIND_HINT,
                             kind="bad_address") from None
        if e.errno == errno.EACCES:
            raise ChrolloError("port_denied", f"not allowed to listen on {bind}:{port}",
                               "Ports below 1024 need privileges: use --port 47470 (the default).") from None
        raise


BIND_HINT = "--bind takes one of this machine's addresses: 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)."


def serve(bind: str, port: int, vault: str | None = None, ready=None, announce: bool = False) -> None:
    """Serve until interrupted; ``ready(host, port, id)`` is called once listening; ``announce``
    also publishes the node over mDNS."""
    from .config import MeshConfig, mesh_dir
    from .identity import Identity

    cfg = MeshConfig.load()
    ident = Identity.load(mesh_dir())
    vault = vault or _vault.memories_path()
    home = _vault.home_path()

    def log(msg: str) -> None:
        _vault.append_log("mesh", msg, who="chrollo mesh")

    httpd = _listen(bind, port, lambda: MeshServer((bind, port), ident, cfg.name, vault, home, log))
    host, real_port = httpd.server_address[:2]
    beacon = None
    try:
        if announce:
            from .discovery import Announcement

            beacon = Announcement(cfg.name, ident.id, bind, real_port)
        if ready:
            ready(host, real_port, ident.id)
        httpd.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        if beacon is not None:
            beacon.close()
        httpd.server_close()
