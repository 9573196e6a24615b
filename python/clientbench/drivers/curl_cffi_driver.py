"""Python `curl_cffi` (libcurl-impersonate via cffi): sync (`Session` per thread) or async (`AsyncSession`
per task)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

from curl_cffi import CurlHttpVersion, CurlInfo, CurlOpt
from curl_cffi import requests as cr

from .. import sdk
from .timings import CURL_TIMES, PHASES, curl_info_phases

#: libcurl's times of a transfer, which the sessions put in each response's `infos` with --phases
INFOS = [getattr(CurlInfo, name) for name in CURL_TIMES]

#: libcurl's CURLINFO_HTTP_VERSION values
VERSIONS = {
    int(CurlHttpVersion.V1_0): "HTTP/1.0",
    int(CurlHttpVersion.V1_1): "HTTP/1.1",
    3: "HTTP/2",
    int(CurlHttpVersion.V3): "HTTP/3",
}


def _tls(opts: sdk.Options) -> dict[str, Any]:
    """curl's own options: CAINFO for --ca-file, no verification for --insecure; the HTTP version asked for
    (libcurl offers h2 over TLS by default): ALPN h2 over https, prior knowledge over http; HTTP/3 only (its
    libcurl has ngtcp2 and nghttp3): QUIC straight away, no attempt over TCP beside it, so no fallback."""
    options = {CurlOpt.CAINFO: opts.ca_file} if opts.ca_file else None
    version = CurlHttpVersion.V1_1
    if sdk.http2(opts):
        version = CurlHttpVersion.V2TLS if opts.url.startswith("https:") else CurlHttpVersion.V2_PRIOR_KNOWLEDGE
    elif sdk.http3(opts):
        version = CurlHttpVersion.V3ONLY
    infos = {"curl_infos": INFOS} if getattr(opts, "phases", False) else {}
    return {"verify": not opts.insecure, "curl_options": options, "http_version": version, **infos}


def _method(method: str) -> Any:
    """The method as curl_cffi's annotations want it (a Literal), whether or not curl_cffi is installed."""
    return method


def make_client(opts: sdk.Options) -> cr.Session[cr.Response]:
    s: cr.Session[cr.Response] = cr.Session(timeout=opts.timeout, trust_env=False, **_tls(opts))
    return s


def request(session: cr.Session[cr.Response], url: str) -> tuple[int, int]:
    r = session.get(url)
    if r.infos and sdk.recording():  # --phases
        curl_info_phases(r.infos, INFOS)
    return r.status_code, len(r.content)


def upload(session: cr.Session[cr.Response], url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = session.request(_method(method), url, data=body)
    return r.status_code, r.content


def protocol(session: cr.Session[cr.Response], url: str) -> str | None:
    return VERSIONS.get(int(session.get(url).http_version))


@contextlib.contextmanager
def stream(
    session: cr.Session[cr.Response], method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    """session.stream(): the body by iter_content() in the pieces libcurl writes (curl_cffi cannot ask libcurl for
    a size: a chunk_size it ignores, with a warning); an iterator as `content` is read by libcurl (chunked)."""
    if chunk is None:
        r = session.request(_method(method), url, content=content)
        yield r.status_code, (r.content,)
        return
    with session.stream(_method(method), url, content=content) as s:
        streamed: Any = s  # (iter_content is unannotated)
        yield streamed.status_code, streamed.iter_content()


async def make_async_client(opts: sdk.Options) -> cr.AsyncSession[cr.Response]:
    n = sdk.pool_size(opts)
    return cr.AsyncSession(timeout=opts.timeout, trust_env=False, max_clients=n, **_tls(opts))


async def protocol_async(session: cr.AsyncSession[cr.Response], url: str) -> str | None:
    return VERSIONS.get(int((await session.get(url)).http_version))


async def request_async(session: cr.AsyncSession[cr.Response], url: str) -> tuple[int, int]:
    r = await session.get(url)
    if r.infos and sdk.recording():
        curl_info_phases(r.infos, INFOS)
    return r.status_code, len(r.content)


async def upload_async(session: cr.AsyncSession[cr.Response], url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await session.request(_method(method), url, data=body)
    return r.status_code, r.content


@contextlib.asynccontextmanager
async def stream_async(
    session: cr.AsyncSession[cr.Response],
    method: str,
    url: str,
    content: bytes | AsyncIterable[bytes] | None,
    chunk: int | None,
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    if chunk is None:
        r = await session.request(_method(method), url, content=content)
        yield r.status_code, _one(r.content)
        return
    async with session.stream(_method(method), url, content=content) as s:
        a: Any = s  # (aiter_content is unannotated)
        yield a.status_code, a.aiter_content()


async def _one(body: bytes) -> AsyncIterator[bytes]:
    yield body


async def close_async(session: cr.AsyncSession[cr.Response]) -> None:
    await session.close()


# not shareable: a Session gives every thread a curl handle, and so a connection, of its own, which would be W
# per-worker clients under a shared name; curl_cffi 0.17's CurlShare can share the connection cache, but only for
# serialized use (libcurl does not share connections between concurrent threads). The AsyncSession multiplexes its
# tasks on one curl multi handle.
SYNC = sdk.SyncClient(
    "curl_cffi",
    make_client,
    request,
    upload,
    cr.Session.close,
    shareable=False,
    http2=True,
    http3=True,
    protocol=protocol,
    stream=stream,
    phases=PHASES,
)
ASYNC = sdk.AsyncClient(
    "curl_cffi",
    make_async_client,
    request_async,
    upload_async,
    close_async,
    http2=True,
    http3=True,
    protocol=protocol_async,
    stream=stream_async,
    phases=PHASES,
)
