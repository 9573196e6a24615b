"""The plugins of `httpx` and of its maintained fork `httpx2`, which keeps its API: one definition, given the
module (each driver module imports its own library, so a row needs only its own package installed)."""

from __future__ import annotations

import contextlib
import importlib.util
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from types import ModuleType
from typing import Any

from .. import sdk
from .streaming import awhole, whole
from .timings import PHASES, async_trace_marks, trace_marks, trace_phases


def plugins(lib: ModuleType) -> tuple[sdk.SyncClient[Any], sdk.AsyncClient[Any]]:
    """`lib.Client` per thread and `lib.AsyncClient` per task (one for all with --client-scope shared)."""
    # HTTP/2 needs the h2 package (python/requirements-peers.txt)
    http2 = importlib.util.find_spec("h2") is not None

    def options(opts: sdk.Options) -> dict[str, Any]:
        """One connection per worker's client, W for the shared one; HTTP/2 with the h2 package: ALPN over
        https (http1 stays offered), prior knowledge over http (http1 off)."""
        n = sdk.pool_size(opts)
        h2 = sdk.http2(opts)
        return {
            "timeout": opts.timeout,
            "limits": lib.Limits(max_connections=n, max_keepalive_connections=n),
            "trust_env": False,
            "verify": sdk.ssl_context(opts),
            "http2": h2,
            "http1": not (h2 and opts.url.startswith("http:")),
        }

    def make_client(opts: sdk.Options) -> Any:
        return lib.Client(**options(opts))

    def request(client: Any, url: str) -> tuple[int, int]:
        if sdk.recording():  # --phases: httpcore's trace events
            marks, trace = trace_marks()
            r = client.get(url, extensions={"trace": trace})
            n = len(r.content)
            trace_phases(marks, time.perf_counter_ns())
            return r.status_code, n
        r = client.get(url)
        return r.status_code, len(r.content)

    def upload(client: Any, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        r = client.request(method, url, content=body)
        return r.status_code, r.content

    def protocol(client: Any, url: str) -> str:
        return str(client.get(url).http_version)

    @contextlib.contextmanager
    def stream(
        client: Any, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
    ) -> Iterator[tuple[int, Iterable[bytes]]]:
        """client.stream(): the body read by iter_bytes(C); an iterator as `content` is sent chunked."""
        with client.stream(method, url, content=content) as r:
            yield r.status_code, r.iter_bytes(chunk) if chunk else whole(r.read())

    async def make_async_client(opts: sdk.Options) -> Any:
        return lib.AsyncClient(**options(opts))

    async def request_async(client: Any, url: str) -> tuple[int, int]:
        if sdk.recording():
            marks, trace = async_trace_marks()
            r = await client.get(url, extensions={"trace": trace})
            n = len(r.content)
            trace_phases(marks, time.perf_counter_ns())
            return r.status_code, n
        r = await client.get(url)
        return r.status_code, len(r.content)

    async def upload_async(client: Any, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        r = await client.request(method, url, content=body)
        return r.status_code, r.content

    async def protocol_async(client: Any, url: str) -> str:
        return str((await client.get(url)).http_version)

    @contextlib.asynccontextmanager
    async def stream_async(
        client: Any, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
    ) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
        """As stream(), with aiter_bytes(C) and an async iterator as `content`."""
        async with client.stream(method, url, content=content) as r:
            yield r.status_code, r.aiter_bytes(chunk) if chunk else awhole(r.aread)

    name, version = lib.__name__, lib.__version__
    sync = sdk.SyncClient(
        name,
        make_client,
        request,
        upload,
        lib.Client.close,
        version=version,
        http2=http2,
        protocol=protocol,
        stream=stream,
        phases=PHASES,
    )
    async_ = sdk.AsyncClient(
        name,
        make_async_client,
        request_async,
        upload_async,
        lib.AsyncClient.aclose,
        version=version,
        http2=http2,
        protocol=protocol_async,
        stream=stream_async,
        phases=PHASES,
    )
    return sync, async_
