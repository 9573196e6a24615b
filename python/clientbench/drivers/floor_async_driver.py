"""The asyncio floor (`py-floor-async`; `py-floor-uvloop` runs it with `--loop uvloop`): no client library at all,
only the Python harness, an event loop and a socket. Each worker keeps one connection, an asyncio BufferedProtocol
on the loop's own transport (`loop.create_connection`); its request's bytes are built once per URL and written with
one `transport.write`. The transport receives into a buffer the connection keeps between requests (`recv_into`:
no bytes object per read, and no 256 KiB allocation, which glibc may serve with mmap/munmap, depending on what the
process freed before), and `buffer_updated` frames the response there (the head found and read with a few bytes
operations: the status, Content-Length, Connection); the request's coroutine awaits one future, resolved once the
whole response is in. A chunked or otherwise framed answer is a
ProtocolError, as py-floor treats it. What this row costs per request is what an event loop, the interpreter and
the shared timing loop cost before any client runs: every async Python row's overhead is measured against it
(`xfloor`, `clientbench cost`), as the threaded rows' against py-floor. The same rules as py-floor
(floor_driver.py): the whole body read, a failure raised as what it is (a reset or a close mid-response a
ConnectionResetError, a malformed answer a ProtocolError), a connection closed after an HTTP/1.0 answer that does
not say keep-alive, TLS with the standard library's `ssl` (the loop's TLS transport) over https.

No timer per request: `--timeout` bounds each wait for progress, as py-floor's socket timeout bounds each
`recv`/`send`. A connection's watchdog (`loop.call_later`, every `timeout` seconds while the connection is open)
fails the request that has had no bytes in or out since its previous round, so a silent server fails it within
one to two timeouts; the harness counts a request that took longer than `--timeout` as a TimeoutError anyway.

Streamed bodies: an upload from an async iterator is sent with `Transfer-Encoding: chunked`, each chunk framed as
it comes (one `writelines` of its size line, the chunk and its CRLF; the transport's flow control waited for); a
streamed download is read in pieces of at most the chunk size, each a copy of the buffer's bytes."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .. import sdk
from .floor_driver import MAX_HEAD, ProtocolError, request_head, tls_context

# what a Protocol's waiter waits for
RESPONSE, HEAD, BYTES = range(3)
#: a connection's receive buffer to begin with (doubled for a response that does not fit)
BUFFER = 256 * 1024


def frame(head: bytearray) -> tuple[int, int, bool]:
    """(status, Content-Length, whether the server closes after it) of a response head (up to its blank line)."""
    low = head.lower()
    if not low.startswith(b"http/1.") or low[8:9] != b" " or not low[9:12].isdigit():
        line = bytes(head[:80]).split(b"\r\n", 1)[0].decode("latin-1")
        raise ProtocolError(f"a malformed status line {line!r}")
    if b"\r\ntransfer-encoding:" in low:
        raise ProtocolError("a body framed by Transfer-Encoding: the floor reads Content-Length only")
    at = low.find(b"\r\ncontent-length:")
    if at < 0:
        raise ProtocolError("a response without Content-Length")
    end = low.find(b"\r\n", at + 17)
    length = int(low[at + 17 : end if end >= 0 else len(low)])
    # an HTTP/1.0 server closes the connection after its answer unless it says keep-alive (RFC 9112, 9.3)
    closes = low.startswith(b"http/1.0")
    at = low.find(b"\r\nconnection:")
    if at >= 0:
        end = low.find(b"\r\n", at + 13)
        options = low[at + 13 : end if end >= 0 else len(low)]
        closes = b"close" in options or (closes and b"keep-alive" not in options)
    return int(low[9:12]), length, closes


class _Conn(asyncio.BufferedProtocol):
    """One connection: a buffer the transport receives into (`recv_into`, no bytes object per read), and the future
    of the request that waits for what it holds. buf[begin:have] is what is not consumed yet; a response's body,
    once its head is read, is buf[start:end]."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray(BUFFER)
        self.view = memoryview(self.buf)  # never resized (a larger buffer replaces it): the transport may hold a view
        self.begin = 0
        self.have = 0
        self.waiter: asyncio.Future[None] | None = None
        self.mode = RESPONSE
        self.want = 0  # BYTES: the waiter is woken once buf[begin:have] holds this many
        # the response's head, once read: its status, where its body starts and ends in buf, whether it closes
        self.status = 0
        self.start = 0
        self.end = -1
        self.closes = False
        self.writable: asyncio.Future[None] | None = None  # set while the transport's write buffer is full
        self.lost: BaseException | None = None  # why the connection ended
        self.progress = 0  # counts the bytes' arrivals and the writes' resumptions (the watchdog's measure)
        self.stamp = False  # --phases: note when the first bytes of a response arrive
        self.first = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a stream transport

    def get_buffer(self, sizehint: int) -> memoryview:
        if self.have == len(self.buf):
            self._room()
        return self.view[self.have :]

    def _room(self) -> None:
        """Room at the end of buf: what is consumed dropped from its front, or a buffer twice as large."""
        shift = self.begin
        if shift:
            n = self.have - shift
            self.buf[:n] = self.view[shift : self.have]  # (as long as it was: no resize)
            self.begin, self.have = 0, n
            self.start -= shift
            if self.end >= 0:
                self.end -= shift
        if self.have == len(self.buf):
            grown = bytearray(2 * len(self.buf))
            grown[: self.have] = self.view[: self.have]
            self.buf, self.view = grown, memoryview(grown)

    def buffer_updated(self, nbytes: int) -> None:
        self.have += nbytes
        self.progress += 1
        if self.stamp and not self.first:
            self.first = time.perf_counter_ns()
        if self.waiter is not None:
            self._check()

    def _check(self) -> None:
        if self.mode == BYTES:
            if self.have - self.begin < self.want:
                return
        elif self.end < 0:
            at = self.buf.find(b"\r\n\r\n", self.begin, self.have)
            if at < 0:
                if self.have - self.begin > MAX_HEAD:
                    self.fail(ProtocolError(f"a response head longer than {MAX_HEAD} bytes"))
                return
            try:
                self.status, length, self.closes = frame(self.buf[self.begin : at])
            except (ProtocolError, ValueError) as exc:
                self.fail(exc)
                return
            self.start = at + 4
            self.end = self.start + length
            if self.mode == RESPONSE and self.have < self.end:
                return
        elif self.have < self.end:
            return
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def expect(self, mode: int, want: int = 0) -> asyncio.Future[None]:
        """A future done once buf holds the whole response (RESPONSE), its head (HEAD) or `want` more bytes
        (BYTES), raising why if the connection ends first."""
        waiter = self.loop.create_future()
        if self.lost is not None:
            waiter.set_exception(self.lost)
            return waiter
        self.mode, self.want, self.waiter = mode, want, waiter
        if mode != BYTES:
            self.end = -1
        if self.have > self.begin:
            self._check()  # what came before it was asked for (a pipelining server's; none from ours)
        return waiter

    def consumed(self) -> None:
        """The response is read: its bytes are dropped (a pipelining server's next ones stay; none from ours)."""
        self.begin = self.end
        self.end = -1
        if self.begin == self.have:
            self.begin = self.have = 0

    def eof_received(self) -> bool:
        return False  # the transport closes; connection_lost says why the response ended

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(exc or ConnectionResetError("the server closed the connection before the whole response"))

    def fail(self, exc: BaseException) -> None:
        """End the connection's waits with `exc` (the later ones raise it at once)."""
        if self.lost is None:
            self.lost = exc
        for waiter in (self.waiter, self.writable):
            if waiter is not None and not waiter.done():
                waiter.set_exception(self.lost)
        self.waiter = self.writable = None

    def pause_writing(self) -> None:
        if self.writable is None:
            self.writable = self.loop.create_future()

    def resume_writing(self) -> None:
        self.progress += 1
        writable, self.writable = self.writable, None
        if writable is not None and not writable.done():
            writable.set_result(None)


