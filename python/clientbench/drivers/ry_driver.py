"""Python `ry` (Rust bindings of many crates, from PyPI; its HTTP client is reqwest): sync (`ry.BlockingClient` per
thread) or async (`ry.Client` per task).

ry raises one exception class, `ReqwestError`, for every failure, its kind told by methods (`is_connect()`,
`is_timeout()`, ...): a connect failure (a refused connection, a failed TLS handshake) is re-raised as a
ConnectionError with reqwest's message, so that the harness classes it by its kind (a certificate failure stays a
TLSError: its message names the certificate); the other kinds carry words the harness knows ("TimedOut", "end of
file").
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any

import ry

from .. import sdk
from .streaming import awhole, whole


def _config(opts: sdk.Options) -> dict[str, Any]:
    """The timeout (connect to the end of the body), TLS (the CA file alone, or no verification), one idle
    connection per worker's client (W for the shared one), and the HTTP version asked for: reqwest offers h2 over
    TLS by default, so HTTP/1.1 only, or HTTP/2 by ALPN over https and with prior knowledge over http."""
    tls: dict[str, Any] = {}
    if opts.insecure:
        tls = {"tls_danger_accept_invalid_certs": True, "tls_danger_accept_invalid_hostnames": True}
    elif opts.ca_file:
        tls = {"tls_certs_only": ry.Certificate.from_pem_bundle(Path(opts.ca_file).read_bytes())}
    versions = {
        "http1_only": not sdk.http2(opts),
        "http2_prior_knowledge": sdk.http2(opts) and opts.url.startswith("http:"),
    }
    n = sdk.pool_size(opts)
    return {"timeout": ry.Duration.from_secs_f64(opts.timeout), "pool_max_idle_per_host": n, **tls, **versions}


def _method(method: str) -> Any:
    """POST or PUT as ry's annotations want it (a Literal), whether or not ry is installed where mypy runs."""
    return method


def _classified(exc: ry.ReqwestError) -> Exception:
    return ConnectionError(f"ReqwestError: {exc}") if exc.is_connect() else exc


def make_client(opts: sdk.Options) -> ry.BlockingClient:
    return ry.BlockingClient(**_config(opts))


def request(client: ry.BlockingClient, url: str) -> tuple[int, int]:
    try:
        r = client.get(url)
        return r.status, len(r.bytes())
    except ry.ReqwestError as exc:
        raise _classified(exc) from exc


def upload(client: ry.BlockingClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    try:
        r = client.fetch(url, method=_method(method), body=body)
        return r.status, bytes(r.bytes())
    except ry.ReqwestError as exc:
        raise _classified(exc) from exc


@contextlib.contextmanager
def stream(
    client: ry.BlockingClient, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    """fetch() and the response's bytes_stream(): its pieces as reqwest reads them (ry takes a minimum, not a
    maximum, size); an iterator as `body` is sent chunked."""
    try:
        body: dict[str, Any] = {} if content is None else {"body": content}  # (body=None is a TypeError)
        r: Any = client.fetch(url, method=_method(method), **body)  # its pieces: ry.Bytes, compared as bytes
        if chunk is None:
            yield r.status, whole(r.bytes())
            return
        with r.bytes_stream() as pieces:
            yield r.status, pieces
    except ry.ReqwestError as exc:  # (raised by the harness's reads too, inside the block)
        raise _classified(exc) from exc


def protocol(client: ry.BlockingClient, url: str) -> str:
    r = client.get(url)
    r.bytes()
    return str(r.version)


async def make_async_client(opts: sdk.Options) -> ry.Client:
    return ry.Client(**_config(opts))


async def request_async(client: ry.Client, url: str) -> tuple[int, int]:
    try:
        r = await client.get(url)
        return r.status, len(await r.bytes())
    except ry.ReqwestError as exc:
        raise _classified(exc) from exc


async def upload_async(client: ry.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    try:
        r = await client.fetch(url, method=_method(method), body=body)
        return r.status, bytes(await r.bytes())
    except ry.ReqwestError as exc:
        raise _classified(exc) from exc


@contextlib.asynccontextmanager
async def stream_async(
    client: ry.Client, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    try:
        body: dict[str, Any] = {} if content is None else {"body": content}
        r: Any = await client.fetch(url, method=_method(method), **body)
        if chunk is None:
            yield r.status, awhole(r.bytes)
            return
        async with r.bytes_stream() as pieces:
            yield r.status, pieces
    except ry.ReqwestError as exc:
        raise _classified(exc) from exc


async def protocol_async(client: ry.Client, url: str) -> str:
    r = await client.get(url)
    await r.bytes()
    return str(r.version)


# ry's clients have no close(): dropping one closes its pool. Its version is the distribution's (ry.__version__ too).
SYNC = sdk.SyncClient("ry", make_client, request, upload, http2=True, protocol=protocol, stream=stream)
ASYNC = sdk.AsyncClient(
    "ry", make_async_client, request_async, upload_async, http2=True, protocol=protocol_async, stream=stream_async
)
