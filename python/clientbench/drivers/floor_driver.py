"""The Python floor (`py-floor`): no client library at all, only the Python harness and a socket. Each worker keeps
one connection; its request's bytes are built once per URL; a response is read with `recv_into` into a buffer kept
between requests and framed by its Content-Length (a chunked or otherwise framed answer is a ProtocolError, as
the C++ floor treats it). What this row costs per request is what the interpreter and the shared timing loop cost
before any client runs: every Python row's overhead is measured against it, as the native rows' against
cpp-floor.

Streamed bodies: an upload from an iterator is sent with `Transfer-Encoding: chunked`, each chunk framed as it
comes (one `sendmsg` of its size line, the chunk and its CRLF); a streamed download is read by `recv_into` a
C-byte buffer kept between requests, each piece a view of it (valid until the next piece)."""

from __future__ import annotations

import contextlib
import functools
import socket
import ssl
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .. import sdk
from .streaming import whole

#: the largest response head the floor reads (a longer one is a ProtocolError)
MAX_HEAD = 64 * 1024


class ProtocolError(OSError):
    """An answer the floor cannot frame: no Content-Length, a malformed status line, a head too long."""


@dataclass
class Floor:
    host: str
    port: int
    tls: ssl.SSLContext | None
    timeout: float
    sock: socket.socket | None = None
    buf: bytearray = field(default_factory=lambda: bytearray(256 * 1024))
    have: int = 0  # bytes of buf already received beyond the last response (a keep-alive peer sends none)
    requests: dict[str, bytes] = field(default_factory=dict)  # URL -> the request's bytes, built once
    piece: bytearray = field(default_factory=bytearray)  # a streamed download's C-byte buffer
    unread: int = 0  # the bytes of a streamed download's body not read yet

    def connect(self) -> socket.socket:
        if self.sock is None:
            raw = socket.create_connection((self.host, self.port), timeout=self.timeout)
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sock = self.tls.wrap_socket(raw, server_hostname=self.host) if self.tls is not None else raw
            self.have = 0
        return self.sock

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def request_bytes(self, url: str, method: str = "GET", body: bytes = b"", chunked: bool = False) -> bytes:
        key = f"{method} {url} {'chunked' if chunked else len(body)}"
        head = self.requests.get(key)
        if head is None:
            head = self.requests[key] = request_head(url, method, len(body), chunked)
        return head

    def exchange(self, head: bytes, body: bytes, keep: bool) -> tuple[int, memoryview]:
        """Send one request, read its response; (status, the body: a view of the buffer, valid until the next)."""
        sock = self.connect()
        try:
            _send(sock, [head, body] if body else [head])
            return self._response(sock, keep)
        except BaseException:
            self.close()  # a connection in an unknown state is not reused
            raise

    def exchange_phased(self, head: bytes) -> tuple[int, memoryview]:
        """exchange() of a GET, timing its phases (--phases): connect and TLS when it opens the connection, send
        (the request handed to the kernel), wait (until the first recv returns), receive (the rest)."""
        perf = time.perf_counter_ns
        try:
            if self.sock is None:
                start = perf()
                raw = socket.create_connection((self.host, self.port), timeout=self.timeout)
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                connected = perf()
                sdk.phase("connect", connected - start)
                self.sock, self.have = raw, 0
                if self.tls is not None:  # wrap_socket does the handshake
                    self.sock = self.tls.wrap_socket(raw, server_hostname=self.host)
                    sdk.phase("tls", perf() - connected)
            sock = self.sock
            start = perf()
            _send(sock, [head])
            sent = perf()
            sdk.phase("send", sent - start)
            if not self.have:
                self.have = self._recv(sock, 0)
            first = perf()
            sdk.phase("wait", first - sent)
            status, body = self._response(sock, keep=True)
            sdk.phase("receive", perf() - first)
            return status, body
        except BaseException:
            self.close()
            raise

    @contextlib.contextmanager
    def stream(
        self, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
    ) -> Iterator[tuple[int, Iterable[bytes]]]:
        """The streamed form: `content` whole (Content-Length) or chunk by chunk (chunked), the body read whole
        (chunk None) or in pieces of at most `chunk` bytes."""
        sock = self.connect()
        try:
            if content is None or isinstance(content, bytes):
                body = content or b""
                head = self.request_bytes(url, method, body)
                _send(sock, [head, body] if body else [head])
            else:
                parts = [self.request_bytes(url, method, chunked=True)]
                for piece in content:
                    if piece:  # (an empty chunk would end the body)
                        parts += (b"%x\r\n" % len(piece), piece, b"\r\n")
                        _send(sock, parts)
                        parts = []
                _send(sock, [*parts, b"0\r\n\r\n"])
            if chunk is None:
                status, body_view = self._response(sock, keep=True)
                yield status, whole(bytes(body_view))
                return
            status, length, closes, start, end = self._head(sock)
            self.unread = length
            yield status, self._pieces(sock, start, end, length, chunk)  # type: ignore[misc]  # views as bytes
            if self.unread or closes:  # a body not read to its end leaves the connection in its middle
                self.close()
        except BaseException:
            self.close()
            raise

    def _pieces(self, sock: socket.socket, start: int, end: int, length: int, chunk: int) -> Iterator[memoryview]:
        """The body in pieces of at most `chunk` bytes: first what the head's reads brought, then recv_into the
        C-byte buffer (never past the body's end)."""
        left = length
        have = min(end - start, length)
        for at in range(start, start + have, chunk):
            piece = memoryview(self.buf)[at : min(at + chunk, start + have)]
            left = self.unread = left - len(piece)
            yield piece  # a view: the harness compares and measures it, and drops it before the next
        rest = end - (start + have)
        if rest:  # a pipelining server's next bytes: keep them at the front (none from ours)
            self.buf[:rest] = self.buf[start + have : end]
        self.have = rest
        if len(self.piece) != chunk:
            self.piece = bytearray(chunk)
        view = memoryview(self.piece)
        while left:
            n = sock.recv_into(view, min(chunk, left))
            if n == 0:
                raise ConnectionResetError("the server closed the connection before the whole response")
            left = self.unread = left - n
            yield view[:n]

    def _recv(self, sock: socket.socket, at: int) -> int:
        if at >= len(self.buf):
            self.buf.extend(bytes(len(self.buf)))  # a body larger than the buffer: grow it, once per size
        n = sock.recv_into(memoryview(self.buf)[at:])
        if n == 0:
            raise ConnectionResetError("the server closed the connection before the whole response")
        return at + n

    def _head(self, sock: socket.socket) -> tuple[int, int, bool, int, int]:
        """Read a response's head: (status, Content-Length, whether the server closes, where the body starts in
        buf, how far buf is filled)."""
        end = self.have
        while (head_end := self.buf.find(b"\r\n\r\n", 0, end)) < 0:
            if end > MAX_HEAD:
                raise ProtocolError(f"a response head longer than {MAX_HEAD} bytes")
            end = self._recv(sock, end)
        status, length, closes = parse_head(bytes(self.buf[:head_end]))
        return status, length, closes, head_end + 4, end

    def _response(self, sock: socket.socket, keep: bool) -> tuple[int, memoryview]:
        status, length, closes, body_start, end = self._head(sock)
        while end < body_start + length:
            end = self._recv(sock, end)
        body = memoryview(self.buf)[body_start : body_start + length]
        rest = end - (body_start + length)
        if rest:  # a pipelining server's next bytes: keep them at the front (none from ours)
            self.buf[:rest] = self.buf[body_start + length : end]
        self.have = rest
        if closes or not keep:
            self.close()
        return status, body


