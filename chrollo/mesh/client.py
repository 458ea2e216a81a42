"""The LAN client: a :class:`~.manifests.Source` that fetches a peer's envelope and files over
TLS 1.3, presenting this node's certificate and pinning the peer's ID before a byte of a
request is sent. Every connection has an idle timeout per read and a deadline for the whole
request (a timer shuts the socket): a server that drips bytes cannot hold a sync.
"""
from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time

from . import identity as _identity
from .config import parse_address
from .files import BATCH_BYTES, BATCH_FILES, MAX_FILE, NOT_SENT, Refused
from .manifests import MAX_CERT, MAX_MANIFEST, Source, TransportError, batches

CONNECT_TIMEOUT = 10.0
IDLE_TIMEOUT = 30.0
MANIFEST_DEADLINE = 600.0   # the first manifest of a big vault hashes (and redacts) every file
FILE_DEADLINE_BASE, FILE_RATE = 30.0, 256 << 10   # seconds + bytes per second at least


class LanSource(Source):
    def __init__(self, ident, peer: dict, key_path: str, cert_path: str):
        if not peer.get("address"):
            raise TransportError("no address for this peer: `chrollo mesh peers add HOST:PORT --id ID`")
        self.ident, self.peer = ident, peer
        self.host, self.port = parse_address(peer["address"])
        self.key_path, self.cert_path = key_path, cert_path
        self.conn = None
        self.batched = True  # the server answers POST /v2/files (one that does not is asked file by file)

    def _context(self, with_cert: bool) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # the peer is pinned by ID just below, before any request
        if with_cert:
            ctx.load_cert_chain(self.cert_path, self.key_path)
        return ctx

    def _connect(self, with_cert: bool = True) -> http.client.HTTPConnection:
        try:
            raw = socket.create_connection((self.host, self.port), timeout=CONNECT_TIMEOUT)
        except OSError as e:
            raise TransportError(f"cannot reach {self.peer['address']}: {e}") from None
        nodelay(raw)
        timer = threading.Timer(CONNECT_TIMEOUT, _shut, [raw])  # a handshake dripped byte by byte ends too
        timer.daemon = True
        timer.start()
        try:
            raw.settimeout(CONNECT_TIMEOUT)
            tls = self._context(with_cert).wrap_socket(raw)
        except (ssl.SSLError, OSError) as e:
            raw.close()
            raise TransportError(f"TLS with {self.peer['address']} failed: {e}") from None
        finally:
            timer.cancel()
        der = tls.getpeercert(binary_form=True)
        got = _identity.node_id(der) if der else None
        if got != self.peer["id"]:
            tls.close()
            raise Refused(f"the node at {self.peer['address']} is {got}, not the paired {self.peer['id']}: "
                          "nothing was sent to it")
        tls.settimeout(IDLE_TIMEOUT)
        conn = http.client.HTTPConnection(self.host, self.port)
        conn.sock = tls
        return conn

    def _request(self, method: str, path: str, limit: int, deadline: float, body: bytes | None = None,
                 conn=None) -> tuple[int, bytes]:
        conn = conn or self.conn
        if self.deadline is not None:  # the peer's whole pull has a deadline too
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TransportError(f"{path}: the deadline for this peer has passed")
            deadline = min(deadline, left)
        # the manifest may take the server a while (it hashes a big vault once): no byte can
        # come meanwhile, so its reads wait up to the deadline; a file's stream must not stall
        conn.sock.settimeout(deadline if path.endswith("/manifest") else IDLE_TIMEOUT)
        timer = threading.Timer(deadline, lambda: _shut(conn.sock))
        timer.daemon = True
        timer.start()
        try:
            conn.request(method, path, body)
            resp = conn.getresponse()
            length = int(resp.getheader("Content-Length") or -1)
            if not 0 <= length <= limit:
                raise Refused(f"{path}: answer of {length} bytes refused (at most {limit})")
            data = resp.read(length)
            if len(data) != length:
                raise TransportError(f"{path}: connection closed after {len(data)} of {length} bytes")
            return resp.status, data
        except (OSError, http.client.HTTPException, ssl.SSLError, ValueError) as e:
            conn.close()
            if conn is self.conn:
                self.conn = None
            if not timer.is_alive():
                raise TransportError(f"{path}: no answer within {deadline:.0f} s") from None
            raise TransportError(f"{path}: {type(e).__name__}: {e}") from None
        finally:
            timer.cancel()

    def _get(self, path: str, limit: int, deadline: float, body: bytes | None = None) -> tuple[int, bytes]:
        method = "GET" if body is None else "POST"
        if self.conn is None:
            self.conn = self._connect()
            try:
                return self._request(method, path, limit, deadline, body)
            except TransportError:
                # first contact: the server does not know our certificate yet — introduce it
                self._hello()
                self.conn = self._connect()
        return self._request(method, path, limit, deadline, body)

    def _hello(self) -> None:
        conn = self._connect(with_cert=False)
        try:
            status, _ = self._request("POST", "/v2/hello", 1024, CONNECT_TIMEOUT * 2,
                                      body=self.ident.cert_pem, conn=conn)
        finally:
            conn.close()
        if status != 204:
            reason = {403: "it has not paired this node (run `chrollo mesh peers add --id "
                           f"{self.ident.id}` there)", 429: "rate-limited after failed attempts"}
            raise TransportError(f"{self.peer['address']} refused us: {reason.get(status, status)}")

    def manifest(self, peer_id: str) -> bytes | None:
        status, data = self._get("/v2/manifest", MAX_MANIFEST + MAX_CERT, MANIFEST_DEADLINE)
        if status != 200:
            raise TransportError(f"manifest: peer answered {status}")
        return data

    def file(self, peer_id: str, name: str, size: int) -> bytes:
        deadline = FILE_DEADLINE_BASE + size / FILE_RATE
        status, data = self._get(f"/v2/file/{name}", min(size, MAX_FILE), deadline)
        if status != 200:
            raise TransportError(f"{name}: peer answered {status}")
        return data

    def files(self, peer_id: str, entries: list):
        """One request a batch (~8 MB, by the manifest's sizes) instead of one a file: a
        request's round trip and its server thread cost more than a session file's bytes.
        The next batch is asked for while the caller writes this one's files (one thread,
        one request at a time on the connection: at most two batches in memory); a first
        sync of 10,000 files wrote them, then waited for the next answer, 13 times."""
        runs = list(batches(entries, BATCH_BYTES, BATCH_FILES))
        ahead = None
        if len(runs) > 1 and self.batched:
            from concurrent.futures import ThreadPoolExecutor

            ahead = ThreadPoolExecutor(1)
        try:
            nxt = ahead.submit(self._batch, runs[0]) if ahead else None
            for i, run in enumerate(runs):
                if nxt is not None:
                    got, nxt = nxt.result(), None
                else:
                    got = self._batch(run) if self.batched else None
                if got is not None and ahead and i + 1 < len(runs):
                    nxt = ahead.submit(self._batch, runs[i + 1])  # (while this one is written)
                if got is None:  # (a server without batches: file by file from now on)
                    yield from Source.files(self, peer_id, run)
                else:
                    yield from zip(run, got)
        finally:
            if ahead is not None:  # (a pull that stopped early waits for the request in flight:
                ahead.shutdown()   # it is bounded by its deadline and the peer's)

    def _batch(self, run: list) -> list | None:
        """[bytes or TransportError] for the files of ``run``; None if the server has no batches.
        The answer is, per file asked, its length (8 bytes, big-endian; NOT_SENT: not sent)
        then its bytes — at most the sizes the manifest signed, read within a deadline."""
        total = sum(e["size"] for e in run)
        try:
            status, data = self._get("/v2/files", total + 8 * len(run), FILE_DEADLINE_BASE + total / FILE_RATE,
                                     json.dumps([e["name"] for e in run]).encode())
        except (TransportError, Refused) as err:
            return [err] * len(run)
        if status in (404, 405):
            self.batched = False
            self.close()
            return None
        if status != 200:
            return [TransportError(f"files: peer answered {status}")] * len(run)
        out, at, view = [], 0, memoryview(data)
        for e in run:
            n = int.from_bytes(view[at:at + 8], "big") if at + 8 <= len(data) else None
            at += 8
            if n == NOT_SENT:
                out.append(TransportError(f"{e['name']}: not sent by the peer (changed since its manifest?)"))
            elif n is None or n > len(data) - at:
                out.append(TransportError(f"{e['name']}: the peer's answer ends early"))
                at = len(data)
            else:
                out.append(bytes(view[at:at + n]))
                at += n
        return out

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def probe(address: str, timeout: float = CONNECT_TIMEOUT) -> str | None:
    """The node ID of whatever answers TLS 1.3 at ``address`` (its certificate's fingerprint),
    or None. Nothing is sent beyond the handshake: this is how an address heard over mDNS is
    checked before it is recorded for a paired peer (anyone can announce any ID)."""
    try:
        host, port = parse_address(address)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        with socket.create_connection((host, port), timeout=timeout) as raw:
            raw.settimeout(timeout)
            with ctx.wrap_socket(raw) as tls:
                der = tls.getpeercert(binary_form=True)
        return _identity.node_id(der) if der else None
    except Exception:  # noqa: BLE001 — unreachable or not a chrollo node: not verified
        return None


def nodelay(sock) -> None:
    """No Nagle delay: a request or an answer goes out whole at once (with it, each small
    last segment waited for the peer's delayed ACK: ~20 ms per file, 20 s for 1,000 files)."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass


def _shut(sock) -> None:
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
