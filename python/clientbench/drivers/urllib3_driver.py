"""Python `urllib3`, sync: W threads, one `HTTPConnectionPool` of size 1 (one connection) per thread."""

from __future__ import annotations

import argparse

import urllib3
from urllib3.util import parse_url

from . import harness


def make_client(args: argparse.Namespace) -> urllib3.HTTPConnectionPool:
    u = parse_url(args.url)
    if u.scheme != "http" or not u.host:
        raise ValueError(f"unsupported URL {args.url!r}")
    return urllib3.HTTPConnectionPool(
        u.host, u.port or 80, maxsize=1, block=True, retries=False, timeout=urllib3.Timeout(total=args.timeout)
    )


def request(pool: urllib3.HTTPConnectionPool, url: str) -> tuple[int, int]:
    r = pool.request("GET", url, preload_content=True)  # reads the whole body
    return r.status, len(r.data)


def main(argv: list[str] | None = None) -> None:
    args = harness.parser(__doc__ or "").parse_args(argv)
    info = {"language": "Python", "library": "urllib3", "library_version": harness.version("urllib3"), "gil": None}
    harness.run(args, info, harness.SyncDriver(make_client, request, lambda p: p.close()))


if __name__ == "__main__":
    main()
