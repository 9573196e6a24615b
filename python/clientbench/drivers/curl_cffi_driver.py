"""Python `curl_cffi` (libcurl-impersonate via cffi): sync (`Session` per thread) or async (`AsyncSession`
per task)."""

from __future__ import annotations

import argparse
from typing import Any

from curl_cffi import CurlOpt
from curl_cffi import requests as cr

from .. import harness


def _tls(args: argparse.Namespace) -> dict[str, Any]:
    """curl's own options: CAINFO for --ca-file, no verification for --insecure."""
    options = {CurlOpt.CAINFO: args.ca_file} if args.ca_file else None
    return {"verify": not args.insecure, "curl_options": options}


def _method(method: str) -> Any:
    """The method as curl_cffi's annotations want it (a Literal), whether or not curl_cffi is installed."""
    return method


def make_client(args: argparse.Namespace) -> cr.Session[cr.Response]:
    s: cr.Session[cr.Response] = cr.Session(timeout=args.timeout, trust_env=False, **_tls(args))
    return s


def request(session: cr.Session[cr.Response], url: str) -> tuple[int, int]:
    r = session.get(url)
    return r.status_code, len(r.content)


def upload(session: cr.Session[cr.Response], url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = session.request(_method(method), url, data=body)
    return r.status_code, r.content


async def make_async_client(args: argparse.Namespace) -> cr.AsyncSession[cr.Response]:
    return cr.AsyncSession(timeout=args.timeout, trust_env=False, max_clients=1, **_tls(args))


async def request_async(session: cr.AsyncSession[cr.Response], url: str) -> tuple[int, int]:
    r = await session.get(url)
    return r.status_code, len(r.content)


async def upload_async(session: cr.AsyncSession[cr.Response], url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await session.request(_method(method), url, data=body)
    return r.status_code, r.content


async def close_async(session: cr.AsyncSession[cr.Response]) -> None:
    await session.close()


def main(argv: list[str] | None = None) -> None:
    args = harness.parser(__doc__ or "", modes=("sync", "async")).parse_args(argv)
    info = {"language": "Python", "library": "curl_cffi", "library_version": harness.version("curl_cffi"), "gil": None}
    harness.run(
        args,
        info,
        harness.SyncDriver(make_client, request, lambda s: s.close(), upload),
        harness.AsyncDriver(make_async_client, request_async, close_async, upload_async),
    )


if __name__ == "__main__":
    main()
