"""A correct plugin on Python's own http.client (clientbench.sdk): what the broken drivers next to it start
from, so that each fails check-driver only by what it breaks (test_check_driver.py checks this one passes)."""

from __future__ import annotations

import contextlib
import http.client
import platform
import ssl
from collections.abc import Iterable, Iterator
from urllib.parse import urlsplit

from clientbench import sdk


class Connection:
    """One keep-alive connection (http.client connects at the first request, and again after a close)."""

    def __init__(self, opts: sdk.Options):
        u = urlsplit(opts.url)
        if u.scheme == "https":
            context = sdk.ssl_context(opts) or ssl._create_unverified_context()
            self.conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                u.hostname or "", u.port or 443, timeout=opts.timeout, context=context
            )
        else:
            self.conn = http.client.HTTPConnection(u.hostname or "", u.port or 80, timeout=opts.timeout)

    def fetch(self, url: str, method: str = "GET", body: bytes | None = None) -> tuple[int, bytes]:
        u = urlsplit(url)
        try:
            self.conn.request(method, (u.path or "/") + (f"?{u.query}" if u.query else ""), body=body)
            r = self.conn.getresponse()
            return r.status, r.read()
        except BaseException:
            self.conn.close()  # the next request opens a new connection
            raise

    @contextlib.contextmanager
    def stream(
        self, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
    ) -> Iterator[tuple[int, Iterable[bytes]]]:
        """The streamed form: an iterator body is sent chunked by http.client, the answer read by read(C)."""
        u = urlsplit(url)
        try:
            self.conn.request(method, (u.path or "/") + (f"?{u.query}" if u.query else ""), body=content)
            r = self.conn.getresponse()
            yield r.status, _pieces(r, chunk) if chunk else (r.read(),)
            if not r.isclosed():  # not read to its end: the connection is in the middle of a body
                self.conn.close()
        except BaseException:
            self.conn.close()
            raise


def _pieces(r: http.client.HTTPResponse, chunk: int) -> Iterator[bytes]:
    while piece := r.read(chunk):
        yield piece


def request(c: Connection, url: str) -> tuple[int, int]:
    status, body = c.fetch(url)
    return status, len(body)


def upload(c: Connection, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    return c.fetch(url, method, body)


plugin = sdk.SyncClient(
    "http.client",
    Connection,
    request,
    upload,
    lambda c: c.conn.close(),
    version=platform.python_version(),
    stream=Connection.stream,
)
