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
``Response.phases`` tells where a response's time went (connect+tls, send+wait, receive, in seconds), and
``fetch_phases`` is `fetch_len` with them (in ns).

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

from collections.abc import Mapping

from . import _aio
from ._aio import BaseAsyncClient, _completer, _result
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
    reqwest_version,
)

Mapping.register(Headers)

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


class AsyncStreamResponse(_aio.AsyncStreamResponse):
    """The response of `AsyncClient.stream` (an async context manager: ``async for chunk in r.aiter_bytes()``
    reads the body as it arrives; leaving the block closes it), with its HTTP version."""

    @property
    def http_version(self) -> str:
        """The version of HTTP the response came with: "HTTP/1.1", "HTTP/2" or "HTTP/3"."""
        return self._raw.http_version


class AsyncClient(BaseAsyncClient[AsyncStreamResponse]):
    """asyncio HTTP/1.1 (and HTTP/2) client (http:// and https://) with a keep-alive connection pool
    (requests run on a tokio runtime). The same options as `Client`.

    The methods are coroutines: nothing happens until they are awaited, on any running event loop
    (one that supports ``loop.add_reader``: the default selector loop or uvloop on Unix).
    ``verify``: True (the system's roots), False (no certificate check: unsafe) or the path of a CA bundle
    (PEM), as requests' ``verify=``.
    """

    _response = AsyncStreamResponse

    async def fetch_phases(self, url: str) -> tuple[int, int, dict[str, int]]:
        """`fetch_len` with the request's phases: ``(status, body bytes, {phase key: ns})`` (the keys of
        `Response.phases`)."""
        completer = _completer()
        return await _result(completer, self._raw.fetch_phases(url, completer))

    @property
    def tls_info(self) -> dict[str, str | None] | None:
        """``{"version": "TLSv1.3", "cipher": None}`` of the most recent response's connection (OpenSSL's
        version names; reqwest does not tell the cipher suite); None before the first response and for
        plain ``http://``."""
        return self._raw.tls_info
