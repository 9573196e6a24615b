"""Python `httpx2` (the maintained fork of httpx): sync (`httpx2.Client` per thread) or async
(`httpx2.AsyncClient` per task)."""

from __future__ import annotations

import httpx2

from .. import sdk


def _limits() -> httpx2.Limits:
    return httpx2.Limits(max_connections=1, max_keepalive_connections=1)


def make_client(opts: sdk.Options) -> httpx2.Client:
    return httpx2.Client(timeout=opts.timeout, limits=_limits(), trust_env=False, verify=sdk.ssl_context(opts))


def request(client: httpx2.Client, url: str) -> tuple[int, int]:
    r = client.get(url)
    return r.status_code, len(r.content)


def upload(client: httpx2.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(method, url, content=body)
    return r.status_code, r.content


async def make_async_client(opts: sdk.Options) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(timeout=opts.timeout, limits=_limits(), trust_env=False, verify=sdk.ssl_context(opts))


async def request_async(client: httpx2.AsyncClient, url: str) -> tuple[int, int]:
    r = await client.get(url)
    return r.status_code, len(r.content)


async def upload_async(client: httpx2.AsyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(method, url, content=body)
    return r.status_code, r.content


SYNC = sdk.SyncClient("httpx2", make_client, request, upload, httpx2.Client.close, version=httpx2.__version__)
ASYNC = sdk.AsyncClient(
    "httpx2", make_async_client, request_async, upload_async, httpx2.AsyncClient.aclose, version=httpx2.__version__
)
