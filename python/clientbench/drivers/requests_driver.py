"""Python `requests`, sync: W threads, one `requests.Session` (own keep-alive connection) per thread."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import requests

from .. import sdk
from .streaming import whole


def make_client(opts: sdk.Options) -> requests.Session:
    session = requests.Session()
    if sdk.pool_size(opts) > 1:  # shared by W threads: a pool as large (requests' default keeps 10)
        adapter = requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=sdk.pool_size(opts), pool_block=True)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
    session.trust_env = False
    session.verify = sdk.verify(opts)  # no proxy / netrc lookups: measure the client, not the environment
    session.timeout = opts.timeout  # type: ignore[attr-defined]  # read back in request()
    return session


def request(session: requests.Session, url: str) -> tuple[int, int]:
    r = session.get(url, timeout=session.timeout)  # type: ignore[attr-defined]
    return r.status_code, len(r.content)  # .content reads the whole body


def upload(session: requests.Session, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = session.request(method, url, data=body, timeout=session.timeout)  # type: ignore[attr-defined]
    return r.status_code, r.content


@contextlib.contextmanager
def stream(
    session: requests.Session, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    """stream=True: the body read by iter_content(C) as it arrives; an iterator as `data` is sent chunked."""
    with session.request(method, url, data=content, stream=True, timeout=session.timeout) as r:  # type: ignore[attr-defined]
        yield r.status_code, r.iter_content(chunk) if chunk else whole(r.content)


# HTTP/1.1 only (http2=False); a Session serves the threads of an application (urllib3's pool is thread-safe)
SYNC = sdk.SyncClient(
    "requests", make_client, request, upload, requests.Session.close, version=requests.__version__, stream=stream
)
