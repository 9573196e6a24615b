"""A small raw-socket HTTP server that misbehaves on purpose, for the fault catalogue tests.

`FaultServer(handler)` listens on 127.0.0.1 (ephemeral port) and runs `handler(conn)` in a thread for
every accepted connection. Every blocking call is bounded in time; `close()` stops everything."""

from __future__ import annotations

import socket
import threading
import time
from typing import Callable

Handler = Callable[["Conn"], None]
HELLO = b"Hello, World!"


class Conn:
    def __init__(self, sock: socket.socket, server: "FaultServer"):
        self.sock = sock
        self.server = server
        self.buf = b""

    def read_request(self, timeout: float = 10.0) -> bytes | None:
        """Read one request head (and a Content-Length body); None when the peer closed."""
        try:
            self.sock.settimeout(timeout)
            while b"\r\n\r\n" not in self.buf:
                chunk = self.sock.recv(65536)
                if not chunk:
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
            return head
        except (OSError, ValueError):
            return None

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:
            pass

    def respond(self, body: bytes = HELLO, status: str = "200 OK", headers: str = "") -> None:
        self.send(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nContent-Type: text/plain\r\n"
                  f"{headers}\r\n".encode() + body)

    def hold(self, seconds: float = 30.0) -> None:
        """Keep the connection open without answering (until the peer or the server closes)."""
        deadline = time.monotonic() + seconds
        try:
            self.sock.settimeout(0.1)
        except OSError:
            return
        while time.monotonic() < deadline and not self.server.closed:
            try:
                if self.sock.recv(65536) == b"":
                    return
            except socket.timeout:
                continue
            except OSError:
                return


class FaultServer:
    def __init__(self, handler: Handler, backlog: int = 64):
        self.handler = handler
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(backlog)
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.accepted = 0
        self.closed = False
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self.closed:
            try:
                sock, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.accepted += 1
            self._conns.append(sock)
            threading.Thread(target=self._run, args=(sock,), daemon=True).start()

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
        for s in [self.listener, *self._conns]:
            try:
                s.close()
            except OSError:
                pass
        self._thread.join(timeout=2)

    def __enter__(self) -> "FaultServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- handlers ------------------------------------------------------------------------------------

def keep_alive(conn: Conn) -> None:
    while conn.read_request() is not None:
        conn.respond()


def close_after_accept(conn: Conn) -> None:
    return None


def close_mid_status(conn: Conn) -> None:
    if conn.read_request() is not None:
        conn.send(b"HTTP/1.1 2")


def close_mid_headers(conn: Conn) -> None:
    if conn.read_request() is not None:
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Ty")


def close_mid_body(conn: Conn) -> None:
    if conn.read_request() is not None:
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 10)


def garbage_status(conn: Conn) -> None:
    if conn.read_request() is not None:
        conn.send(b"GARBAGE NONSENSE\r\n\r\n")
        conn.hold(5)


def never_answer(conn: Conn) -> None:
    conn.read_request()
    conn.hold(30)


def huge_headers(conn: Conn) -> None:
    if conn.read_request() is not None:
        big = b"a" * (1 << 20)
        conn.send(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Big-%d: %s\r\n" % (i, big) for i in range(16))
                  + b"Content-Length: 13\r\n\r\n" + HELLO)
        conn.hold(5)


CHUNKED_BODY = b"hello, chunked world" * 100


def chunked(conn: Conn) -> None:
    while conn.read_request() is not None:
        parts = [CHUNKED_BODY[i:i + 333] for i in range(0, len(CHUNKED_BODY), 333)]
        payload = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
        conn.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + payload)


def empty_body(conn: Conn) -> None:
    while conn.read_request() is not None:
        conn.respond(b"")


def connection_close(conn: Conn) -> None:
    if conn.read_request() is not None:
        conn.respond(headers="Connection: close\r\n")


def close_idle(conn: Conn) -> None:
    """Answer one request as keep-alive, then close the idle connection shortly after."""
    if conn.read_request() is not None:
        conn.respond()
        time.sleep(0.05)
        try:
            conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def status_500(conn: Conn) -> None:
    while conn.read_request() is not None:
        conn.respond(b"status 500", status="500 Internal Server Error")
