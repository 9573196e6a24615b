"""Python `httpx`: sync (`httpx.Client` per thread) or async (`httpx.AsyncClient` per task)."""

from __future__ import annotations

import argparse

import httpx

from .. import harness


def _limits() -> httpx.Limits:
    return httpx.Limits(max_connections=1, max_keepalive_connections=1)


def make_client(args: argparse.Namespace) -> httpx.Client:
    return httpx.Client(timeout=args.timeout, limits=_limits(), trust_env=False, verify=harness.ssl_context(args))


def request(client: httpx.Client, url: str) -> tuple[int, int]:
    r = client.get(url)
    return r.status_code, len(r.content)


def upload(client: httpx.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(method, url, content=body)
    return r.status_code, r.content


async def make_async_client(args: argparse.Namespace) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=args.timeout, limits=_limits(), trust_env=False, verify=harness.ssl_context(args))


async def request_async(client: httpx.AsyncClient, url: str) -> tuple[int, int]:
    r = await client.get(url)
    return r.status_code, len(r.content)


async def upload_async(client: httpx.AsyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(method, url, content=body)
    return r.status_code, r.content


async def close_async(client: httpx.AsyncClient) -> None:
    await client.aclose()


def main(argv: list[str] | None = None) -> None:
    args = harness.parser(__doc__ or "", modes=("sync", "async")).parse_args(argv)
    info = {"language": "Python", "library": "httpx", "library_version": httpx.__version__, "gil": None}
    harness.run(
        args,
        info,
        harness.SyncDriver(make_client, request, lambda c: c.close(), upload),
        harness.AsyncDriver(make_async_client, request_async, close_async, upload_async),
    )


if __name__ == "__main__":
    main()