@dataclass
class AsyncFloor:
    host: str
    port: int
    tls: ssl.SSLContext | None
    timeout: float
    conn: _Conn | None = None
    watchdog: asyncio.TimerHandle | None = None
    seen: int = -1  # the connection's progress at the watchdog's last round
    gets: dict[str, bytes] = field(default_factory=dict)  # URL -> its GET's bytes, built once
    requests: dict[tuple[str, str, int, bool], bytes] = field(default_factory=dict)  # the others' heads

    def request_bytes(self, url: str, method: str = "GET", body: bytes = b"", chunked: bool = False) -> bytes:
        key = (method, url, len(body), chunked)
        head = self.requests.get(key)
        if head is None:
            head = self.requests[key] = request_head(url, method, len(body), chunked)
        return head

    async def connect(self) -> _Conn:
        conn = self.conn
        if conn is not None and conn.lost is None:
            return conn
        self.close()
        loop = asyncio.get_running_loop()
        hostname = self.host if self.tls is not None else None
        opening = loop.create_connection(
            lambda: _Conn(loop), self.host, self.port, ssl=self.tls, server_hostname=hostname
        )
        _, opened = await asyncio.wait_for(opening, self.timeout)
        self.conn, self.seen = opened, -1
        self.watchdog = loop.call_later(self.timeout, self._watch)
        return opened

    def _watch(self) -> None:
        """Fail the request that made no progress since the last round; come back in `timeout` seconds."""
        conn = self.conn
        if conn is None:
            return
        waiting = conn.waiter is not None or conn.writable is not None
        if waiting and conn.progress == self.seen:
            conn.fail(TimeoutError(f"no bytes in or out for {self.timeout:g} s"))
            return
        self.seen = conn.progress if waiting else -1
        self.watchdog = conn.loop.call_later(self.timeout, self._watch)

    def close(self) -> None:
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        conn, self.conn = self.conn, None
        if conn is not None and conn.transport is not None:
            conn.transport.close()

    async def exchange(self, head: bytes, body: bytes) -> _Conn:
        """Send one request and read its response: the connection, whose buffer holds it (status, start, end);
        the caller takes the body and calls consumed()."""
        conn = self.conn
        if conn is None or conn.lost is not None:
            conn = await self.connect()
        try:
            transport = conn.transport
            assert transport is not None
            if body:
                transport.writelines((head, body))
            else:
                transport.write(head)
            await conn.expect(RESPONSE)
        except BaseException:
            self.close()  # a connection in an unknown state (or a cancelled request's) is not reused
            raise
        if conn.closes:
            self.close()
        return conn

    @contextlib.asynccontextmanager
    async def stream(
        self, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
    ) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
        """The streamed form: `content` whole (Content-Length) or chunk by chunk (chunked), the body read whole
        (chunk None) or in pieces of at most `chunk` bytes."""
        conn = await self.connect()
        try:
            transport = conn.transport
            assert transport is not None
            if content is None or isinstance(content, bytes):
                body = content or b""
                transport.writelines((self.request_bytes(url, method, body), body))
            else:
                transport.write(self.request_bytes(url, method, chunked=True))
                async for piece in content:
                    if piece:  # (an empty chunk would end the body)
                        transport.writelines((b"%x\r\n" % len(piece), piece, b"\r\n"))
                        if conn.writable is not None:
                            await conn.writable
                transport.write(b"0\r\n\r\n")
            await conn.expect(RESPONSE if chunk is None else HEAD)
            if chunk is None:
                whole = bytes(conn.view[conn.start : conn.end])
                conn.consumed()
                if conn.closes:
                    self.close()
                yield conn.status, _one(whole)
                return
            pieces = _Pieces(conn, chunk)
            yield conn.status, pieces
            if pieces.left or conn.closes:  # a body not read to its end leaves the connection in its middle
                self.close()
        except BaseException:
            self.close()
            raise


