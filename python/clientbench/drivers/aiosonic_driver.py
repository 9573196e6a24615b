"""Python `aiosonic` (pure Python, asyncio), async: W tasks on one event loop, one `HTTPClient` on a
`TCPConnector` of its own (a pool of one connection) per task.

HTTP/2: aiosonic offers h2 by ALPN over TLS only (`http2=True`), with no prior knowledge over http, so it cannot do
the contract's `--http 2`: the row says unsupported. On rloop it cannot make TLS connections: `--loop rloop` over
https is unsupported (over http it runs).

Streamed bodies: `stream()`, the body by `iter_bytes()` in the pieces aiosonic reads (its own size: it takes no
chunk size); an async iterator as `data` is sent chunked.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from aiosonic import HTTPClient, TCPConnector
from aiosonic.pools import PoolConfig
from aiosonic.timeout import Timeouts

from .. import sdk
from .streaming import awhole


class Client:
    """aiosonic's client and the TLS settings it takes per request: the SSLContext trusting --ca-file (or the system
    roots), or verify=False with --insecure."""

    def __init__(self, opts: sdk.Options):
        t = opts.timeout
        # request_timeout bounds the whole request, the body included; the others bound its phases
        timeouts = Timeouts(sock_connect=t, sock_read=t, pool_acquire=t, request_timeout=t)
        # one connection per task's client (W for the shared one), kept for every request: aiosonic's default pool
        # replaces a connection after 1000 requests, which the contract's keep-alive connection would not
        pool = PoolConfig(size=sdk.pool_size(opts), max_conn_requests=None)
        self.http = HTTPClient(TCPConnector(pool_configs={":default": pool}, timeouts=timeouts))
        context = sdk.ssl_context(opts)
        self.verify = context is not False
        # over https only: aiosonic wraps a plain http connection in TLS too when given a context
        https = opts.url.startswith("https:")
        self.ssl = context if https and isinstance(context, ssl.SSLContext) else None


async def make_client(opts: sdk.Options) -> Client:
    return Client(opts)


async def request(client: Client, url: str) -> tuple[int, int]:
    r = await client.http.get(url, verify=client.verify, ssl=client.ssl)
    return r.status_code, len(await r.content())  # a Content-Length body is already read: content() returns it


async def upload(client: Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.http.request(url, method, data=body, verify=client.verify, ssl=client.ssl)
    return r.status_code, await r.content()


@contextlib.asynccontextmanager
async def stream(
    client: Client, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    data: Any = content  # an async generator: aiosonic's AsyncIterator
    async with client.http.stream(method, url, data=data, verify=client.verify, ssl=client.ssl) as r:
        yield r.status_code, r.iter_bytes() if chunk else awhole(r.content)


async def close(client: Client) -> None:
    await client.http.aclose()


ASYNC = sdk.AsyncClient(
    "aiosonic",
    make_client,
    request,
    upload,
    close,
    stream=stream,
    loops_without_tls={"rloop": "rloop 0.5.0 has no TLS for the asyncio streams aiosonic's connections use"},
)
