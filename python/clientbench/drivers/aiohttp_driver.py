"""Python `aiohttp`, async: W tasks on one event loop, one `ClientSession` (own connection) per task."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator

import aiohttp

from .. import sdk
from .streaming import awhole


async def make_client(opts: sdk.Options) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        # one keep-alive connection per task's session, W for the shared one
        connector=aiohttp.TCPConnector(limit=sdk.pool_size(opts), ssl=sdk.ssl_context(opts)),
        timeout=aiohttp.ClientTimeout(total=opts.timeout),
        trust_env=False,
    )


async def request(session: aiohttp.ClientSession, url: str) -> tuple[int, int]:
    async with session.get(url) as r:
        body = await r.read()  # the whole body
        return r.status, len(body)


async def upload(session: aiohttp.ClientSession, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    async with session.request(method, url, data=body) as r:
        return r.status, await r.read()


@contextlib.asynccontextmanager
async def stream(
    session: aiohttp.ClientSession,
    method: str,
    url: str,
    content: bytes | AsyncIterable[bytes] | None,
    chunk: int | None,
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    """The body read by content.iter_chunked(C); an async iterator as `data` is sent chunked."""
    async with session.request(method, url, data=content) as r:
        yield r.status, r.content.iter_chunked(chunk) if chunk else awhole(r.read)


ASYNC = sdk.AsyncClient(
    "aiohttp", make_client, request, upload, aiohttp.ClientSession.close, version=aiohttp.__version__, stream=stream
)
