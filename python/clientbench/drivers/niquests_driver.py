"""Python `niquests` (requests' successor, on urllib3-future): sync (`niquests.Session` per thread) or async
(`niquests.AsyncSession` per task)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

import niquests

from .. import sdk
from .streaming import awhole, whole


def _options(opts: sdk.Options) -> dict[str, Any]:
    """One connection per worker's session (W for the shared one over HTTP/1.1); retries=0 (niquests' default):
    every failure is the request's own. niquests offers h2 over TLS by default: the version asked for, exactly
    (HTTP/2: ALPN over https, prior knowledge over http; HTTP/3: HTTP/1.1 and 2 off, which makes qh3's QUIC its
    first and only try, with no Alt-Svc needed and no fallback to TCP), HTTP/3 only when asked for. Over HTTP/2
    and 3 the pool holds one connection, whose streams the threads or tasks of a shared session multiplex: a
    larger pool would open a connection per concurrent request instead."""
    h2, h3 = sdk.http2(opts), sdk.http3(opts)
    n = 1 if h2 or h3 else sdk.pool_size(opts)
    versions = {
        "disable_http1": h3 or (h2 and opts.url.startswith("http:")),
        "disable_http2": not h2,
        "disable_http3": not h3,
    }
    return {"pool_connections": 1, "pool_maxsize": n, "retries": 0, "timeout": opts.timeout, **versions}


def make_client(opts: sdk.Options) -> niquests.Session:
    session = niquests.Session(**_options(opts))
    session.trust_env = False  # no proxy / netrc lookups: measure the client, not the environment
    session.verify = sdk.verify(opts)
    return session


def request(session: niquests.Session, url: str) -> tuple[int, int]:
    r = session.get(url)
    return int(r.status_code or 0), len(r.content or b"")  # .content reads the whole body


def upload(session: niquests.Session, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = session.request(method, url, data=body)
    return int(r.status_code or 0), r.content or b""


@contextlib.contextmanager
def stream(
    session: niquests.Session, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    """stream=True: the body read by iter_content(C) as it arrives; an iterator as `data` is sent chunked."""
    with session.request(method, url, data=content, stream=True) as r:
        yield int(r.status_code or 0), r.iter_content(chunk) if chunk else whole(r.content or b"")


def protocol(session: niquests.Session, url: str) -> str:
    return _version(session.get(url).http_version)


def _version(number: int | None) -> str:
    """urllib3-future's version numbers: 11, 20, 30."""
    return {10: "HTTP/1.0", 11: "HTTP/1.1", 20: "HTTP/2", 30: "HTTP/3"}.get(number or 0, str(number))


async def make_async_client(opts: sdk.Options) -> niquests.AsyncSession:
    session = niquests.AsyncSession(**_options(opts))
    session.trust_env = False
    session.verify = sdk.verify(opts)
    return session


async def request_async(session: niquests.AsyncSession, url: str) -> tuple[int, int]:
    r = await session.get(url)
    return int(r.status_code or 0), len(r.content or b"")


async def upload_async(session: niquests.AsyncSession, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await session.request(method, url, data=body)
    return int(r.status_code or 0), r.content or b""


@contextlib.asynccontextmanager
async def stream_async(
    session: niquests.AsyncSession,
    method: str,
    url: str,
    content: bytes | AsyncIterable[bytes] | None,
    chunk: int | None,
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    """As stream(): `await r.iter_content(C)`, an async iterator as `data`."""
    r = await session.request(method, url, data=content, stream=True)
    try:

        async def read() -> bytes:
            return await r.content or b""  # an AsyncResponse's content is awaited

        yield int(r.status_code or 0), await r.iter_content(chunk) if chunk else awhole(read)
    finally:
        await r.close()


async def protocol_async(session: niquests.AsyncSession, url: str) -> str:
    return _version((await session.get(url)).http_version)


SYNC = sdk.SyncClient(
    "niquests",
    make_client,
    request,
    upload,
    niquests.Session.close,
    version=niquests.__version__,
    http2=True,
    http3=True,
    protocol=protocol,
    stream=stream,
)
ASYNC = sdk.AsyncClient(
    "niquests",
    make_async_client,
    request_async,
    upload_async,
    niquests.AsyncSession.close,
    version=niquests.__version__,
    http2=True,
    http3=True,
    protocol=protocol_async,
    stream=stream_async,
)
