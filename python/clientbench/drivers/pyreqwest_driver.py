"""Python `pyreqwest` (reqwest via PyO3, from PyPI): sync (`SyncClient` per thread) or async (`Client` per task)."""

from __future__ import annotations

import datetime
from typing import Any

from pyreqwest.client import Client, ClientBuilder, SyncClient, SyncClientBuilder

from .. import sdk


def _timeout(opts: sdk.Options) -> datetime.timedelta:
    return datetime.timedelta(seconds=opts.timeout)


def _tls(builder: Any, opts: sdk.Options) -> Any:
    if opts.insecure:
        return builder.danger_accept_invalid_certs(True)
    if opts.ca_file:
        with open(opts.ca_file, "rb") as f:
            return builder.add_root_certificate_pem(f.read())
    return builder


def make_client(opts: sdk.Options) -> SyncClient:
    # Annotated so mypy passes whether or not pyreqwest (a peer, not a lint dependency) is installed.
    client: SyncClient = _tls(SyncClientBuilder(), opts).timeout(_timeout(opts)).max_connections(1).build()
    return client


def request(client: SyncClient, url: str) -> tuple[int, int]:
    r = client.get(url).build().send()
    return r.status, len(r.bytes())


def upload(client: SyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(method, url).body_bytes(body).build().send()
    return r.status, bytes(r.bytes())


async def make_async_client(opts: sdk.Options) -> Client:
    client: Client = _tls(ClientBuilder(), opts).timeout(_timeout(opts)).max_connections(1).build()
    return client


async def request_async(client: Client, url: str) -> tuple[int, int]:
    r = await client.get(url).build().send()
    return r.status, len(await r.bytes())


async def upload_async(client: Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(method, url).body_bytes(body).build().send()
    return r.status, bytes(await r.bytes())


async def close_async(client: Client) -> None:
    await client.close()


SYNC = sdk.SyncClient("pyreqwest", make_client, request, upload, SyncClient.close)
# pyreqwest 0.15.1 aborts in interpreter finalization after async requests in about half the runs ("Fatal Python
# error: PyGILState_Release: thread state ... must be current"), after the document was printed.
ASYNC = sdk.AsyncClient(
    "pyreqwest", make_async_client, request_async, upload_async, close_async, exit_after_document=True
)
