"""Python `urllib3`, sync: W threads, one `HTTP(S)ConnectionPool` of size 1 (one connection) per thread."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator

import urllib3
from urllib3.util import parse_url

from .. import sdk
from .streaming import whole


def make_client(opts: sdk.Options) -> urllib3.HTTPConnectionPool:
    u = parse_url(opts.url)
    if u.scheme not in ("http", "https") or not u.host:
        raise ValueError(f"unsupported URL {opts.url!r}")
    timeout = urllib3.Timeout(total=opts.timeout)
    if u.scheme == "http":
        return urllib3.HTTPConnectionPool(
            u.host, u.port or 80, maxsize=sdk.pool_size(opts), block=True, retries=False, timeout=timeout
        )
    sdk.verify(opts)  # (quiets urllib3's warning with --insecure)
    return urllib3.HTTPSConnectionPool(
        u.host,
        u.port or 443,
        maxsize=sdk.pool_size(opts),
        block=True,
        retries=False,
        timeout=timeout,
        cert_reqs="CERT_NONE" if opts.insecure else "CERT_REQUIRED",
        ca_certs=opts.ca_file,
    )


@functools.lru_cache(maxsize=4096)
def target(url: str) -> str:
    """The request line's target, `/path?query`: a connection pool sends what it is given there, and a whole URL
    is the absolute form meant for proxies, which servers such as Python's http.server answer with 404. Once per
    URL: the harness's work, not urllib3's."""
    return parse_url(url).request_uri


def request(pool: urllib3.HTTPConnectionPool, url: str) -> tuple[int, int]:
    r = pool.request("GET", target(url), preload_content=True)  # reads the whole body
    return r.status, len(r.data)


def upload(pool: urllib3.HTTPConnectionPool, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = pool.request(method, target(url), body=body, preload_content=True)
    return r.status, r.data


@contextlib.contextmanager
def stream(
    pool: urllib3.HTTPConnectionPool, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    """preload_content=False: the body read by stream(C) as it arrives; an iterator as `body` is sent chunked."""
    r = pool.request(method, target(url), body=content, preload_content=False)
    try:
        yield r.status, r.stream(chunk) if chunk else whole(r.read())
    except BaseException:
        r.close()  # a body not read to its end: its connection is not reused
        raise
    finally:
        r.release_conn()


SYNC = sdk.SyncClient("urllib3", make_client, request, upload, urllib3.HTTPConnectionPool.close, stream=stream)
