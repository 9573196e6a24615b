"""Python `pyqwest` (reqwest via PyO3, from PyPI): sync (`SyncClient` on its own `SyncHTTPTransport` per thread)
or async (`Client` on its own `HTTPTransport` per task)."""

from __future__ import annotations

from typing import Any

import pyqwest

from .. import sdk


def _transport_options(opts: sdk.Options) -> dict[str, Any]:
    if opts.insecure:
        # pyqwest has no switch that turns certificate checks off: every request fails, counted, saying why
        raise ValueError("pyqwest cannot skip certificate verification (--insecure)")
    tls: dict[str, Any] = {"tls_include_system_certs": True}
    if opts.ca_file:
        with open(opts.ca_file, "rb") as f:
            tls = {"tls_ca_cert": f.read()}  # replaces the system's roots, as the contract says
    return {
        **tls,
        "timeout": opts.timeout,  # connect to the end of the body
        "pool_max_idle_per_host": 1,
        "max_connections_per_address": 1,
    }


def make_client(opts: sdk.Options) -> pyqwest.SyncClient:
    return pyqwest.SyncClient(pyqwest.SyncHTTPTransport(**_transport_options(opts)))


def request(client: pyqwest.SyncClient, url: str) -> tuple[int, int]:
    r = client.get(url)  # a FullResponse: the whole body read
    return r.status, len(r.content)


def upload(client: pyqwest.SyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.post(url, content=body) if method == "POST" else client.put(url, content=body)
    return r.status, bytes(r.content)


async def make_async_client(opts: sdk.Options) -> pyqwest.Client:
    return pyqwest.Client(pyqwest.HTTPTransport(**_transport_options(opts)))


async def request_async(client: pyqwest.Client, url: str) -> tuple[int, int]:
    r = await client.get(url)
    return r.status, len(r.content)


async def upload_async(client: pyqwest.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await (client.post(url, content=body) if method == "POST" else client.put(url, content=body))
    return r.status, bytes(r.content)


SYNC = sdk.SyncClient("pyqwest", make_client, request, upload)
# pyqwest 0.12.0 aborts (SIGABRT, no message) in interpreter finalization after async requests in about 1 run of
# 100 (2 of 200 with /bytes/1000000, 4 tasks x 10 requests), after the document was printed.
ASYNC = sdk.AsyncClient("pyqwest", make_async_client, request_async, upload_async, exit_after_document=True)
