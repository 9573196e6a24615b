"""The plugins of `rnet` and of its successor `wreq` (both on Rust's reqwest, from PyPI), which keep one API
but for how a client is configured and how a response is read and closed: one definition, given what differs
(each driver module imports its own library, so a row needs only its own package installed)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .. import sdk
from .streaming import awhole, whole


def versions(opts: sdk.Options) -> dict[str, bool]:
    """The HTTP version asked for (reqwest offers h2 over TLS by default): HTTP/1.1 only, or HTTP/2 by ALPN over
    https and with prior knowledge (http2_only) over http."""
    if not sdk.http2(opts):
        return {"http1_only": True}
    return {} if opts.url.startswith("https:") else {"http2_only": True}


def version_name(version: object) -> str:
    """Version.HTTP_2 -> HTTP/2"""
    name = str(version).rsplit(".", 1)[-1]
    return {"HTTP_10": "HTTP/1.0", "HTTP_11": "HTTP/1.1", "HTTP_2": "HTTP/2", "HTTP_3": "HTTP/3"}.get(name, name)


def config(opts: sdk.Options, timeout: Any, verify_key: str) -> dict[str, Any]:
    """The client's keywords: `timeout` as the library takes it, the TLS flags under `verify_key`, one
    connection per worker's client (W for the shared one), no proxy from the environment."""
    verify: bool | Path = False if opts.insecure else Path(opts.ca_file) if opts.ca_file else True
    n = sdk.pool_size(opts)
    return {
        "timeout": timeout,
        "no_proxy": True,
        verify_key: verify,
        "pool_max_idle_per_host": n,
        "pool_max_size": n,
        **versions(opts),
    }


@contextlib.contextmanager
def closing(response: Any) -> Iterator[Any]:
    """A response that is closed by its close() rather than as a context manager (rnet's)."""
    try:
        yield response
    finally:
        response.close()


@contextlib.asynccontextmanager
async def aclosing(response: Any) -> AsyncIterator[Any]:
    """closing() for an async response whose close() is a coroutine (rnet's)."""
    try:
        yield response
    finally:
        await response.close()


def _data(streamer: Iterable[Any]) -> Iterator[bytes]:
    """A Streamer's body pieces (bytes, or wreq's memoryviews), without the trailers wreq's may end with."""
    for piece in streamer:
        if isinstance(piece, bytes | memoryview):
            yield piece  # type: ignore[misc]  # a memoryview is compared and measured as bytes


async def _adata(streamer: AsyncIterable[Any]) -> AsyncIterator[bytes]:
    async for piece in streamer:
        if isinstance(piece, bytes | memoryview):
            yield piece  # type: ignore[misc]


def plugins(
    library: str,
    lib: Any,
    sync_client: Callable[..., Any],
    async_client: Callable[..., Any],
    *,
    make_config: Callable[[sdk.Options], dict[str, Any]],
    status: Callable[[Any], int],
    opened: Callable[[Any], Any] = lambda r: r,
    aopened: Callable[[Any], Any] = lambda r: r,
    close: Callable[[Any], None] | None = None,
    aclose: Callable[[Any], Any] | None = None,
    exit_after_document: bool = False,
    async_streams: tuple[str, ...] = ("upload", "download"),
) -> tuple[sdk.SyncClient[Any], sdk.AsyncClient[Any]]:
    """`sync_client` per thread and `async_client` per task (one for all with --client-scope shared), made with
    `make_config(opts)`. A response is used inside `opened(response)` (sync) or `aopened(response)` (async), which
    close it; `status(response)` is its status as an int; `async_streams` the directions the async client
    streams."""
    methods = {"GET": lib.Method.GET, "POST": lib.Method.POST, "PUT": lib.Method.PUT}

    def make_client(opts: sdk.Options) -> Any:
        return sync_client(**make_config(opts))

    def request(client: Any, url: str) -> tuple[int, int]:
        with opened(client.get(url)) as r:
            return status(r), len(r.bytes())

    def upload(client: Any, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        with opened(client.request(methods[method], url, body=body)) as r:
            return status(r), bytes(r.bytes())

    def protocol(client: Any, url: str) -> str:
        with opened(client.get(url)) as r:
            return version_name(r.version)

    @contextlib.contextmanager
    def stream(
        client: Any, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
    ) -> Iterator[tuple[int, Iterable[bytes]]]:
        """The response's stream(): its pieces as the library reads them (it takes no chunk size); a generator
        as `body` is sent chunked."""
        body = {} if content is None else {"body": content}
        with opened(client.request(methods[method], url, **body)) as r:
            if chunk is None:
                yield status(r), whole(r.bytes())
                return
            with r.stream() as streamer:
                yield status(r), _data(streamer)

    async def make_async_client(opts: sdk.Options) -> Any:
        return async_client(**make_config(opts))

    async def request_async(client: Any, url: str) -> tuple[int, int]:
        async with aopened(await client.get(url)) as r:
            return status(r), len(await r.bytes())

    async def upload_async(client: Any, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        async with aopened(await client.request(methods[method], url, body=body)) as r:
            return status(r), bytes(await r.bytes())

    async def protocol_async(client: Any, url: str) -> str:
        async with aopened(await client.get(url)) as r:
            return version_name(r.version)

    @contextlib.asynccontextmanager
    async def stream_async(
        client: Any, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
    ) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
        body = {} if content is None else {"body": content}
        async with aopened(await client.request(methods[method], url, **body)) as r:
            if chunk is None:
                yield status(r), awhole(r.bytes)
                return
            async with r.stream() as streamer:
                yield status(r), _adata(streamer)

    flags: dict[str, Any] = {"exit_after_document": exit_after_document, "http2": True}
    sync = sdk.SyncClient(library, make_client, request, upload, close, protocol=protocol, stream=stream, **flags)
    async_ = sdk.AsyncClient(
        library,
        make_async_client,
        request_async,
        upload_async,
        aclose,
        protocol=protocol_async,
        stream=stream_async,
        streams=async_streams,
        **flags,
    )
    return sync, async_