async def _one(body: bytes) -> AsyncIterator[bytes]:
    yield body


class _Pieces:
    """A streamed download's body, in pieces of at most `chunk` bytes as they arrive."""

    def __init__(self, conn: _Conn, chunk: int) -> None:
        self.conn, self.chunk = conn, chunk
        self.left = conn.end - conn.start
        conn.begin, conn.end = conn.start, -1  # the head is read: the pieces are taken from buf[begin:have]

    def __aiter__(self) -> _Pieces:
        return self

    async def __anext__(self) -> bytes:
        if not self.left:
            raise StopAsyncIteration
        conn = self.conn
        if conn.begin == conn.have:
            conn.begin = conn.have = 0
            await conn.expect(BYTES, 1)
        n = min(self.chunk, conn.have - conn.begin, self.left)
        piece = bytes(conn.view[conn.begin : conn.begin + n])
        conn.begin += n
        self.left -= n
        if conn.begin == conn.have:
            conn.begin = conn.have = 0
        return piece


def make_client(opts: sdk.Options) -> AsyncFloor:
    u = urlsplit(opts.url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError(f"unsupported URL {opts.url!r}")
    tls = tls_context(opts.ca_file, bool(opts.insecure)) if u.scheme == "https" else None
    port = u.port or (443 if u.scheme == "https" else 80)
    return AsyncFloor(u.hostname, port, tls, float(opts.timeout))


async def request(floor: AsyncFloor, url: str) -> tuple[int, int]:
    """One GET: AsyncFloor.exchange() written out, the one coroutine between the harness and the future."""
    if sdk.recording():
        return await request_phased(floor, url)
    head = floor.gets.get(url)
    if head is None:
        head = floor.gets[url] = request_head(url)
    conn = floor.conn
    if conn is None or conn.lost is not None:
        conn = await floor.connect()
    try:
        conn.transport.write(head)  # type: ignore[union-attr]  # set when connected
        await conn.expect(RESPONSE)
    except BaseException:
        floor.close()
        raise
    length = conn.end - conn.start
    conn.consumed()
    if conn.closes:
        floor.close()
    return conn.status, length


async def request_phased(floor: AsyncFloor, url: str) -> tuple[int, int]:
    """request(), timing its phases (--phases): connect+tls (the loop's create_connection makes both), send (the
    request handed to the transport, which writes it to the socket at once when it has room), wait (until the
    protocol is given the first bytes of the response), receive (the rest)."""
    perf = time.perf_counter_ns
    head = floor.gets.get(url)
    if head is None:
        head = floor.gets[url] = request_head(url)
    conn = floor.conn
    if conn is None or conn.lost is not None:
        start = perf()
        conn = await floor.connect()
        sdk.phase("connect+tls", perf() - start)
    conn.stamp, conn.first = True, 0
    try:
        start = perf()
        conn.transport.write(head)  # type: ignore[union-attr]  # set when connected
        sent = perf()
        await conn.expect(RESPONSE)
    except BaseException:
        floor.close()
        raise
    end = perf()
    first = conn.first or end
    conn.stamp = False
    sdk.phase("send", sent - start)
    sdk.phase("wait", first - sent)
    sdk.phase("receive", end - first)
    length = conn.end - conn.start
    conn.consumed()
    if conn.closes:
        floor.close()
    return conn.status, length


async def upload(floor: AsyncFloor, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    conn = await floor.exchange(floor.request_bytes(url, method, body), body)
    answer = bytes(conn.view[conn.start : conn.end])
    conn.consumed()
    return conn.status, answer


# HTTP/1.1 only; one connection of its own per worker (no pool to share)
ASYNC = sdk.AsyncClient(
    "raw socket",
    make_client,
    request,
    upload,
    AsyncFloor.close,
    version="-",
    shareable=False,
    stream=AsyncFloor.stream,
    phases=("connect+tls", "send", "wait", "receive"),
)
