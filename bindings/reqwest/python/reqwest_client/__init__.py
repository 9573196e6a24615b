"""reqwest_client: the clientbench reqwest (Rust) HTTP/1.1 client for Python.

`Client` is synchronous and releases the GIL while it waits for the network (`release_gil=False` keeps
it, to demonstrate the difference); `AsyncClient` has coroutine methods for asyncio. Both keep one
keep-alive connection pool per client, speak HTTP/1.1 over ``http://`` and ``https://`` (rustls), and do
not follow redirects.

``verify`` (both clients), as requests' ``verify=``: True checks ``https://`` servers against the system's
roots, a path (str or os.PathLike) against only the CA certificates in that PEM file, False not at all
(unsafe). The file is read when the client is made: FileNotFoundError (or another OSError) when it cannot
be read, ValueError when it holds no usable certificate.

Errors: bad URL/method/header -> ValueError; timeout -> TimeoutError; untrusted/expired/wrong-name
certificate, failed handshake -> TLSError (a ConnectionError); refused/reset/closed -> ConnectionError
(ConnectionRefusedError / ConnectionResetError where clear); malformed HTTP -> ProtocolError (an OSError);
a closed client -> RuntimeError. Non-2xx statuses are returned, never raised.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Mapping
from types import TracebackType

from ._core import (
    Client,
    Completer,
    ProtocolError,
    RawAsyncClient,
    Response,
    TLSError,
    __version__,
    reqwest_version,
)

__all__ = ["AsyncClient", "Client", "ProtocolError", "Response", "TLSError", "__version__", "reqwest_version"]


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


class AsyncClient:
    """asyncio HTTP/1.1 client (http:// and https://) with a keep-alive connection pool (requests run on a
    tokio runtime).

    The methods are coroutines: nothing happens until they are awaited, on any running event loop
    (one that supports ``loop.add_reader``: the default selector loop or uvloop on Unix).
    ``verify``: True (the system's roots), False (no certificate check: unsafe) or the path of a CA bundle
    (PEM), as requests' ``verify=``.
    """

    def __init__(self, timeout: float = 30.0, verify: bool | str | os.PathLike[str] = True) -> None:
        self._raw = RawAsyncClient(timeout, verify)

    async def get(self, url: str) -> int:
        """GET `url`, read the whole body, return the status."""
        return await self._raw.get(url, _completer())

    async def fetch_len(self, url: str) -> tuple[int, int]:
        """GET `url`, read the whole body, return ``(status, body bytes)``."""
        return await self._raw.fetch_len(url, _completer())

    async def request(
        self, method: str, url: str, *, headers: Mapping[str, str] | None = None, body: bytes | bytearray | None = None
    ) -> Response:
        """Any method with optional headers and body; returns a `Response` with the whole body."""
        return await self._raw.request(method, url, _completer(), headers=headers, body=body)

    @property
    def timeout(self) -> float:
        return self._raw.timeout

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
        return f"<reqwest_client.AsyncClient timeout={self.timeout:g}{' closed' if self.closed else ''}>"
