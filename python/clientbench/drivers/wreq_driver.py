"""Python `wreq` (Rust, from PyPI; rnet's successor under its new name): sync (`wreq.blocking.Client` per thread)
or async (`wreq.Client` per task)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import wreq
import wreq.blocking

from .. import sdk

METHODS = {"POST": wreq.Method.POST, "PUT": wreq.Method.PUT}


def _config(opts: sdk.Options) -> dict[str, Any]:
    verify: bool | Path = False if opts.insecure else Path(opts.ca_file) if opts.ca_file else True
    return {
        "timeout": datetime.timedelta(seconds=opts.timeout),  # connect to the end of the body
        "pool_max_idle_per_host": 1,
        "pool_max_size": 1,
        "no_proxy": True,
        "tls_verify": verify,
    }


def make_client(opts: sdk.Options) -> wreq.blocking.Client:
    return wreq.blocking.Client(**_config(opts))


def request(client: wreq.blocking.Client, url: str) -> tuple[int, int]:
    with client.get(url) as r:
        return r.status.as_int(), len(r.bytes())


def upload(client: wreq.blocking.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    with client.request(METHODS[method], url, body=body) as r:
        return r.status.as_int(), bytes(r.bytes())


async def make_async_client(opts: sdk.Options) -> wreq.Client:
    return wreq.Client(**_config(opts))


async def request_async(client: wreq.Client, url: str) -> tuple[int, int]:
    async with await client.get(url) as r:
        return r.status.as_int(), len(await r.bytes())


async def upload_async(client: wreq.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    async with await client.request(METHODS[method], url, body=body) as r:
        return r.status.as_int(), bytes(await r.bytes())


SYNC = sdk.SyncClient("wreq", make_client, request, upload, wreq.blocking.Client.close)
ASYNC = sdk.AsyncClient("wreq", make_async_client, request_async, upload_async, wreq.Client.close)
