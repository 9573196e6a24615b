"""A raw-socket HTTP/1.1 server that answers, misbehaves or counts on purpose, for the faults the axum server does
not make: check-driver's fault server here, and the tests' fault catalogue (python/tests/support/rawserver.py).

`RawServer(handler)` listens on 127.0.0.1 (an ephemeral port) and runs `handler(conn)` on its own thread for
every accepted connection; `accepted` counts the connections and `heads` holds every request head read.
Every blocking call is bounded in time; `close()` (or the end of a `with` block) stops the listener, shuts
every connection down and joins the threads.

`FaultServer()` is check-driver's: a RawServer whose answer depends on the path:

    with FaultServer() as f:
        f.url + "/reset"      # 200, Content-Length 100000, 1,000 bytes, then a TCP reset (RST)
        f.url + "/truncated"  # 200, Content-Length 100, 10 bytes, then the connection closed (FIN)
        f.url + "/wrong"      # 200 with WRONG_ANSWER whatever the request's body (an upload answered wrongly)

Any other path gets 404.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

HELLO = b"Hello, World!"
#: /wrong's answer: neither an /upload line nor an echo of any body the checks send
WRONG_ANSWER = b"not the digest\n"
#: a request head longer than this is not read (the connection is given up)
MAX_HEAD = 65536


class Conn:
    """One accepted connection, as a handler sees it."""

    def __init__(self, sock: socket.socket, server: RawServer):
        self.sock = sock
        self.server = server
        self.buf = b""

    def read_request(self, timeout: float = 10.0) -> bytes | None:
        """Read one request (its head, and a Content-Length body) and return the head; None when the peer
        closed, or nothing complete arrived within `timeout` s (an idle timeout)."""
        try:
            self.sock.settimeout(timeout)
            while b"\r\n\r\n" not in self.buf:
                chunk = self.sock.recv(65536)
                if not chunk or len(self.buf) > MAX_HEAD:
                    return None
                self.buf += chunk
            head, _, rest = self.buf.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(rest) < length:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return None
                rest += chunk
            self.buf = rest[length:]
            self.server.heads.append(head)
            return head
        except (OSError, ValueError):
            return None

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:
            pass

    def respond(self, body: bytes = HELLO, status: str = "200 OK", headers: str = "") -> None:
        self.send(
            f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nContent-Type: text/plain\r\n{headers}\r\n".encode()
            + body
        )

    def hold(self, seconds: float = 30.0) -> bool:
        """Keep the connection open without answering, until the peer closes it (True), `seconds` pass or
        the server closes (False)."""
        deadline = time.monotonic() + seconds
        try:
            self.sock.settimeout(0.1)
        except OSError:
            return False
        while time.monotonic() < deadline and not self.server.closed:
            try:
                if self.sock.recv(65536) == b"":
                    return True
            except TimeoutError:
                continue
            except OSError:
                return False
        return False


Handler = Callable[[Conn], None]


_Server = TypeVar("_Server", bound="RawServer")


class RawServer:
    def __init__(self, handler: Handler, backlog: int = 64):
        self.handler = handler
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(backlog)
        self.listener.settimeout(0.1)
        self.port: int = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.accepted = 0  # connections accepted so far
        self.heads: list[bytes] = []  # every request head read, in order
        self.closed = False
        self._conns: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._serve, daemon=True)
        self._acceptor.start()

    def _serve(self) -> None:
        while not self.closed:
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            # counted before the handler runs, so a client that got an answer was counted
            self.accepted += 1
            self._conns.append(sock)
            t = threading.Thread(target=self._run, args=(sock,), daemon=True)
            self._threads.append(t)
            t.start()

    def _run(self, sock: socket.socket) -> None:
        try:
            self.handler(Conn(sock, self))
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def close(self) -> None:
        self.closed = True
        self._acceptor.join(timeout=2)
        self.listener.close()
        for s in self._conns:
            try:
                s.shutdown(socket.SHUT_RDWR)  # wakes a handler blocked in recv()
            except OSError:
                pass
        for t in self._threads:
            t.join(timeout=2)
        for s in self._conns:
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self: _Server) -> _Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: what /reset announces and what it sends of it before the reset
RESET_LENGTH, RESET_SENT = 100_000, 1_000
#: what /truncated announces and what it sends of it before the close
TRUNCATED_LENGTH, TRUNCATED_SENT = 100, 10


def _head(length: int) -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\nContent-Type: application/octet-stream\r\n\r\n".encode()


def request_path(head: bytes) -> str | None:
    """The path of a request head's target: origin-form or absolute-form (urllib3 sends that to a proxy)."""
    parts = head.split(b"\r\n", 1)[0].split(b" ")
    if len(parts) != 3:
        return None
    return urlsplit(parts[1].decode("latin-1")).path


def faults(conn: Conn) -> None:
    """check-driver's faults, by path, on the first request of a connection."""
    head = conn.read_request()
    path = request_path(head) if head is not None else None
    if path is None:
        return
    body = b"x" * RESET_LENGTH
    if path == "/reset":
        conn.send(_head(RESET_LENGTH) + body[:RESET_SENT])
        time.sleep(0.05)  # the head and part of the body arrive first: the reset comes mid-body
        try:
            conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    elif path == "/wrong":
        conn.send(_head(len(WRONG_ANSWER)).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n") + WRONG_ANSWER)
    elif path == "/truncated":
        conn.send(_head(TRUNCATED_LENGTH) + body[:TRUNCATED_SENT])
        time.sleep(0.05)
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    else:
        conn.send(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


class FaultServer(RawServer):
    def __init__(self) -> None:
        super().__init__(faults)
