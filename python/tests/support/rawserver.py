"""The tests' fault catalogue: handlers for the raw-socket server (clientbench.conformance.faults.RawServer, shared
with check-driver's fault server) that answer, misbehave or count on purpose. A handler gets a `Conn` (read a
request, send bytes, hold the connection) on its own thread.
"""

from __future__ import annotations

import socket
import time

from clientbench.conformance.faults import HELLO, Conn, Handler, RawServer

__all__ = ["HELLO", "Conn", "Handler", "RawServer"]


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
