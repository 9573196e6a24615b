"""Python `impit` (Apify's client on Rust's reqwest and rustls, from PyPI): sync (`impit.Client` per thread) or async
(`impit.AsyncClient` per task), without a browser fingerprint (impit's default).

What impit cannot be asked for, and how the rows live with it:
- a CA file: impit's verifier (rustls-platform-verifier, built once per process with the first client) reads the
  system's roots, which `SSL_CERT_FILE` replaces, beside webpki's roots it embeds. With --ca-file the plugin sets
  `SSL_CERT_FILE` before it builds its first client, so that CA is trusted (with webpki's public roots);
- HTTP/2: without a fingerprint impit offers no ALPN protocol (so HTTP/1.1 over TLS) and has no prior knowledge
  over http: `--http 2` is unsupported;
- HTTP/3 with prior knowledge: a client made with `http3=True` moves to QUIC only after a response's Alt-Svc
  header (which the project's server does not send), unless a request says `force_http3=True` (reqwest's
  `http3_prior_knowledge`): with `--http 3` the plugin's client is impit's with every method given that keyword
  (`_Http3`), so every request goes over QUIC, none over TCP first;
- a pool size: reqwest's pool keeps every idle connection, so a worker's client holds its one connection and a
  shared client opens one per concurrent request, up to W;
- a short body's class: impit raises `RemoteProtocolError` ("Remote protocol error occurred.") for exactly a
  connection closed before the end of the message (hyper's IncompleteMessage, an unexpected EOF in the body: its
  errors.rs), which the contract calls a ConnectionError; the plugin re-raises it as one, the name kept.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

import impit

from .. import sdk
from .streaming import awhole, whole


def _trust(opts: sdk.Options) -> bool:
    """impit's `verify`; with --ca-file, `SSL_CERT_FILE` for the verifier its first client builds."""
    if opts.ca_file:
        # read once, when the first client builds impit's verifier: every client of this process has this CA
        os.environ["SSL_CERT_FILE"] = opts.ca_file
    return not opts.insecure


class _Http3:
    """An impit client (sync or async) whose requests all say `force_http3=True`, the methods the plugin calls
    bound to it once, so that a request costs what it costs the HTTP/1.1 rows but for the keyword."""

    def __init__(self, client: Any) -> None:
        self.get = functools.partial(client.get, force_http3=True)
        self.request = functools.partial(client.request, force_http3=True)
        self.stream = functools.partial(client.stream, force_http3=True)


def _client(cls: Any, opts: sdk.Options) -> Any:
    """timeout: connect to the end of the body (reqwest's total timeout); no redirects, no cookies (impit's
    defaults); with --http 3 a client with HTTP/3, each request with prior knowledge."""
    if sdk.http3(opts):
        return _Http3(cls(timeout=opts.timeout, verify=_trust(opts), http3=True))
    return cls(timeout=opts.timeout, verify=_trust(opts))


def make_client(opts: sdk.Options) -> impit.Client:
    client: impit.Client = _client(impit.Client, opts)
    return client


def _closed(exc: impit.RemoteProtocolError) -> ConnectionError:
    return ConnectionError(f"RemoteProtocolError: {exc} (a connection closed before the end of the response)")


def request(client: impit.Client, url: str) -> tuple[int, int]:
    try:
        r = client.get(url)  # not streamed: the whole body is read
    except impit.RemoteProtocolError as exc:
        raise _closed(exc) from exc
    return r.status_code, len(r.content)


def upload(client: impit.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    try:
        r = client.request(method, url, content=body)
    except impit.RemoteProtocolError as exc:
        raise _closed(exc) from exc
    return r.status_code, r.content


def protocol(client: impit.Client, url: str) -> str:
    return str(client.get(url).http_version)


@contextlib.contextmanager
def stream(
    client: impit.Client, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    """client.stream(): the body's pieces by iter_bytes() as impit reads them (it takes no chunk size); an iterator
    as `content` is sent chunked."""
    try:
        with client.stream(method, url, content=content) as r:
            yield r.status_code, r.iter_bytes() if chunk else whole(r.read())
    except impit.RemoteProtocolError as exc:  # (raised by the harness's reads too, inside the block)
        raise _closed(exc) from exc


async def make_async_client(opts: sdk.Options) -> impit.AsyncClient:
    client: impit.AsyncClient = _client(impit.AsyncClient, opts)
    return client


async def protocol_async(client: impit.AsyncClient, url: str) -> str:
    return str((await client.get(url)).http_version)


async def request_async(client: impit.AsyncClient, url: str) -> tuple[int, int]:
    try:
        r = await client.get(url)
    except impit.RemoteProtocolError as exc:
        raise _closed(exc) from exc
    return r.status_code, len(r.content)


async def upload_async(client: impit.AsyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    try:
        r = await client.request(method, url, content=body)
    except impit.RemoteProtocolError as exc:
        raise _closed(exc) from exc
    return r.status_code, r.content


@contextlib.asynccontextmanager
async def stream_async(
    client: impit.AsyncClient, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    try:
        async with client.stream(method, url, content=content) as r:
            yield r.status_code, r.aiter_bytes() if chunk else awhole(r.aread)
    except impit.RemoteProtocolError as exc:
        raise _closed(exc) from exc


# impit's clients have no close(): dropping one closes its pool
SYNC = sdk.SyncClient("impit", make_client, request, upload, http3=True, protocol=protocol, stream=stream)
# impit 0.15.1 aborts (SIGABRT, nothing on stderr) in interpreter finalization after async requests in about 1 run
# of 6 (3 tasks x 6 requests of /bytes/100000), after the document was printed.
ASYNC = sdk.AsyncClient(
    "impit",
    make_async_client,
    request_async,
    upload_async,
    exit_after_document=True,
    http3=True,
    protocol=protocol_async,
    stream=stream_async,
)
