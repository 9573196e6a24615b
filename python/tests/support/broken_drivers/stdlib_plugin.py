"""A correct plugin on Python's own http.client (clientbench.sdk): what the broken drivers next to it start
from, so that each fails check-driver only by what it breaks (test_check_driver.py checks this one passes)."""

from __future__ import annotations

import http.client
import platform
import ssl
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


def request(c: Connection, url: str) -> tuple[int, int]:
    status, body = c.fetch(url)
    return status, len(body)


def upload(c: Connection, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    return c.fetch(url, method, body)


plugin = sdk.SyncClient(
    "http.client", Connection, request, upload, lambda c: c.conn.close(), version=platform.python_version()
)
