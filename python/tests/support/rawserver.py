"""A small raw-socket HTTP/1.1 server that answers, misbehaves or counts on purpose.

`RawServer(handler)` listens on 127.0.0.1 (an ephemeral port) and runs `handler(conn)` on its own thread for
every accepted connection; `accepted` counts the connections and `heads` holds every request head read.
Every blocking call is bounded in time; `close()` (or the end of a `with` block) stops the listener, shuts
every connection down and joins the threads. The handlers at the end are the fault catalogue's cases.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

HELLO = b"Hello, World!"


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

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- handlers: answers -------------------------------------------------------------------------------


def answer(body: bytes = HELLO, idle_timeout: float = 10.0) -> Handler:
    """A keep-alive server: every request on the connection gets 200 with `body`; the connection is closed
    after `idle_timeout` s without a request."""

    def handler(conn: Conn) -> None:
        while conn.read_request(timeout=idle_timeout) is not None:
            conn.respond(body)

    handler.__name__ = f"answer_{len(body)}_bytes"
    return handler


keep_alive = answer()
keep_alive.__name__ = "keep_alive"

CHUNKED_BODY = b"hello, chunked world" * 100


def chunked(conn: Conn) -> None:
    while conn.read_request() is not None:
        parts = [CHUNKED_BODY[i : i + 333] for i in range(0, len(CHUNKED_BODY), 333)]
        payload = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
        conn.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + payload)


def empty_body(conn: Conn) -> None:
    while conn.read_request() is not None:
        conn.respond(b"")


def close_after_answer(conn: Conn) -> None:
    """Answer one request as keep-alive (no `Connection: close`), then close the connection at once."""
    if conn.read_request() is not None:
        conn.respond()


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


# -- handlers: faults --------------------------------------------------------------------------------


def close_after_accept(conn: Conn) -> None:
    return None


def close_mid_status(conn: Conn) -> None:
    if conn.read_request() is not None:
        conn.send(b"HTTP/1.1 2")


def close_mid_headers(conn: Conn) -> None:
    if conn.read_request() is not None:
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Ty")


#: what close_mid_body sends of the body it announces as 100 bytes
PARTIAL_BODY = b"x" * 10


def close_mid_body(conn: Conn) -> None:
    if conn.read_request() is not None:
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + PARTIAL_BODY)


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
        conn.send(
            b"HTTP/1.1 200 OK\r\n"
            + b"".join(b"X-Big-%d: %s\r\n" % (i, big) for i in range(16))
            + b"Content-Length: 13\r\n\r\n"
            + HELLO
        )
        conn.hold(5)
