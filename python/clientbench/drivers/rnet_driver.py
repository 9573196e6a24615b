"""Python `rnet` (Rust, from PyPI): sync (`BlockingClient` per thread) or async (`Client` per task)."""

from __future__ import annotations

import argparse
from importlib.metadata import version
from pathlib import Path

import rnet

from .. import harness

METHODS = {"POST": rnet.Method.POST, "PUT": rnet.Method.PUT}


def _verify(args: argparse.Namespace) -> bool | Path:
    return False if args.insecure else Path(args.ca_file) if args.ca_file else True


def make_client(args: argparse.Namespace) -> rnet.BlockingClient:
    return rnet.BlockingClient(timeout=int(max(1, round(args.timeout))), no_proxy=True, verify=_verify(args))


def request(client: rnet.BlockingClient, url: str) -> tuple[int, int]:
    r = client.get(url)
    try:
        return int(r.status), len(r.bytes())
    finally:
        r.close()


def upload(client: rnet.BlockingClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(METHODS[method], url, body=body)
    try:
        return int(r.status), bytes(r.bytes())
    finally:
        r.close()


async def make_async_client(args: argparse.Namespace) -> rnet.Client:
    return rnet.Client(timeout=int(max(1, round(args.timeout))), no_proxy=True, verify=_verify(args))


async def request_async(client: rnet.Client, url: str) -> tuple[int, int]:
    r = await client.get(url)
    try:
        return int(r.status), len(await r.bytes())
    finally:
        await r.close()


async def upload_async(client: rnet.Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(METHODS[method], url, body=body)
    try:
        return int(r.status), bytes(await r.bytes())
    finally:
        await r.close()


async def close_async(client: rnet.Client) -> None:
    return None  # rnet clients have no close(); dropping the client closes its pool


def main(argv: list[str] | None = None) -> None:
    args = harness.parser(__doc__ or "", modes=("sync", "async")).parse_args(argv)
    info = {"language": "Python", "library": "rnet", "library_version": version("rnet"), "gil": None}
    harness.run(
        args,
        info,
        harness.SyncDriver(make_client, request, upload=upload),
        harness.AsyncDriver(make_async_client, request_async, close_async, upload_async),
    )
    # rnet 2.4.2 segfaults in its runtime teardown at interpreter exit after async requests with larger
    # bodies (seen with /bytes/1000000: ~80% of runs), after the document has been printed. Skip the teardown.
    harness.skip_teardown()


if __name__ == "__main__":
    main()
