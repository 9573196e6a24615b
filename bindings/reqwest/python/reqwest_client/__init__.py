"""reqwest_client: the clientbench reqwest (Rust) HTTP/1.1, HTTP/2 and HTTP/3 client for Python.

    import reqwest_client

    with reqwest_client.Client(timeout=10.0) as client:
        r = client.request("GET", "https://example.org/search", params={"q": "caf\u00e9 au lait"})
        r.status, r.url, r.headers.get_all("set-cookie"), r.text()
        r = client.request("POST", "http://127.0.0.1:8080/anything", json={"a": 1})
        r.json()
        with client.stream("GET", "http://127.0.0.1:8080/bytes/1000000") as s:
            for chunk in s.iter_bytes():  # the GIL is released while each chunk is awaited
                ...
        status = client.get("http://127.0.0.1:8080/")  # the lean benchmark path: whole body read, not kept

`Client` is synchronous and releases the GIL while it waits for the network (`release_gil=False` keeps
it, to demonstrate the difference); `AsyncClient` has coroutine methods for asyncio. Both keep one
keep-alive connection pool per client, which threads or tasks may share, and speak HTTP/1.1 over ``http://``
and ``https://`` (rustls); ``http2="alpn"`` offers HTTP/2 over TLS, ``http2="prior_knowledge"`` speaks only
HTTP/2 (h2c over ``http://``), ``http3=True`` speaks only HTTP/3, over QUIC (UDP, to the URL's port), with
prior knowledge: ``https://`` URLs only (an ``http://`` one -> ValueError, a redirect to one -> ProtocolError),
never with http2 (ValueError); ``Response.http_version`` says which one answered.
`request`/`stream` follow redirects, decompress gzip/deflate/br/zstd, send default headers and a
User-Agent; `get`/`fetch_len`/`fetch` are the benchmark's lean path: a plain request, none of that.

``verify`` (both clients), as requests' ``verify=``: True checks ``https://`` servers against the system's
roots, a path (str or os.PathLike) against only the CA certificates in that PEM file, False not at all
(unsafe). The file is read when the client is made: FileNotFoundError (or another OSError) when it cannot
be read, ValueError when it holds no usable certificate.

Errors: bad URL/method/header/argument value -> ValueError; argument of the wrong type -> TypeError;
timeout -> TimeoutError; untrusted/expired/wrong-name certificate, failed handshake -> TLSError (a
ConnectionError); refused/reset/closed -> ConnectionError (ConnectionRefusedError / ConnectionResetError
where clear); malformed HTTP, an undecodable compressed body or a redirect that cannot be followed (a Location that does
not parse or is not http(s)://) -> ProtocolError (an OSError); a body over max_body_size -> BodyTooLarge (a
ProtocolError); too many redirects -> TooManyRedirects (an OSError); a closed client -> RuntimeError.
Non-2xx statuses are returned, never raised. ``http2="prior_knowledge"`` against a server that does not speak
HTTP/2 -> ConnectionError (never retried as HTTP/1.1), its message saying that the server may not speak
HTTP/2; with ``max_connections``, a request that waits longer than ``connect_timeout`` for a free connection
-> TimeoutError naming max_connections. Over HTTP/3 QUIC's failures have the same classes: nothing answering on
the UDP port -> TimeoutError (no error reaches a UDP client; ``connect_timeout`` bounds TCP connects only, so
``timeout`` or ``read_timeout`` ends the wait), a refused certificate or failed handshake -> TLSError, a
connection or stream closed or reset -> ConnectionError, a broken HTTP/3 or QUIC rule (a body short of its
Content-Length included) -> ProtocolError.

``cookies=True`` gives a client a cookie jar (request/stream only); ``max_body_size`` bounds what
``request()`` keeps; ``max_connections`` bounds the connections (requests in flight) per origin. Both
clients are fork-safe: in a child made by ``fork()`` they open their own connections (and runtime) at their
first request there, never using the parent's.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Awaitable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from ._core import (
    BodyTooLarge,
    Client,
    Completer,
    Headers,
    ProtocolError,
    RawAsyncClient,
    RawStream,
    RawUpload,
    Response,
    StreamResponse,
    TLSError,
    TooManyRedirects,
    __version__,
    reqwest_version,
)

if TYPE_CHECKING:
    from typing_extensions import Buffer, Unpack

    from ._core import _AsyncBody, _ClientOptions, _HeadersArg, _Params

Mapping.register(Headers)

T = TypeVar("T")

__all__ = [
    "AsyncClient",
    "BodyTooLarge",
    "AsyncStreamResponse",
    "Client",
    "Headers",
    "ProtocolError",
    "Response",
    "StreamResponse",
    "TLSError",
    "TooManyRedirects",
    "__version__",
    "reqwest_version",
]


#: one Completer per event loop: its pipe is registered with loop.add_reader, and its drain() resolves
#: the loop's futures on the loop's own thread (no tokio thread ever touches Python)
_completers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Completer] = weakref.WeakKeyDictionary()


def _completer() -> Completer:
    loop = asyncio.get_running_loop()
    c = _completers.get(loop)
    if c is None:
        c = Completer()
        loop.add_reader(c.fileno(), c.drain)
        _completers[loop] = c
    return c


def _upload(body: Any) -> tuple[Any, Any]:
    """AsyncClient's body and what feeds it: a bytes-like object as it is (nothing feeds it); an iterable of chunks,
    an async iterable of chunks or a binary file: a `RawUpload` that `_feed` fills from it on the loop's thread (the
    requests run on tokio threads that never call Python)."""
    if body is None or isinstance(body, (bytes, bytearray, memoryview)):
        return body, None
    if isinstance(body, str):
        raise TypeError("body must be bytes-like, not str (encode it first)")
    try:
        memoryview(body)
    except TypeError:
        pass
    else:
        return body, None
    if hasattr(body, "read") or hasattr(body, "__aiter__"):
        return RawUpload(), body
    try:
        return RawUpload(), iter(body)
    except TypeError:
        raise TypeError(
            "body must be bytes-like, an iterable or async iterable of bytes-like chunks or a binary file, "
            f"not {type(body).__name__}"
        ) from None


async def _feed(upload: RawUpload, source: Any) -> None:
    """Send `source`'s chunks (a file read 64 KiB at a time, as `Client` reads one) into `upload` until it ends or the
    request stops reading; what the source raises fails the request, and is raised here."""
    completer = _completer()

    async def chunks() -> AsyncIterator[Any]:
        if hasattr(source, "__aiter__"):
            async for chunk in source:
                yield chunk
        elif hasattr(source, "read"):
            while chunk := source.read(65536):  # b"" at the end; None (a non-blocking file with nothing now) too
                yield chunk
        else:
            for chunk in source:
                yield chunk

    try:
        async for chunk in chunks():
            queued = upload.send(chunk, completer)
            if not (queued if isinstance(queued, bool) else await queued):
                return  # the request no longer reads its body
    except BaseException as exc:
        upload.fail(str(exc) or type(exc).__name__)
        raise
    upload.finish()


#: the feeders of streamed uploads still running (asyncio keeps only weak references to tasks)
_feeders: set[asyncio.Task[None]] = set()


def _start_feeding(upload: RawUpload, source: Any) -> asyncio.Task[None]:
    feeder = asyncio.ensure_future(_feed(upload, source))
    _feeders.add(feeder)
    feeder.add_done_callback(_fed)
    return feeder


def _fed(feeder: asyncio.Task[None]) -> None:
    _feeders.discard(feeder)
    if not feeder.cancelled():
        # retrieved: the request it failed raises it (`_sent`), or its error once the response has come
        feeder.exception()


async def _sent(pending: Awaitable[T], feeder: asyncio.Task[None] | None, *, stop: bool = True) -> T:
    """`pending`'s result; when it fails because the upload's source raised, the source's exception. `stop`: the
    feeder is cancelled once the result is in (a whole response: its body was sent), else it goes on (a streamed
    response, whose request body may still be on its way)."""
    if feeder is None:
        return await pending
    try:
        result = await pending
    except BaseException:
        raised = feeder.exception() if feeder.done() and not feeder.cancelled() else None
        if raised is not None:
            raise raised from None
        feeder.cancel()
        raise
    if stop:
        feeder.cancel()
    return result


class AsyncStreamResponse:
    """The response of `AsyncClient.stream`, an async context manager: ``async for chunk in
    r.aiter_bytes()`` reads the body as it arrives; leaving the block closes it."""

    def __init__(self, raw: RawStream) -> None:
        self._raw = raw
        self._closed = False

    @property
    def status(self) -> int:
        return self._raw.status

    @property
    def url(self) -> str:
        return self._raw.url

    @property
    def reason(self) -> str:
        return self._raw.reason

    @property
    def http_version(self) -> str:
        return self._raw.http_version

    @property
    def headers(self) -> Headers:
        return self._raw.headers

    @property
    def closed(self) -> bool:
        return self._closed

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's chunks as they arrive (decoded when the client decompresses)."""
        while not self._closed:
            chunk = await self._raw.next_chunk(_completer())
            if chunk is None:
                return
            yield chunk

    async def aread(self) -> bytes:
        """The rest of the body."""
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    async def aclose(self) -> None:
        """Stop reading (the rest of the body is dropped with its connection). Idempotent."""
        self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._raw.close()

    async def __aenter__(self) -> AsyncStreamResponse:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        self.close()
        return False

    def __repr__(self) -> str:
        return f"<AsyncStreamResponse [{self.status}]>"


