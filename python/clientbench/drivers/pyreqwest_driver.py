"""Python `pyreqwest` (reqwest via PyO3, from PyPI): sync (`SyncClient` per thread) or async (`Client` per task)."""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

from pyreqwest.client import Client, ClientBuilder, SyncClient, SyncClientBuilder

from .. import sdk
from .streaming import awhole, whole


def _timeout(opts: sdk.Options) -> datetime.timedelta:
    return datetime.timedelta(seconds=opts.timeout)


def _tls(builder: Any, opts: sdk.Options) -> Any:
    if opts.insecure:
        return builder.danger_accept_invalid_certs(True)
    if opts.ca_file:
        with open(opts.ca_file, "rb") as f:
            return builder.add_root_certificate_pem(f.read())
    return builder


def _configure(builder: Any, opts: sdk.Options) -> Any:
    """TLS, the timeout, the pool (1 connection per worker's client, W for the shared one) and the HTTP
    version asked for (reqwest offers h2 over TLS by default): HTTP/1.1 only, or HTTP/2 by ALPN over https
    and with prior knowledge over http."""
    builder = _tls(builder, opts).timeout(_timeout(opts)).max_connections(sdk.pool_size(opts))
    if not sdk.http2(opts):
        return builder.http1_only()
    # ALPN offers h2 only once http2(True) is set
    return builder.http2(True) if opts.url.startswith("https:") else builder.http2_prior_knowledge()


def _version_name(version: object) -> str:
    return str(version).upper().replace("HTTP/2.0", "HTTP/2")


def make_client(opts: sdk.Options) -> SyncClient:
    # Annotated so mypy passes whether or not pyreqwest (a peer, not a lint dependency) is installed.
    client: SyncClient = _configure(SyncClientBuilder(), opts).build()
    return client


def protocol(client: SyncClient, url: str) -> str:
    r = client.get(url).build().send()
    r.bytes()
    return _version_name(r.version)


def request(client: SyncClient, url: str) -> tuple[int, int]:
    r = client.get(url).build().send()
    return r.status, len(r.bytes())


def upload(client: SyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(method, url).body_bytes(body).build().send()
    return r.status, bytes(r.bytes())


def _with_body(builder: Any, content: Any) -> Any:
    """The request's body: none, bytes, or an (async) iterator of chunks, body_stream(): sent chunked."""
    if content is None:
        return builder
    return builder.body_bytes(content) if isinstance(content, bytes) else builder.body_stream(content)


def _read(reader: Any, chunk: int) -> Iterator[bytes]:
    while (piece := reader.read(chunk)) is not None:
        yield piece


async def _aread(reader: Any, chunk: int) -> AsyncIterator[bytes]:
    while (piece := await reader.read(chunk)) is not None:
        yield piece


@contextlib.contextmanager
def stream(
    client: SyncClient, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    """build_streamed(): the body read by its body_reader's read(C) as it arrives."""
    with _with_body(client.request(method, url), content).build_streamed() as r:
        yield r.status, _read(r.body_reader, chunk) if chunk else whole(r.bytes())


async def make_async_client(opts: sdk.Options) -> Client:
    client: Client = _configure(ClientBuilder(), opts).build()
    return client


async def protocol_async(client: Client, url: str) -> str:
    r = await client.get(url).build().send()
    await r.bytes()
    return _version_name(r.version)


async def request_async(client: Client, url: str) -> tuple[int, int]:
    r = await client.get(url).build().send()
    return r.status, len(await r.bytes())


async def upload_async(client: Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(method, url).body_bytes(body).build().send()
    return r.status, bytes(await r.bytes())


@contextlib.asynccontextmanager
async def stream_async(
    client: Client, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    async with _with_body(client.request(method, url), content).build_streamed() as r:
        yield r.status, _aread(r.body_reader, chunk) if chunk else awhole(r.bytes)


async def close_async(client: Client) -> None:
    await client.close()


SYNC = sdk.SyncClient(
    "pyreqwest", make_client, request, upload, SyncClient.close, http2=True, protocol=protocol, stream=stream
)
# pyreqwest 0.15.1 aborts in interpreter finalization after async requests in about half the runs ("Fatal Python
# error: PyGILState_Release: thread state ... must be current"), after the document was printed.
ASYNC = sdk.AsyncClient(
    "pyreqwest",
    make_async_client,
    request_async,
    upload_async,
    close_async,
    exit_after_document=True,
    http2=True,
    protocol=protocol_async,
    stream=stream_async,
)