def request_head(url: str, method: str = "GET", length: int = 0, chunked: bool = False) -> bytes:
    """A request's head: `method` to the URL's target, its Host, the body's framing (none for a GET)."""
    u = urlsplit(url)
    target = (u.path or "/") + (f"?{u.query}" if u.query else "")
    framing = f"Content-Length: {length}\r\n" if method != "GET" else ""
    if chunked:
        framing = "Transfer-Encoding: chunked\r\n"
    return f"{method} {target} HTTP/1.1\r\nHost: {u.netloc}\r\n{framing}\r\n".encode("latin-1")


def parse_head(head: bytes) -> tuple[int, int, bool]:
    """A response head (without its blank line): (status, Content-Length, whether the server closes after it)."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError(f"a malformed status line {lines[0][:80]!r}")
    # an HTTP/1.0 server closes the connection after its answer unless it says keep-alive (RFC 9112, 9.3)
    length, closes = None, parts[0] == "HTTP/1.0"
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "transfer-encoding":
            raise ProtocolError("a body framed by Transfer-Encoding: the floor reads Content-Length only")
        elif name == "connection":
            options = {option.strip().lower() for option in value.split(",")}
            closes = "close" in options or (closes and "keep-alive" not in options)
    if length is None:
        raise ProtocolError("a response without Content-Length")
    return int(parts[1]), length, closes


def _send(sock: socket.socket, parts: list[bytes]) -> None:
    """Send these bytes, one system call where it can (no copy of a body)."""
    if len(parts) == 1:
        sock.sendall(parts[0])
    elif isinstance(sock, ssl.SSLSocket):  # TLS has no scatter/gather send
        sock.sendall(b"".join(parts))
    else:
        sent = sock.sendmsg(parts)
        if sent < sum(len(p) for p in parts):
            sock.sendall(b"".join(parts)[sent:])


@functools.cache
def tls_context(ca_file: str | None, insecure: bool) -> ssl.SSLContext:
    """One context per process (loading the roots costs ~50 ms), offering HTTP/1.1 only."""
    ctx = ssl.create_default_context(cafile=ca_file)
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def make_client(opts: sdk.Options) -> Floor:
    u = urlsplit(opts.url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError(f"unsupported URL {opts.url!r}")
    tls = tls_context(opts.ca_file, bool(opts.insecure)) if u.scheme == "https" else None
    port = u.port or (443 if u.scheme == "https" else 80)
    return Floor(u.hostname, port, tls, float(opts.timeout))


def request(floor: Floor, url: str) -> tuple[int, int]:
    if sdk.recording():
        status, body = floor.exchange_phased(floor.request_bytes(url))
    else:
        status, body = floor.exchange(floor.request_bytes(url), b"", keep=True)
    return status, len(body)


def upload(floor: Floor, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    status, answer = floor.exchange(floor.request_bytes(url, method, body), body, keep=True)
    return status, bytes(answer)


# HTTP/1.1 only; one connection of its own per worker (no pool to share)
SYNC = sdk.SyncClient(
    "raw socket",
    make_client,
    request,
    upload,
    Floor.close,
    version="-",
    shareable=False,
    stream=Floor.stream,
    phases=("connect", "tls", "send", "wait", "receive"),
)
