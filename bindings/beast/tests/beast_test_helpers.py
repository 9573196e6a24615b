"""A tiny raw-socket HTTP server for the beast_client tests (canned answers, one thread per connection)."""

from __future__ import annotations

import socket
import threading
from typing import Callable


def read_request(conn: socket.socket) -> bytes:
    """Reads one request head (and a Content-Length body); b'' on EOF."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head + b"\r\n\r\n" + rest


class RawServer:
    """Accepts on 127.0.0.1:0 and runs `handler(conn)` for each connection on its own thread."""

    def __init__(self, handler: Callable[[socket.socket], None]):
        self.handler = handler
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.accepts = 0
        self.conns: list[socket.socket] = []
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self._acceptor.start()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:  # includes socket.timeout
                continue
            conn.settimeout(10)  # handlers never block a test for long
            self.accepts += 1
            self.conns.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            self.handler(conn)
        except OSError:
            pass

    def close(self) -> None:
        self._stop.set()
        self._acceptor.join()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in self._threads:
            t.join(timeout=5)
        for c in self.conns:
            c.close()
        self.sock.close()
