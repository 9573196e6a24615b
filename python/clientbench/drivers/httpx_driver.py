"""Python `httpx`: sync (`httpx.Client` per thread) or async (`httpx.AsyncClient` per task)."""

from __future__ import annotations

import httpx

from .. import sdk


def _limits() -> httpx.Limits:
    return httpx.Limits(max_connections=1, max_keepalive_connections=1)


def make_client(opts: sdk.Options) -> httpx.Client:
    return httpx.Client(timeout=opts.timeout, limits=_limits(), trust_env=False, verify=sdk.ssl_context(opts))


def request(client: httpx.Client, url: str) -> tuple[int, int]:
    r = client.get(url)
    return r.status_code, len(r.content)


def upload(client: httpx.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(method, url, content=body)
    return r.status_code, r.content


async def make_async_client(opts: sdk.Options) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=opts.timeout, limits=_limits(), trust_env=False, verify=sdk.ssl_context(opts))


async def request_async(client: httpx.AsyncClient, url: str) -> tuple[int, int]:
    r = await client.get(url)
    return r.status_code, len(r.content)


async def upload_async(client: httpx.AsyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(method, url, content=body)
    return r.status_code, r.content


SYNC = sdk.SyncClient("httpx", make_client, request, upload, httpx.Client.close, version=httpx.__version__)
ASYNC = sdk.AsyncClient(
    "httpx", make_async_client, request_async, upload_async, httpx.AsyncClient.aclose, version=httpx.__version__
)