class _StreamContext:
    """What `AsyncClient.stream(...)` returns: ``async with client.stream(...) as r`` (or ``await`` it)."""

    def __init__(self, opening: Any) -> None:
        self._opening = opening
        self._response: AsyncStreamResponse | None = None

    def __await__(self) -> Any:
        return self._open().__await__()

    async def _open(self) -> AsyncStreamResponse:
        self._response = AsyncStreamResponse(await self._opening())
        return self._response

    async def __aenter__(self) -> AsyncStreamResponse:
        return await self._open()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if self._response is not None:
            self._response.close()
        return False


class AsyncClient:
    """asyncio HTTP/1.1 (and HTTP/2) client (http:// and https://) with a keep-alive connection pool
    (requests run on a tokio runtime). The same options as `Client`.

    The methods are coroutines: nothing happens until they are awaited, on any running event loop
    (one that supports ``loop.add_reader``: the default selector loop or uvloop on Unix).
    ``verify``: True (the system's roots), False (no certificate check: unsafe) or the path of a CA bundle
    (PEM), as requests' ``verify=``.
    """

    def __init__(
        self,
        timeout: float | None = None,
        verify: bool | str | os.PathLike[str] = True,
        **options: Unpack[_ClientOptions],
    ) -> None:
        # the keyword options are RawAsyncClient's: names, defaults and checks listed once for both clients
        # (src/config.rs), types in _core.pyi's _ClientOptions
        self._raw = RawAsyncClient(timeout, verify, **options)

    async def get(self, url: str) -> int:
        """GET `url`, read the whole body, return the status (the lean benchmark path)."""
        return await self._raw.get(url, _completer())

    async def fetch_len(self, url: str) -> tuple[int, int]:
        """GET `url`, read the whole body, return ``(status, body bytes)``."""
        return await self._raw.fetch_len(url, _completer())

    async def fetch(self, url: str, *, method: str = "GET", body: Buffer | None = None) -> tuple[int, bytes]:
        """`method` `url` with `body` (bytes-like) if any, read the whole body, return ``(status, body)``
        (the lean benchmark path: no redirects, no decoding, no default headers)."""
        return await self._raw.fetch(url, _completer(), method=method, body=body)

    async def request(
        self,
        method: str,
        url: str,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: _AsyncBody | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> Response:
        """As `Client.request`; an iterable, async iterable or file body is streamed (chunked), read on the loop."""
        raw, source = _upload(body)
        pending = self._raw.request(
            method,
            url,
            _completer(),
            params=params,
            headers=headers,
            body=raw,
            json=json,
            timeout=timeout,
            follow_redirects=follow_redirects,
        )
        return await _sent(pending, None if source is None else _start_feeding(raw, source))

    def stream(
        self,
        method: str,
        url: str,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: _AsyncBody | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> _StreamContext:
        """``async with client.stream("GET", url) as r: async for chunk in r.aiter_bytes(): ...``"""

        async def opening() -> Any:
            raw, source = _upload(body)
            pending = self._raw.stream(
                method,
                url,
                _completer(),
                params=params,
                headers=headers,
                body=raw,
                json=json,
                timeout=timeout,
                follow_redirects=follow_redirects,
            )
            return await _sent(pending, None if source is None else _start_feeding(raw, source), stop=False)

        return _StreamContext(opening)

    @property
    def timeout(self) -> float | None:
        return self._raw.timeout

    @property
    def connect_timeout(self) -> float | None:
        return self._raw.connect_timeout

    @property
    def read_timeout(self) -> float | None:
        return self._raw.read_timeout

    @property
    def verify(self) -> bool | str | os.PathLike[str]:
        """The verify argument, as given (True when omitted)."""
        return self._raw.verify

    @property
    def tls_info(self) -> dict[str, str | None] | None:
        """``{"version": "TLSv1.3", "cipher": None}`` of the most recent response's connection (OpenSSL's
        version names; reqwest does not tell the cipher suite); None before the first response and for
        plain ``http://``."""
        return self._raw.tls_info

    @property
    def closed(self) -> bool:
        return self._raw.closed

    def close(self) -> None:
        """Close the connection pool (requests already running finish first). Idempotent."""
        self._raw.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        self.close()
        return False

    def __repr__(self) -> str:
        return f"<reqwest_client.AsyncClient timeout={self.timeout}{' closed' if self.closed else ''}>"
