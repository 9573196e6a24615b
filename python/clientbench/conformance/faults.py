"""A small raw-socket HTTP/1.1 server for the faults the axum server does not make on purpose, for
`clientbench check-driver`: a body cut short by a reset, and a body cut short by a clean close.

    with FaultServer() as f:
        f.url + "/reset"      # 200, Content-Length 100000, 1,000 bytes, then a TCP reset (RST)
        f.url + "/truncated"  # 200, Content-Length 100, 10 bytes, then the connection closed (FIN)

Any other path gets 404. Every connection has its own thread; every blocking call is bounded, and close()
(or the end of the `with` block) shuts every connection down and joins the threads.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from urllib.parse import urlsplit

#: what /reset announces and what it sends of it before the reset
RESET_LENGTH, RESET_SENT = 100_000, 1_000
#: what /truncated announces and what it sends of it before the close
TRUNCATED_LENGTH, TRUNCATED_SENT = 100, 10


class FaultServer:
    def __init__(self) -> None:
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.accepted = 0
        self.closed = False
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._serve, daemon=True)
        self._acceptor.start()

    def __enter__(self) -> FaultServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _serve(self) -> None:
        while not self.closed:
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self.accepted += 1
                self._conns.append(sock)
                t = threading.Thread(target=self._handle, args=(sock,), daemon=True)
                self._threads.append(t)
            t.start()

    def _handle(self, sock: socket.socket) -> None:
        try:
            path = _read_path(sock)
            if path is None:
                return
            body = b"x" * RESET_LENGTH
            if path == "/reset":
                sock.sendall(_head(RESET_LENGTH) + body[:RESET_SENT])
                time.sleep(0.05)  # the head and part of the body arrive first: the reset comes mid-body
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif path == "/truncated":
                sock.sendall(_head(TRUNCATED_LENGTH) + body[:TRUNCATED_SENT])
                time.sleep(0.05)
                sock.shutdown(socket.SHUT_WR)
            else:
                sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except OSError:
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def close(self) -> None:
        self.closed = True
        self._acceptor.join(timeout=2)
        self.listener.close()
        with self._lock:
            conns, threads = list(self._conns), list(self._threads)
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in threads:
            t.join(timeout=2)


def _head(length: int) -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\nContent-Type: application/octet-stream\r\n\r\n".encode()


def _read_path(sock: socket.socket, timeout: float = 10.0) -> str | None:
    """The path of the first request on the connection (None: closed, or no whole head within `timeout`)."""
    sock.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk or len(buf) > 65536:
            return None
        buf += chunk
    parts = buf.split(b"\r\n", 1)[0].split(b" ")
    if len(parts) != 3:
        return None
    return urlsplit(parts[1].decode("latin-1")).path  # origin-form or absolute-form (urllib3 sends that)
