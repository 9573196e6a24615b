"""Python `primp` (Rust, reqwest and rustls forks that impersonate browsers, from PyPI): sync (`primp.Client` per
thread) or async (`primp.AsyncClient` per task), without impersonation (primp's default).

What primp cannot be asked for, and how the rows live with it:
- HTTP/1.1 over TLS: primp offers h2 and http/1.1 by ALPN on every TLS connection and has no HTTP/1.1-only
  switch, so over https its rows speak HTTP/2 where the server offers it, whatever `--http` says; and its
  responses do not say their HTTP version. So over https its documents report no protocol (`client.protocol`
  absent, with a note) rather than the HTTP/1.1 the row was asked for. Over http it speaks HTTP/1.1, and with
  `--http 2` HTTP/2 by prior knowledge (`http2_only`), whose responses can only be HTTP/2;
- a pool size: reqwest's pool keeps every idle connection, so a worker's client holds its one connection and a
  shared client opens one per concurrent request over HTTP/1.1, up to W;
- a streamed upload: its `content` is bytes only (no iterator, no file): the rows stream downloads only
  (`stream=True`, `iter_bytes(C)`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import primp

from .. import harness, sdk
from .streaming import awhole, whole

#: why a row over https reports no protocol (the document's client.notes)
TLS_NOTE = "over https primp offers h2 by ALPN whatever --http says, and does not say which version it got"


def _options(opts: sdk.Options) -> dict[str, Any]:
    """timeout: connect to the end of the body; --ca-file added to primp's roots; with --http 2 over http, prior
    knowledge (over https ALPN offers h2 anyway)."""
    return {
        "timeout": opts.timeout,
        "verify": not opts.insecure,
        "ca_cert_file": opts.ca_file,
        "http2_only": sdk.http2(opts) and opts.url.startswith("http:"),
    }


def _unlabelled(args: sdk.Options, doc: dict[str, Any]) -> dict[str, Any]:
    """The document without the protocol primp cannot tell over https (the harness writes the one asked for)."""
    if args.url.startswith("https:"):
        doc["client"].pop("protocol", None)
        doc["client"]["notes"] = TLS_NOTE
    return doc


class _SyncDriver(harness.SyncDriver[Any]):
    def run(self, args: sdk.Options, client_info: dict[str, Any]) -> dict[str, Any]:
        return _unlabelled(args, super().run(args, client_info))


class _AsyncDriver(harness.AsyncDriver[Any]):
    def run(self, args: sdk.Options, client_info: dict[str, Any], loop_factory: Any = None) -> dict[str, Any]:
        return _unlabelled(args, super().run(args, client_info, loop_factory))


@dataclass(frozen=True)
class _SyncPlugin(sdk.SyncClient[Any]):
    def driver(self) -> harness.SyncDriver[Any]:
        return _SyncDriver(**vars(super().driver()))


@dataclass(frozen=True)
class _AsyncPlugin(sdk.AsyncClient[Any]):
    def driver(self) -> harness.AsyncDriver[Any]:
        return _AsyncDriver(**vars(super().driver()))


def make_client(opts: sdk.Options) -> primp.Client:
    return primp.Client(**_options(opts))


def request(client: primp.Client, url: str) -> tuple[int, int]:
    r = client.get(url)  # not streamed: the body is read before it returns
    return r.status_code, len(r.content)


def upload(client: primp.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(method, url, content=body)
    return r.status_code, r.content


def protocol(client: primp.Client, url: str) -> str | None:
    """Asked only with --http 2: over http prior knowledge, so a response is HTTP/2; over https unknown."""
    client.get(url)
    return "HTTP/2" if url.startswith("http:") else None


@contextlib.contextmanager
def stream(
    client: primp.Client, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    """stream=True: the body read by iter_bytes(C) as it arrives (`content` is bytes: downloads only)."""
    assert content is None or isinstance(content, bytes)
    with client.request(method, url, content=content, stream=True) as r:
        yield r.status_code, r.iter_bytes(chunk) if chunk else whole(r.read())


async def make_async_client(opts: sdk.Options) -> primp.AsyncClient:
    return primp.AsyncClient(**_options(opts))


async def request_async(client: primp.AsyncClient, url: str) -> tuple[int, int]:
    r = await client.get(url)
    return r.status_code, len(r.content)


async def upload_async(client: primp.AsyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(method, url, content=body)
    return r.status_code, r.content


async def protocol_async(client: primp.AsyncClient, url: str) -> str | None:
    await client.get(url)
    return "HTTP/2" if url.startswith("http:") else None


@contextlib.asynccontextmanager
async def stream_async(
    client: primp.AsyncClient, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    assert content is None or isinstance(content, bytes)
    async with await client.request(method, url, content=content, stream=True) as r:
        yield r.status_code, r.aiter_bytes(chunk) if chunk else awhole(r.aread)


# primp's clients have no close(): dropping one closes its pool
DOWNLOADS = ("download",)  # content is bytes only
SYNC = _SyncPlugin(
    "primp", make_client, request, upload, http2=True, protocol=protocol, stream=stream, streams=DOWNLOADS
)
ASYNC = _AsyncPlugin(
    "primp",
    make_async_client,
    request_async,
    upload_async,
    http2=True,
    protocol=protocol_async,
    stream=stream_async,
    streams=DOWNLOADS,
)
