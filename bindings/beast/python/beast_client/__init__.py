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
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ._aio import AsyncStreamResponse, BaseAsyncClient, _completer, _result
from ._core import (
    BodyTooLarge,
    Client,
    Headers,
    ProtocolError,
    Response,
    StreamResponse,
    TLSError,
    TooManyRedirects,
    __version__,
    boost_version,
)

if TYPE_CHECKING:
    from typing_extensions import Buffer

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

# the shared layer's class is this package's, as the extension's classes are (their __module__ is beast_client)
AsyncStreamResponse.__module__ = __name__


class AsyncClient(BaseAsyncClient[AsyncStreamResponse]):
    """asyncio HTTP/1.1 client (http:// and https://) with a keep-alive connection pool, the same options as
    `Client`: the C++ client's asynchronous requests, on one I/O thread of the extension's.

    The methods are coroutines: nothing happens until they are awaited, on any running event loop (one that
    supports ``loop.add_reader``: the default selector loop or uvloop on Unix). A task cancelled while it awaits
    a request abandons it: its connection is closed. ``verify``: True (the system's roots), False (no
    certificate check: unsafe) or the path of a CA bundle (PEM), as requests' ``verify=``.
    """

    _response = AsyncStreamResponse

    # get, fetch_len and fetch: over http:// on the running loop's own thread (the loop path: a future the loop's
    # readiness resolves), else on the I/O thread as the shared layer does; a cancelled task abandons the loop
    # path's request
    async def get(self, url: str) -> int:
        """GET `url`, read the whole body, return the status (the lean benchmark path)."""
        raw = self._raw
        future = raw.loop_get(url)
        if future is None:
            return await super().get(url)
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
            return await super().fetch_len(url)
        try:
            return await future
        except asyncio.CancelledError:
            raw.abandon(future)
            raise

    async def fetch_phases(self, url: str) -> tuple[int, int, dict[str, int]]:
        """`fetch_len(url)`, also returning where the request's time went: ``(status, body bytes, {phase: ns})``
        (connect, tls, send, wait, receive; dns first when a host name was resolved). Over http:// on the loop's
        thread, `wait` includes the loop's time to get round to the socket; connect is the I/O thread's."""
        raw = self._raw
        future = raw.loop_fetch_phases(url)
        if future is None:
            completer = _completer()
            return await _result(completer, raw.fetch_phases(url, completer))
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
            return await super().fetch(url, method=method, body=body)
        try:
            return await future
        except asyncio.CancelledError:
            raw.abandon(future)
            raise

    @property
    def tls_info(self) -> dict[str, str] | None:
        """``{"version": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384"}`` of the most recently opened
        connection (OpenSSL's names); None before the first one and for plain ``http://``."""
        return self._raw.tls_info
