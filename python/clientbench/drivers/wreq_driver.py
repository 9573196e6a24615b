"""Python `wreq` (Rust, from PyPI; rnet's successor under its new name): sync (`wreq.blocking.Client` per thread)
or async (`wreq.Client` per task)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import wreq
import wreq.blocking

from .. import sdk


def _versions(opts: sdk.Options) -> dict[str, bool]:
    """The HTTP version asked for (reqwest offers h2 over TLS by default): HTTP/1.1 only, or HTTP/2 by ALPN over
    https and with prior knowledge (http2_only) over http."""
    if not sdk.http2(opts):
        return {"http1_only": True}
    return {} if opts.url.startswith("https:") else {"http2_only": True}


def _version_name(version: object) -> str:
    """Version.HTTP_2 -> HTTP/2"""
    name = str(version).rsplit(".", 1)[-1]
    return {"HTTP_10": "HTTP/1.0", "HTTP_11": "HTTP/1.1", "HTTP_2": "HTTP/2", "HTTP_3": "HTTP/3"}.get(name, name)


METHODS = {"POST": wreq.Method.POST, "PUT": wreq.Method.PUT}


def _config(opts: sdk.Options) -> dict[str, Any]:
    verify: bool | Path = False if opts.insecure else Path(opts.ca_file) if opts.ca_file else True
    return {
        "timeout": datetime.timedelta(seconds=opts.timeout),  # connect to the end of the body
        "pool_max_idle_per_host": sdk.pool_size(opts),
        "pool_max_size": sdk.pool_size(opts),
        "no_proxy": True,
        "tls_verify": verify,
        **_versions(opts),
    }


def make_client(opts: sdk.Options) -> wreq.blocking.Client:
    return wreq.blocking.Client(**_config(opts))


def request(client: wreq.blocking.Client, url: str) -> tuple[int, int]:
    with client.get(url) as r:
        return r.status.as_int(), len(r.bytes())


def upload(client: wreq.blocking.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    with client.request(METHODS[method], url, body=body) as r:
        return r.status.as_int(), bytes(r.bytes())


def protocol(client: wreq.blocking.Client, url: str) -> str:
    with client.get(url) as r:
        return _version_name(r.version)


async def make_async_client(opts: sdk.Options) -> wreq.Client:
    return wreq.Client(**_config(opts))


async def request_async(client: wreq.Client, url: str) -> tuple[int, int]:
    async with await client.get(url) as r:
        return r.status.as_int(), len(await r.bytes())


async def upload_async(client: wreq.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    async with await client.request(METHODS[method], url, body=body) as r:
        return r.status.as_int(), bytes(await r.bytes())


async def protocol_async(client: wreq.Client, url: str) -> str:
    async with await client.get(url) as r:
        return _version_name(r.version)


SYNC = sdk.SyncClient("wreq", make_client, request, upload, wreq.blocking.Client.close, http2=True, protocol=protocol)
ASYNC = sdk.AsyncClient(
    "wreq", make_async_client, request_async, upload_async, wreq.Client.close, http2=True, protocol=protocol_async
)
