"""Python `httpr` (Rust's reqwest behind an httpx-like API, from PyPI): sync (`httpr.Client` per thread) or async
(`httpr.AsyncClient` per task).

What httpr is, and what it cannot be asked for:
- its AsyncClient is its sync client run in a thread pool of its own (`run_in_executor`; `max_concurrency`, 64 by
  default, sizes that pool): the async row measures that, one client and so one pool per task;
- its timeout bounds the wait for the headers and then for each piece of the body, not the whole request: the
  harness counts a request that ended later than --timeout as a TimeoutError (the contract's rule);
- its exceptions carry reqwest's top-level message only ("error sending request for url (...)"), without the
  cause: a failed TLS handshake is the same `ConnectError` as a refused connection, so an untrusted certificate is
  counted as a ConnectionError, as httpr reports it;
- a pool size: reqwest's pool keeps every idle connection (httpr has no option for it), so a worker's client holds
  its one connection and a shared client opens one per concurrent request over HTTP/1.1, up to W;
- a streamed upload: its `content` is bytes only (an iterator is a TypeError): the rows stream downloads only
  (`stream()`, `iter_bytes()` / `aiter_bytes()` in the pieces httpr reads; it takes no chunk size).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

import httpr

from .. import sdk
from .streaming import awhole, whole


def _options(opts: sdk.Options) -> dict[str, Any]:
    """TLS (--ca-file added to the roots), and the HTTP version asked for: reqwest offers h2 over TLS by default, so
    HTTP/1.1 only, or HTTP/2 by ALPN over https and with prior knowledge over http."""
    h2 = sdk.http2(opts)
    return {
        "timeout": opts.timeout,
        "verify": not opts.insecure,
        "ca_cert_file": opts.ca_file,
        "http1_only": not h2,
        "http2_only": h2 and opts.url.startswith("http:"),
    }


def _method(method: str) -> Any:
    """POST or PUT as httpr's annotations want it (a Literal), whether or not httpr is installed where mypy runs."""
    return method


def make_client(opts: sdk.Options) -> httpr.Client:
    return httpr.Client(**_options(opts))


def request(client: httpr.Client, url: str) -> tuple[int, int]:
    r = client.get(url)  # not streamed: the body is read before it returns
    return r.status_code, len(r.content)


def upload(client: httpr.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(_method(method), url, content=body)
    return r.status_code, r.content


def protocol(client: httpr.Client, url: str) -> str:
    return str(client.get(url).http_version)


def _content(content: object) -> dict[str, Any]:
    assert content is None or isinstance(content, bytes)  # downloads only: never an iterator
    return {} if content is None else {"content": content}


@contextlib.contextmanager
def stream(
    client: httpr.Client, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    with client.stream(_method(method), url, **_content(content)) as r:
        yield r.status_code, r.iter_bytes() if chunk else whole(r.read())


async def make_async_client(opts: sdk.Options) -> httpr.AsyncClient:
    return httpr.AsyncClient(**_options(opts))


async def request_async(client: httpr.AsyncClient, url: str) -> tuple[int, int]:
    r = await client.get(url)
    return r.status_code, len(r.content)


async def upload_async(client: httpr.AsyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(_method(method), url, content=body)
    return r.status_code, r.content


async def protocol_async(client: httpr.AsyncClient, url: str) -> str:
    return str((await client.get(url)).http_version)


@contextlib.asynccontextmanager
async def stream_async(
    client: httpr.AsyncClient, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    async with client.stream(_method(method), url, **_content(content)) as r:
        s: Any = r  # (its stub lacks the async iteration httpr's StreamingResponse has)
        yield r.status_code, s.aiter_bytes() if chunk else awhole(s.aread)


async def close_async(client: httpr.AsyncClient) -> None:
    await client.aclose()


DOWNLOADS = ("download",)  # content is bytes only
SYNC = sdk.SyncClient(
    "httpr",
    make_client,
    request,
    upload,
    httpr.Client.close,
    http2=True,
    protocol=protocol,
    stream=stream,
    streams=DOWNLOADS,
)
ASYNC = sdk.AsyncClient(
    "httpr",
    make_async_client,
    request_async,
    upload_async,
    close_async,
    http2=True,
    protocol=protocol_async,
    stream=stream_async,
    streams=DOWNLOADS,
)
