"""A fake model API on 127.0.0.1 (port 0) speaking all four harness wire formats, logging every
request; and a refusing proxy that records any attempt to reach anything else.

Standard library only. Streams are HTTP/1.1 chunked SSE, so a cut (the connection closed
before the final chunk) looks to the client exactly like a dropped connection.
"""
from __future__ import annotations

import gzip
import json
import re
import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from . import wire
from .model import Model, Reply

_HIDDEN_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "api-key"}


class FakeModelServer:
    """``with FakeModelServer(log) as srv: srv.url`` — every request is kept in ``srv.requests``
    and appended to the JSON-lines ``log`` file: method, path, headers (keys hidden), body,
    the wire format and a summary of the reply."""

    def __init__(self, log: str | Path | None = None, model: Model | None = None):
        self.model = model or Model()
        self.requests: list = []
        self.log = Path(log) if log else None
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._httpd.shutdown()
        self._httpd.server_close()

    def record(self, entry: dict) -> None:
        with self._lock:
            entry["n"] = len(self.requests) + 1
            self.requests.append(entry)

    def write(self, entry: dict) -> None:
        if self.log:
            with self._lock, open(self.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def model_requests(self) -> list:
        """The requests that asked the model for an answer with tools (the agent's own turns)."""
        return [r for r in self.requests if r.get("wire") and not r.get("aux")]

    def mark(self) -> int:
        return len(self.requests)


def _handler(server: FakeModelServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet: the request log is the record
            pass

        def do_GET(self):
            server.write(self._record(None))
            self._json(200, {"ok": True})

        do_HEAD = do_GET

        def do_POST(self):
            entry = {}
            try:
                self._post(entry)
            finally:
                server.write(entry)

        def _post(self, entry):
            raw = self._body()
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_unparsed": raw[:2000].decode("utf-8", "replace")}
            path = self.path.split("?")[0]
            self._record(body, entry)
            if path.endswith("/count_tokens") or path.endswith(":countTokens"):
                return self._json(200, {"input_tokens": 100, "totalTokens": 100})
            if path.endswith("/messages"):
                return self._answer(entry, "anthropic", body, wire.parse_anthropic, wire.render_anthropic,
                                    wire.anthropic_json, wire.anthropic_error, named_events=True)
            if path.endswith("/responses"):
                return self._answer(entry, "responses", body, wire.parse_responses, wire.render_responses,
                                    None, wire.openai_error)
            if path.endswith("/chat/completions"):
                return self._answer(entry, "chat", body, wire.parse_chat, wire.render_chat,
                                    wire.chat_json, wire.openai_error)
            m = re.search(r"/models/([^/:]+):(streamGenerateContent|generateContent)$", path)
            if m:
                body.setdefault("model", m.group(1))
                if m.group(2) == "generateContent":
                    body["stream"] = False
                else:
                    body["stream"] = True
                return self._answer(entry, "gemini", body, wire.parse_gemini, wire.render_gemini,
                                    wire.gemini_json, wire.gemini_error)
            self._json(404, {"error": {"message": f"fake model server: no route for {path}"}})

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                data = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    data += self.rfile.read(size)
                    self.rfile.readline()
            else:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                data = gzip.decompress(data)
            return data

        def _record(self, body, entry=None) -> dict:
            entry = entry if entry is not None else {}
            entry.update({"t": time.time(), "method": self.command, "path": self.path,
                     "headers": {k.lower(): ("<hidden>" if k.lower() in _HIDDEN_HEADERS else v)
                                 for k, v in self.headers.items()}, "body": body})
            server.record(entry)
            return entry

        def _answer(self, entry, name, body, parse, render, as_json, error, named_events=False):
            req = parse(body)
            reply = server.model.respond(req)
            entry.update(wire=name, aux=req.aux, prompt=req.prompt[-300:], tools=req.tools,
                         deferred=req.deferred, results=[list(r) for r in req.results],
                         reply={"text": reply.text, "calls": [[c.name, c.args] for c in reply.calls],
                                "cut": reply.cut, "error": reply.error, "chunks": reply.chunks})
            if reply.error:
                return self._json(reply.error, error(reply.error))
            model = str(body.get("model") or "fake-model")
            if body.get("stream") is False and as_json is not None:
                return self._json(200, as_json(reply, model))
            self._sse(list(render(reply, model)), named_events, reply)

        def _sse(self, events: list, named: bool, reply: Reply):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if reply.cut:
                # up to and including the first piece of text, then the connection drops
                piece = json.dumps(reply.pieces()[0])[1:-1]
                first = next((i for i, (_, ev) in enumerate(events) if piece in json.dumps(ev)), 0)
                events = events[:first + 1]
            for name, ev in events:
                data = (f"event: {name}\n" if named and name else "") + f"data: {json.dumps(ev)}\n\n"
                self._chunk(data.encode())
            if reply.cut:
                time.sleep(0.05)
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if not named and events and "choices" in events[-1][1]:
                self._chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _chunk(self, data: bytes):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _json(self, status: int, obj: dict):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

    return Handler


class RefusingProxy:
    """An HTTP(S) proxy on 127.0.0.1 that forwards nothing: it notes the target of every
    request (``CONNECT host:port`` or an absolute URL) in ``attempts`` and answers 403. Set as
    ``HTTP(S)_PROXY`` for a harness, it shows any traffic that would have left the machine."""

    def __init__(self):
        self.attempts: list = []
        outer = self

        class H(socketserver.StreamRequestHandler):
            def handle(self):
                try:
                    line = self.rfile.readline(8192).decode("latin-1").strip()
                except OSError:
                    return
                if line:
                    outer.attempts.append(line.rsplit(" ", 1)[0])
                self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

        self._srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
        self._srv.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._srv.server_address[1]}"
        threading.Thread(target=self._srv.serve_forever, daemon=True).start()

    def close(self):
        self._srv.shutdown()
        self._srv.server_close()
