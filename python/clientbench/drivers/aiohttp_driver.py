"""Python `aiohttp`, async: W tasks on one event loop, one `ClientSession` (own connection) per task."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterable, AsyncIterator
from types import SimpleNamespace
from typing import Any

import aiohttp

from .. import sdk
from .streaming import awhole

#: what aiohttp's tracing lets a plugin see: it makes a connection's TCP and TLS in one step
PHASES = ("connect+tls", "send", "wait", "receive")


def _mark(name: str) -> Any:
    """A TraceConfig callback that notes when its signal came, in the dict the request passed as its
    trace_request_ctx."""

    async def mark(session: aiohttp.ClientSession, ctx: SimpleNamespace, params: object) -> None:
        marks = ctx.trace_request_ctx
        if marks is not None:  # (a request whose phases are not recorded passes none)
            marks[name] = time.perf_counter_ns()

    return mark


def _tracing() -> aiohttp.TraceConfig:
    """--phases: aiohttp's request tracing, each signal's time noted."""
    config = aiohttp.TraceConfig()
    for name in ("connection_create_start", "connection_create_end", "connection_reuseconn", "request_headers_sent",
                 "request_chunk_sent", "request_end"):  # fmt: skip
        getattr(config, f"on_{name}").append(_mark(name))
    return config


async def make_client(opts: sdk.Options) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        # one keep-alive connection per task's session, W for the shared one
        connector=aiohttp.TCPConnector(limit=sdk.pool_size(opts), ssl=sdk.ssl_context(opts)),
        timeout=aiohttp.ClientTimeout(total=opts.timeout),
        trust_env=False,
    )


#: the tracing a recorded request runs with: every signal a session is configured with costs each of its requests,
#: so a session has it only while a request whose phases are recorded runs (one in SAMPLE_EVERY)
TRACING = _tracing()
TRACING.freeze()  # (as a session freezes the configs it is given)


async def request(session: aiohttp.ClientSession, url: str) -> tuple[int, int]:
    if sdk.recording():
        return await _traced(session, url)
    async with session.get(url) as r:
        body = await r.read()  # the whole body
        return r.status, len(body)


async def _traced(session: aiohttp.ClientSession, url: str) -> tuple[int, int]:
    """A GET whose phases aiohttp's tracing shows: connect+tls (the connection made), send (the connection ready to
    the request sent), wait (to the response's head read: aiohttp signals the head parsed, not its first byte),
    receive (to the body read)."""
    marks: dict[str, int] = {}
    session._trace_configs = [TRACING]  # aiohttp's own list (a shared session's other requests pass no marks)
    try:
        async with session.get(url, trace_request_ctx=marks) as r:
            body = await r.read()
            end = time.perf_counter_ns()
    finally:
        session._trace_configs = []
    if "connection_create_end" in marks:
        sdk.phase("connect+tls", marks["connection_create_end"] - marks["connection_create_start"])
    ready = marks.get("connection_create_end", marks.get("connection_reuseconn"))
    sent = marks.get("request_chunk_sent", marks.get("request_headers_sent"))
    head = marks.get("request_end")
    if ready is not None and sent is not None and head is not None:
        sdk.phase("send", sent - ready)
        sdk.phase("wait", head - sent)
        sdk.phase("receive", end - head)
    return r.status, len(body)


async def upload(session: aiohttp.ClientSession, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    async with session.request(method, url, data=body) as r:
        return r.status, await r.read()


@contextlib.asynccontextmanager
async def stream(
    session: aiohttp.ClientSession,
    method: str,
    url: str,
    content: bytes | AsyncIterable[bytes] | None,
    chunk: int | None,
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    """The body read by content.iter_chunked(C); an async iterator as `data` is sent chunked."""
    async with session.request(method, url, data=content) as r:
        yield r.status, r.content.iter_chunked(chunk) if chunk else awhole(r.read)


ASYNC = sdk.AsyncClient(
    "aiohttp",
    make_client,
    request,
    upload,
    aiohttp.ClientSession.close,
    version=aiohttp.__version__,
    stream=stream,
    phases=PHASES,
)
