"""A keep-alive connection that the server closed while it sat idle must never fail the next request.

Servers close idle keep-alive connections after a while (nginx: `keepalive_timeout`, 75 s by default).
The next request from a client that pooled such a connection must go out on a new connection, for every
method: a client that writes it into the closed connection gets "connection closed before message
completed", and can then only re-send it blindly, which is wrong for POST and PATCH (the server may
have received it). Every binding client is checked: beast_client.Client, reqwest_client.Client and both
AsyncClients.

The server here answers every request with ``<METHOD> <body>``, logs it, and closes a connection once
it has been idle for IDLE_TIMEOUT. With ``close="fin"`` it closes only its sending side and listens on:
a request that still arrives was sent on a connection the client should have known to be closed, and
is counted as late (never answered). With ``close="full"`` it closes the socket outright, as nginx does
(the client's write into it is answered with a reset). Everything is bounded in time.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.binding_clients import is_async
from support.rawserver import Conn, Handler, RawServer

IDLE_TIMEOUT = 0.3  # the server closes a connection idle for this long
PAUSE = 0.7  # the clients wait this long between rounds: the idle connection is closed by then
LATE_WINDOW = 1.0  # with close="fin": how long the server listens for requests after its FIN
METHODS = ("GET", "POST", "PUT", "PATCH")
#: the clients' timeout; each runs with the GIL released (the default): with it held, a client would block this
#: in-process server's thread (release_gil=False runs the very same code)
T = 5.0


class IdleClosingServer:
    """Keep-alive HTTP/1.1 server on 127.0.0.1 that closes connections idle for IDLE_TIMEOUT."""

    def __init__(self, close: str):
        assert close in ("fin", "full")
        self.close_mode = close
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/idle"
        self.lock = threading.Lock()
        self.answered: list[str] = []
        self.late: list[str] = []
        self.connections = 0
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.acceptor = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> IdleClosingServer:
        self.acceptor.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.acceptor.join(5)
        for t in self.threads:
            t.join(IDLE_TIMEOUT + LATE_WINDOW + 5)
        self.sock.close()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self.lock:
                self.connections += 1
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(t)
            t.start()

    @staticmethod
    def _read_request(conn: socket.socket, buf: bytearray) -> tuple[str, bytes] | None:
        """One request (head and Content-Length body) from `conn`; None on EOF or timeout."""
        while b"\r\n\r\n" not in buf:
            try:
                chunk = conn.recv(65536)
            except (TimeoutError, OSError):
                return None
            if not chunk:
                return None
            buf += chunk
        end = buf.index(b"\r\n\r\n") + 4
        head = bytes(buf[:end]).decode("latin-1")
        del buf[:end]
        length = 0
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        conn.settimeout(T)  # the body follows the head at once
        while len(buf) < length:
            try:
                chunk = conn.recv(65536)
            except (TimeoutError, OSError):
                return None
            if not chunk:
                return None
            buf += chunk
        body = bytes(buf[:length])
        del buf[:length]
        return head.split(" ", 1)[0], body

    def _serve(self, conn: socket.socket) -> None:
        buf = bytearray()
        with conn:
            while True:
                conn.settimeout(IDLE_TIMEOUT)  # idle between requests for this long: close
                req = self._read_request(conn, buf)
                if req is None:
                    break
                line = f"{req[0]} {req[1].decode()}"
                with self.lock:
                    self.answered.append(line)
                payload = line.encode()
                head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(payload)}\r\ncontent-type: text/plain\r\n\r\n"
                try:
                    conn.sendall(head.encode() + payload)
                except OSError:
                    break
            if self.close_mode == "full":
                return
            try:
                conn.shutdown(socket.SHUT_WR)  # FIN: the client's next read on this connection is EOF
            except OSError:
                return
            deadline = time.monotonic() + LATE_WINDOW
            while (left := deadline - time.monotonic()) > 0:
                conn.settimeout(left)
                req = self._read_request(conn, buf)
                if req is None:
                    break
                with self.lock:
                    self.late.append(f"{req[0]} {req[1].decode()}")


def _plan() -> list[list[tuple[str, bytes, bytes]]]:
    """Rounds of (method, body, the response body expected): each method twice (on a new connection,
    then on the kept-alive one); the clients pause longer than the server's idle timeout after each."""
    rounds = []
    for method in METHODS:
        requests = []
        for attempt in range(2):
            body = f"{method.lower()}-{attempt}-{'x' * 100}"
            requests.append((method, body.encode(), f"{method} {body}".encode()))
        rounds.append(requests)
    return rounds


def _check(server: IdleClosingServer) -> None:
    with server.lock:
        answered, late, connections = list(server.answered), list(server.late), server.connections
    expected = [want.decode() for requests in _plan() for _, _, want in requests]
    assert answered == expected, "every request reached the server exactly once"
    assert late == [], "requests were sent on connections the server had already closed"
    assert connections >= len(METHODS), "each round needs a new connection"


CLOSE_MODES = ["fin", "full"]


@pytest.mark.parametrize("close", CLOSE_MODES)
def test_requests_after_the_server_closed_the_idle_connection(client: Any, close: str) -> None:
    with IdleClosingServer(close) as server:
        for requests in _plan():
            for method, body, want in requests:
                resp = client.request(method, server.url, body=body)
                assert (resp.status, resp.body) == (200, want), method
            time.sleep(PAUSE)
    _check(server)


def test_get_after_the_server_closed_the_idle_connection(client: Any) -> None:
    """get() (the benchmark's call) on a connection the server closed: no request sent twice."""
    with IdleClosingServer("fin") as server:
        for _ in range(3):
            assert client.get(server.url) == 200
            if not is_async(client.kind):  # AsyncClient has no last_body_bytes
                assert client.last_body_bytes == len("GET ")
            time.sleep(PAUSE)
    assert server.answered == ["GET "] * 3
    assert server.late == []
    assert server.connections == 3


@pytest.mark.parametrize("method", METHODS)
def test_a_request_the_server_closed_on_is_sent_again_only_when_idempotent(
    client: Any, raw_server: Callable[[Handler], RawServer], method: str
) -> None:
    """One retry rule in every client (docs/binding-api.md, "Connections"): the server reads the next request
    on a kept-alive connection and closes it unanswered (its idle timeout and the request crossed). GET and PUT
    are sent again, once, on a new connection; POST and PATCH, which may have reached the server, are not: a
    ConnectionError, and the server saw them once."""

    def first_answered(conn: Conn) -> None:
        if conn.read_request(timeout=5) is not None:
            conn.respond()
            conn.read_request(timeout=5)  # the next one goes unanswered: the handler's end closes

    srv = raw_server(first_answered)
    url = srv.url + "/"
    assert client.request("GET", url).status == 200  # a kept-alive connection (request()'s pool: reqwest has two)
    body = None if method == "GET" else b"body"
    if method in ("GET", "PUT"):
        assert client.request(method, url, body=body).status == 200
        sent, connections = 2, 2
    else:
        with pytest.raises(ConnectionError):
            client.request(method, url, body=body)
        sent, connections = 1, 1
    assert sum(h.startswith(method.encode() + b" ") for h in srv.heads) == sent + (method == "GET")
    assert srv.accepted == connections
