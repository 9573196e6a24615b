"""Python `rnet` (Rust, from PyPI): sync (`BlockingClient` per thread) or async (`Client` per task)."""

from __future__ import annotations

from pathlib import Path

import rnet

from .. import sdk

METHODS = {"POST": rnet.Method.POST, "PUT": rnet.Method.PUT}


def _verify(opts: sdk.Options) -> bool | Path:
    return False if opts.insecure else Path(opts.ca_file) if opts.ca_file else True


def make_client(opts: sdk.Options) -> rnet.BlockingClient:
    return rnet.BlockingClient(timeout=int(max(1, round(opts.timeout))), no_proxy=True, verify=_verify(opts))


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


async def make_async_client(opts: sdk.Options) -> rnet.Client:
    return rnet.Client(timeout=int(max(1, round(opts.timeout))), no_proxy=True, verify=_verify(opts))


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
SYNC = sdk.SyncClient("rnet", make_client, request, upload, exit_after_document=True)
ASYNC = sdk.AsyncClient("rnet", make_async_client, request_async, upload_async, exit_after_document=True)
