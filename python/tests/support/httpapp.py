"""An HTTP/1.1 keep-alive application on Python's own http.server, run in a thread: a server this project did
not write, with what the axum server does not offer (a request that is never answered, a comma inside a
Set-Cookie value, a charset named in capitals, a redirect to another scheme) and a log of every request.

Routes: /redirect/{n} (302 chain ending at /anything), /redirect-to?url=&status=, /gzip and /deflate (BIG
compressed), /cookies, /latin1, /stream (BIG chunked, in flushed 64 KiB pieces), /hang (no answer until the
app stops, at most 10 s), /drip (8 bytes, 50 ms apart); anything else: the request as JSON (method, raw path,
header pairs with lower-case names, body as latin-1 text)."""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

BIG = bytes(range(256)) * 4096  # 1 MiB


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: App

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes = b"", headers: list[tuple[str, str]] | None = None) -> None:
        self.send_response(status)
        for name, value in headers or []:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _any(self) -> None:
        body = self._body()
        split = urlsplit(self.path)
        self.server.seen.append((self.command, self.path, self.headers.items(), body))
        path = split.path
        query = dict(parse_qsl(split.query))
        if path.startswith("/redirect/"):
            n = int(path.rsplit("/", 1)[1])
            self._send(302, b"", [("Location", f"/redirect/{n - 1}" if n > 1 else "/anything")])
        elif path == "/redirect-to":
            self._send(int(query.get("status", "302")), b"moved", [("Location", query["url"])])
        elif path == "/gzip":
            self._send(200, gzip.compress(BIG), [("Content-Encoding", "gzip")])
        elif path == "/deflate":
            self._send(200, zlib.compress(BIG), [("Content-Encoding", "deflate")])
        elif path == "/cookies":
            self._send(200, b"", [("Set-Cookie", "a=1; Path=/"), ("X-One", "1"), ("Set-Cookie", "b=2, c=3")])
        elif path == "/latin1":
            self._send(200, "café".encode("latin-1"), [("Content-Type", "text/plain; charset=ISO-8859-1")])
        elif path == "/stream":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(BIG), 65536):
                piece = BIG[i : i + 65536]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/hang":
            self.server.stop.wait(10)
            self.close_connection = True
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "8")
            self.end_headers()
            for _ in range(8):
                self.wfile.write(b"x")
                self.wfile.flush()
                if self.server.stop.wait(0.05):
                    return
        else:
            out = {
                "method": self.command,
                "path": self.path,
                "headers": [[k.lower(), v] for k, v in self.headers.items()],
                "body": body.decode("latin-1"),
            }
            self._send(200, json.dumps(out).encode(), [("Content-Type", "application/json")])

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any


class App(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        #: every request: (method, raw path, header pairs, body)
        self.seen: list[tuple[str, str, list[tuple[str, str]], bytes]] = []
        self.stop = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def running() -> Iterator[App]:
    """An App serving on an ephemeral loopback port; stopped (and /hang released) on every path."""
    srv = App()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.stop.set()
        srv.shutdown()
        srv.server_close()
        thread.join(10)


def echoed(r: Any) -> dict[str, Any]:
    """The JSON document the App answers a request it echoes with."""
    doc: dict[str, Any] = r.json()
    return doc


def header_of(doc: dict[str, Any], name: str) -> list[str]:
    """Every value of header `name` (lower case) in an echoed request."""
    return [v for k, v in doc["headers"] if k == name]


def sent_header_names(app: App) -> list[str]:
    """The lower-case header names of the last request the App saw."""
    return [k.lower() for k, _ in app.seen[-1][2]]
