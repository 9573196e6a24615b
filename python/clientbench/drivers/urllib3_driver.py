"""Python `urllib3`, sync: W threads, one `HTTP(S)ConnectionPool` of size 1 (one connection) per thread."""

from __future__ import annotations

import argparse

import urllib3
from urllib3.util import parse_url

from .. import harness


def make_client(args: argparse.Namespace) -> urllib3.HTTPConnectionPool:
    u = parse_url(args.url)
    if u.scheme not in ("http", "https") or not u.host:
        raise ValueError(f"unsupported URL {args.url!r}")
    timeout = urllib3.Timeout(total=args.timeout)
    if u.scheme == "http":
        return urllib3.HTTPConnectionPool(u.host, u.port or 80, maxsize=1, block=True, retries=False, timeout=timeout)
    harness.verify(args)  # (quiets urllib3's warning with --insecure)
    return urllib3.HTTPSConnectionPool(
        u.host,
        u.port or 443,
        maxsize=1,
        block=True,
        retries=False,
        timeout=timeout,
        cert_reqs="CERT_NONE" if args.insecure else "CERT_REQUIRED",
        ca_certs=args.ca_file,
    )


def request(pool: urllib3.HTTPConnectionPool, url: str) -> tuple[int, int]:
    r = pool.request("GET", url, preload_content=True)  # reads the whole body
    return r.status, len(r.data)


def upload(pool: urllib3.HTTPConnectionPool, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = pool.request(method, url, body=body, preload_content=True)
    return r.status, r.data


def main(argv: list[str] | None = None) -> None:
    args = harness.parser(__doc__ or "").parse_args(argv)
    info = {"language": "Python", "library": "urllib3", "library_version": harness.version("urllib3"), "gil": None}
    harness.run(args, info, harness.SyncDriver(make_client, request, lambda p: p.close(), upload))


if __name__ == "__main__":
    main()
