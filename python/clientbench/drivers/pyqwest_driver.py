"""Python `pyqwest` (reqwest via PyO3, from PyPI): sync (`SyncClient` on its own `SyncHTTPTransport` per thread)
or async (`Client` on its own `HTTPTransport` per task)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
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
    # the HTTP version asked for (ALPN picks h2 over TLS when unset): HTTP/1.1, or HTTP/2 by ALPN over https
    # and with prior knowledge over http, or HTTP/3 (reqwest's, with prior knowledge: QUIC only)
    version: pyqwest.HTTPVersion | None = pyqwest.HTTPVersion.HTTP1
    if sdk.http2(opts):
        version = None if opts.url.startswith("https:") else pyqwest.HTTPVersion.HTTP2
    elif sdk.http3(opts):
        version = pyqwest.HTTPVersion.HTTP3
    return {
        **tls,
        "timeout": opts.timeout,  # connect to the end of the body
        "pool_max_idle_per_host": sdk.pool_size(opts),
        "max_connections_per_address": sdk.pool_size(opts),
        "http_version": version,
    }


def _version_name(version: object) -> str:
    """HTTPVersion.HTTP2 -> HTTP/2 (its str() is HTTP/1.1 for HTTP1)"""
    return str(version)


def make_client(opts: sdk.Options) -> pyqwest.SyncClient:
    return pyqwest.SyncClient(pyqwest.SyncHTTPTransport(**_transport_options(opts)))


def request(client: pyqwest.SyncClient, url: str) -> tuple[int, int]:
    r = client.get(url)  # a FullResponse: the whole body read
    return r.status, len(r.content)


def upload(client: pyqwest.SyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.post(url, content=body) if method == "POST" else client.put(url, content=body)
    return r.status, bytes(r.content)


def protocol(client: pyqwest.SyncClient, url: str) -> str:
    with client.stream("GET", url) as r:  # a FullResponse does not say its version
        for _ in r.content:
            pass
        return _version_name(r.http_version)


@contextlib.contextmanager
def stream(
    client: pyqwest.SyncClient, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    """client.stream(): the body's pieces as pyqwest reads them (it takes no chunk size), the whole body as
    execute() reads it; an iterator as `content` is sent chunked."""
    if chunk is None:
        r = client.execute(method, url, content=content)
        yield r.status, (r.content,)
        return
    with client.stream(method, url, content=content) as s:
        yield s.status, s.content  # type: ignore[misc]  # bytes, memoryviews or bytearrays: compared as bytes


async def make_async_client(opts: sdk.Options) -> pyqwest.Client:
    return pyqwest.Client(pyqwest.HTTPTransport(**_transport_options(opts)))


async def request_async(client: pyqwest.Client, url: str) -> tuple[int, int]:
    r = await client.get(url)
    return r.status, len(r.content)


async def upload_async(client: pyqwest.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await (client.post(url, content=body) if method == "POST" else client.put(url, content=body))
    return r.status, bytes(r.content)


@contextlib.asynccontextmanager
async def stream_async(
    client: pyqwest.Client, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    """As stream(), with an async iterator as `content`."""
    body: Any = content  # pyqwest takes an AsyncIterator (the harness gives an async generator)
    if chunk is None:
        r = await client.execute(method, url, content=body)
        yield r.status, _one(r.content)
        return
    async with client.stream(method, url, content=body) as s:
        yield s.status, s.content  # type: ignore[misc]


async def _one(body: bytes) -> AsyncIterator[bytes]:
    yield body


async def protocol_async(client: pyqwest.Client, url: str) -> str:
    async with client.stream("GET", url) as r:
        async for _ in r.content:
            pass
        return _version_name(r.http_version)


SYNC = sdk.SyncClient("pyqwest", make_client, request, upload, http2=True, http3=True, protocol=protocol, stream=stream)
# pyqwest 0.12.0 aborts (SIGABRT, no message) in interpreter finalization after async requests in about 1 run of
# 100 (2 of 200 with /bytes/1000000, 4 tasks x 10 requests), after the document was printed.
ASYNC = sdk.AsyncClient(
    "pyqwest",
    make_async_client,
    request_async,
    upload_async,
    exit_after_document=True,
    http2=True,
    http3=True,
    protocol=protocol_async,
    stream=stream_async,
)
