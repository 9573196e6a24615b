"""Python `rnet` (Rust, from PyPI): sync (`BlockingClient` per thread) or async (`Client` per task)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import rnet

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


METHODS = {"POST": rnet.Method.POST, "PUT": rnet.Method.PUT}


def _verify(opts: sdk.Options) -> bool | Path:
    return False if opts.insecure else Path(opts.ca_file) if opts.ca_file else True


def _config(opts: sdk.Options) -> dict[str, Any]:
    n = sdk.pool_size(opts)
    return {
        "timeout": int(max(1, round(opts.timeout))),
        "no_proxy": True,
        "verify": _verify(opts),
        "pool_max_idle_per_host": n,
        "pool_max_size": n,
        **_versions(opts),
    }


def make_client(opts: sdk.Options) -> rnet.BlockingClient:
    return rnet.BlockingClient(**_config(opts))


def request(client: rnet.BlockingClient, url: str) -> tuple[int, int]:
    r = client.get(url)
    try:
        return int(r.status), len(r.bytes())
    finally:
        r.close()


def upload(client: rnet.BlockingClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(METHODS[method], url, body=body)
    try:
        return int(r.status), bytes(r.bytes())
    finally:
        r.close()


def protocol(client: rnet.BlockingClient, url: str) -> str:
    r = client.get(url)
    try:
        return _version_name(r.version)
    finally:
        r.close()


async def make_async_client(opts: sdk.Options) -> rnet.Client:
    return rnet.Client(**_config(opts))


async def request_async(client: rnet.Client, url: str) -> tuple[int, int]:
    r = await client.get(url)
    try:
        return int(r.status), len(await r.bytes())
    finally:
        await r.close()


async def upload_async(client: rnet.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(METHODS[method], url, body=body)
    try:
        return int(r.status), bytes(await r.bytes())
    finally:
        await r.close()


# rnet 2.4.2 segfaults in its runtime teardown at interpreter exit after async requests with larger bodies (seen
# with /bytes/1000000: ~80% of runs), after the document has been printed. Its clients have no close(): dropping
# one closes its pool.
async def protocol_async(client: rnet.Client, url: str) -> str:
    r = await client.get(url)
    try:
        return _version_name(r.version)
    finally:
        await r.close()


SYNC = sdk.SyncClient("rnet", make_client, request, upload, exit_after_document=True, http2=True, protocol=protocol)
ASYNC = sdk.AsyncClient(
    "rnet",
    make_async_client,
    request_async,
    upload_async,
    exit_after_document=True,
    http2=True,
    protocol=protocol_async,
)
