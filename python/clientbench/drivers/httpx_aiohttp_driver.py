"""Python httpx on aiohttp's transport (`httpx-aiohttp`'s `HttpxAiohttpClient`: httpx's API, aiohttp's connections),
async: W tasks on one event loop, one client (with its own aiohttp `ClientSession`) per task.

What it cannot do, and a bug of httpx-aiohttp 0.2.0 the plugin works around:
- HTTP/2: aiohttp speaks HTTP/1.1 only (the transport warns and stays on HTTP/1.1); on rloop it cannot make TLS
  connections (aiohttp's need the loop's `create_connection(ssl=...)`): `--loop rloop` over https is unsupported;
- its exception map turns every `aiohttp.ClientConnectionError` (a refused connection, a failed TLS handshake, a
  disconnect) into `httpx.ConnectTimeout`, because that broad entry matches first and the specific ones that
  follow it are not subclasses of it: such a failure would be counted as a timeout. The plugin re-raises the
  aiohttp exception the transport chained (`__cause__`) instead, which the harness classes as it does for the
  aiohttp row;
- httpx's timeout reaches aiohttp as socket timeouts (connect, each read), not a total: the harness counts a request
  that ended later than --timeout as a TimeoutError.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Awaitable

import aiohttp
import httpx
from httpx_aiohttp import HttpxAiohttpClient

from .. import sdk
from .streaming import awhole

#: the transport's version, and the two libraries the row measures
VERSION = f"{sdk.installed_version('httpx-aiohttp')} (httpx {httpx.__version__}, aiohttp {aiohttp.__version__})"


async def make_client(opts: sdk.Options) -> HttpxAiohttpClient:
    n = sdk.pool_size(opts)  # aiohttp's connector limit: one connection per task's client, W for the shared one
    return HttpxAiohttpClient(
        timeout=opts.timeout,
        limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
        trust_env=False,
        verify=sdk.ssl_context(opts),
    )


async def _sent(response: Awaitable[httpx.Response]) -> httpx.Response:
    try:
        return await response
    except httpx.ConnectTimeout as exc:
        if (cause := _not_a_timeout(exc)) is not None:
            raise cause from None  # aiohttp's own exception, as the aiohttp row reports it
        raise


def _not_a_timeout(exc: httpx.ConnectTimeout) -> aiohttp.ClientError | None:
    """The aiohttp exception the transport mapped to a ConnectTimeout, unless it was one."""
    cause = exc.__cause__
    if isinstance(cause, aiohttp.ClientError) and not isinstance(cause, asyncio.TimeoutError):
        return cause
    return None


async def request(client: HttpxAiohttpClient, url: str) -> tuple[int, int]:
    r = await _sent(client.get(url))  # not streamed: httpx reads the whole body before it returns
    return r.status_code, len(r.content)


async def upload(client: HttpxAiohttpClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await _sent(client.request(method, url, content=body))
    return r.status_code, r.content


@contextlib.asynccontextmanager
async def stream(
    client: HttpxAiohttpClient, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    """httpx's stream(): the body by aiter_bytes(C); an async iterator as `content` is sent chunked by aiohttp."""
    try:
        async with client.stream(method, url, content=content) as r:
            yield r.status_code, r.aiter_bytes(chunk) if chunk else awhole(r.aread)
    except httpx.ConnectTimeout as exc:
        if (cause := _not_a_timeout(exc)) is not None:
            raise cause from None
        raise


ASYNC = sdk.AsyncClient(
    "httpx-aiohttp",
    make_client,
    request,
    upload,
    HttpxAiohttpClient.aclose,
    version=VERSION,
    stream=stream,
    loops_without_tls={"rloop": "rloop 0.5.0 has no TLS for the loop's connections, which aiohttp's use"},
)
