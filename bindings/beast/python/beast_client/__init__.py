"""HTTP/1.1 client on Boost.Beast (C++), bound with pybind11; the GIL is released during I/O.

    import beast_client

    with beast_client.Client(timeout=10.0) as client:
        r = client.request("GET", "https://example.org/search", params={"q": "caf\u00e9 au lait"})
        r.status, r.url, r.headers.get_all("set-cookie"), r.text()
        r = client.request("POST", "http://127.0.0.1:8080/anything", json={"a": 1})
        r.json()
        with client.stream("GET", "http://127.0.0.1:8080/bytes/1000000") as s:
            for chunk in s.iter_bytes():  # the GIL is released while each chunk is awaited
                ...
        status = client.get("http://127.0.0.1:8080/")  # the lean benchmark path: whole body read, not kept
        nbytes = client.last_body_bytes

    async with beast_client.AsyncClient(timeout=10.0) as client:  # asyncio (uvloop too)
        r = await client.request("GET", "http://127.0.0.1:8080/")
        async with client.stream("GET", "http://127.0.0.1:8080/bytes/1000000") as s:
            async for chunk in s.aiter_bytes():
                ...

Errors: ValueError (invalid URL, bad method/header/argument value, a proxy URL it cannot use), TypeError
(argument of the wrong type), TimeoutError, beast_client.TLSError (a ConnectionError: untrusted, expired or
wrong-host certificate, failed handshake), ConnectionError (its subclasses ConnectionRefusedError /
ConnectionResetError where that is clearly what happened), beast_client.ProtocolError (an OSError: malformed
response, undecodable gzip/deflate/br/zstd body, a redirect to an unsupported URL), beast_client.BodyTooLarge (a
ProtocolError: a body over max_body_size), beast_client.TooManyRedirects (an OSError), RuntimeError (a closed
client). Non-2xx statuses are returned, not raised.

A Client may be shared by threads, as a requests.Session is, and an AsyncClient by the tasks of an event loop: each
request takes a keep-alive connection of its own from the client's pool (``max_connections`` bounds them per
origin), with the GIL released while it waits (docs/binding-api.md, "Threads"). The AsyncClient's requests run
on the running event loop's own thread when they can (get, fetch_len and fetch over http://: the connection's socket
watched by the loop, Boost.Beast's parser fed there), the others on one thread of the extension's own (Boost.Asio's
asynchronous operations, no thread per request), whose results come back to the event loop through a pipe it
watches (``loop.add_reader``).

``cookies=True`` gives a client a cookie jar (request/stream only); ``max_body_size`` bounds what
``request()`` keeps; ``trust_env`` (proxies from the environment) and ``proxy=`` route through an HTTP proxy.
Clients are fork-safe: in a child made by ``fork()`` they open their own connections at their first request
there, never using the parent's.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ._core import (
    BodyTooLarge,
    Client,
    Completer,
    Headers,
    ProtocolError,
    RawAsyncClient,
    RawStream,
    Response,
    StreamResponse,
    TLSError,
    TooManyRedirects,
    __version__,
    boost_version,
)

if TYPE_CHECKING:
    from typing_extensions import Buffer, Unpack

    from ._core import _Body, _ClientOptions, _HeadersArg, _Params

Mapping.register(Headers)

__all__ = [
    "AsyncClient",
    "AsyncStreamResponse",
    "BodyTooLarge",
    "Client",
    "Headers",
    "ProtocolError",
    "Response",
    "StreamResponse",
    "TLSError",
    "TooManyRedirects",
    "__version__",
    "boost_version",
]

#: one Completer per event loop: its pipe is registered with loop.add_reader, and its drain() resolves the
#: loop's futures on the loop's own thread (the extension's I/O thread never touches Python)
_completers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Completer] = weakref.WeakKeyDictionary()


def _completer() -> Completer:
    loop = asyncio.get_running_loop()
    c = _completers.get(loop)
    if c is None:
        c = Completer()
        loop.add_reader(c.fileno(), c.drain)
        _completers[loop] = c
    return c


def _buffered(body: Any) -> Any:
    """AsyncClient's body: a bytes-like object as it is; an iterable of chunks or a file read here, whole (the
    requests run on a thread that never calls Python, so nothing can be read from them as they are sent)."""
    if body is None or isinstance(body, (bytes, bytearray, memoryview)):
        return body
    if isinstance(body, str):
        raise TypeError("body must be bytes-like, not str (encode it first)")
    try:
        memoryview(body)
    except TypeError:
        pass
    else:
        return body
    if hasattr(body, "read"):
        return body.read()
    try:
        chunks = iter(body)
    except TypeError:
        raise TypeError(
            f"body must be bytes-like, an iterable of bytes-like chunks or a binary file, not {type(body).__name__}"
        ) from None
    return b"".join(chunks)


class AsyncStreamResponse:
    """The response of `AsyncClient.stream`, an async context manager: ``async for chunk in r.aiter_bytes()``
    reads the body as it arrives; leaving the block closes it."""

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
    def headers(self) -> Headers:
        return self._raw.headers

    @property
    def closed(self) -> bool:
        return self._closed

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's pieces as they arrive (decoded when the client decompresses)."""
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
    """asyncio HTTP/1.1 client (http:// and https://) with a keep-alive connection pool, the same options as
    `Client`: the C++ client's asynchronous requests, on one I/O thread of the extension's.

    The methods are coroutines: nothing happens until they are awaited, on any running event loop (one that
    supports ``loop.add_reader``: the default selector loop or uvloop on Unix). A task cancelled while it awaits
    a request abandons it: its connection is closed. ``verify``: True (the system's roots), False (no
    certificate check: unsafe) or the path of a CA bundle (PEM), as requests' ``verify=``.
    """

    def __init__(
        self,
        timeout: float | None = None,
        verify: bool | str | os.PathLike[str] = True,
        **options: Unpack[_ClientOptions],
    ) -> None:
        # the keyword options are RawAsyncClient's, checked as Client's (src/settings.cpp); their types are
        # _core.pyi's _ClientOptions
        self._raw = RawAsyncClient(timeout, verify, **options)

    # get, fetch_len and fetch: over http:// on the running loop's own thread (the loop path: a future the loop's
    # readiness resolves), else on the I/O thread; a cancelled task abandons the loop path's request
    async def get(self, url: str) -> int:
        """GET `url`, read the whole body, return the status (the lean benchmark path)."""
        raw = self._raw
        future = raw.loop_get(url)
        if future is None:
            return await raw.get(url, _completer())
        try:
            return await future
        except asyncio.CancelledError:
            raw.abandon(future)
            raise

    async def fetch_len(self, url: str) -> tuple[int, int]:
        """GET `url`, read the whole body, return ``(status, body bytes)``."""
        raw = self._raw
        future = raw.loop_fetch_len(url)
        if future is None:
            return await raw.fetch_len(url, _completer())
        try:
            return await future
        except asyncio.CancelledError:
            raw.abandon(future)
            raise

    async def fetch(self, url: str, *, method: str = "GET", body: Buffer | None = None) -> tuple[int, bytes]:
        """`method` `url` with `body` (bytes-like) if any, read the whole body, return ``(status, body)``
        (the lean benchmark path: no redirects, no decoding, no default headers)."""
        raw = self._raw
        future = raw.loop_fetch(url, method, body)
        if future is None:
            return await raw.fetch(url, _completer(), method=method, body=body)
        try:
            return await future
        except asyncio.CancelledError:
            raw.abandon(future)
            raise

    async def request(
        self,
        method: str,
        url: str,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: _Body | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> Response:
        """As `Client.request`; an iterable or file body is read whole first (no streamed upload here)."""
        return await self._raw.request(
            method,
            url,
            _completer(),
            params=params,
            headers=headers,
            body=_buffered(body),
            json=json,
            timeout=timeout,
            follow_redirects=follow_redirects,
        )

    def stream(
        self,
        method: str,
        url: str,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: _Body | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> _StreamContext:
        """``async with client.stream("GET", url) as r: async for chunk in r.aiter_bytes(): ...``"""

        def opening() -> Any:
            return self._raw.stream(
                method,
                url,
                _completer(),
                params=params,
                headers=headers,
                body=_buffered(body),
                json=json,
                timeout=timeout,
                follow_redirects=follow_redirects,
            )

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
    def tls_info(self) -> dict[str, str] | None:
        """``{"version": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384"}`` of the most recently opened
        connection (OpenSSL's names); None before the first one and for plain ``http://``."""
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
        return f"<beast_client.AsyncClient timeout={self.timeout}{' closed' if self.closed else ''}>"
