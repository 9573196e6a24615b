"""Python `httpx`: sync (`httpx.Client` per thread) or async (`httpx.AsyncClient` per task)."""

from __future__ import annotations

import importlib.util
from typing import Any

import httpx

from .. import sdk

#: httpx speaks HTTP/2 with the h2 package only (python/requirements-peers.txt)
HTTP2 = importlib.util.find_spec("h2") is not None


def _options(opts: sdk.Options) -> dict[str, Any]:
    """One connection per worker's client, W for the shared one; HTTP/2 with the h2 package: ALPN over https
    (http1 stays offered), prior knowledge over http (http1 off)."""
    n = sdk.pool_size(opts)
    h2 = sdk.http2(opts)
    return {
        "timeout": opts.timeout,
        "limits": httpx.Limits(max_connections=n, max_keepalive_connections=n),
        "trust_env": False,
        "verify": sdk.ssl_context(opts),
        "http2": h2,
        "http1": not (h2 and opts.url.startswith("http:")),
    }


def make_client(opts: sdk.Options) -> httpx.Client:
    return httpx.Client(**_options(opts))


def request(client: httpx.Client, url: str) -> tuple[int, int]:
    r = client.get(url)
    return r.status_code, len(r.content)


def upload(client: httpx.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(method, url, content=body)
    return r.status_code, r.content


def protocol(client: httpx.Client, url: str) -> str:
    return str(client.get(url).http_version)  # str also where httpx is not installed (make lint: Any)


async def make_async_client(opts: sdk.Options) -> httpx.AsyncClient:
    return httpx.AsyncClient(**_options(opts))


async def request_async(client: httpx.AsyncClient, url: str) -> tuple[int, int]:
    r = await client.get(url)
    return r.status_code, len(r.content)


async def upload_async(client: httpx.AsyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(method, url, content=body)
    return r.status_code, r.content


async def protocol_async(client: httpx.AsyncClient, url: str) -> str:
    return str((await client.get(url)).http_version)


SYNC = sdk.SyncClient(
    "httpx", make_client, request, upload, httpx.Client.close, version=httpx.__version__, http2=HTTP2, protocol=protocol
)
ASYNC = sdk.AsyncClient(
    "httpx",
    make_async_client,
    request_async,
    upload_async,
    httpx.AsyncClient.aclose,
    version=httpx.__version__,
    http2=HTTP2,
    protocol=protocol_async,
)
