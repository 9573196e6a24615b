"""Python `pyreqwest` (reqwest via PyO3, from PyPI): sync (`SyncClient` per thread) or async (`Client` per task)."""

from __future__ import annotations

import argparse
import datetime
from importlib.metadata import version
from typing import Any

from pyreqwest.client import Client, ClientBuilder, SyncClient, SyncClientBuilder

from .. import harness


def _timeout(args: argparse.Namespace) -> datetime.timedelta:
    return datetime.timedelta(seconds=args.timeout)


def _tls(builder: Any, args: argparse.Namespace) -> Any:
    if args.insecure:
        return builder.danger_accept_invalid_certs(True)
    if args.ca_file:
        with open(args.ca_file, "rb") as f:
            return builder.add_root_certificate_pem(f.read())
    return builder


def make_client(args: argparse.Namespace) -> SyncClient:
    # Annotated so mypy passes whether or not pyreqwest (a peer, not a lint dependency) is installed.
    client: SyncClient = _tls(SyncClientBuilder(), args).timeout(_timeout(args)).max_connections(1).build()
    return client


def request(client: SyncClient, url: str) -> tuple[int, int]:
    r = client.get(url).build().send()
    return r.status, len(r.bytes())


def upload(client: SyncClient, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = client.request(method, url).body_bytes(body).build().send()
    return r.status, bytes(r.bytes())


async def make_async_client(args: argparse.Namespace) -> Client:
    client: Client = _tls(ClientBuilder(), args).timeout(_timeout(args)).max_connections(1).build()
    return client


async def request_async(client: Client, url: str) -> tuple[int, int]:
    r = await client.get(url).build().send()
    return r.status, len(await r.bytes())


async def upload_async(client: Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await client.request(method, url).body_bytes(body).build().send()
    return r.status, bytes(await r.bytes())


async def close_async(client: Client) -> None:
    await client.close()


def main(argv: list[str] | None = None) -> None:
    args = harness.parser(__doc__ or "", modes=("sync", "async")).parse_args(argv)
    info = {"language": "Python", "library": "pyreqwest", "library_version": version("pyreqwest"), "gil": None}
    harness.run(
        args,
        info,
        harness.SyncDriver(make_client, request, lambda c: c.close(), upload),
        harness.AsyncDriver(make_async_client, request_async, close_async, upload_async),
    )
    if args.mode == "async":
        # pyreqwest 0.15.1 aborts in interpreter finalization after async requests in about half the runs
        # ("Fatal Python error: PyGILState_Release: thread state ... must be current"), after the document
        # was printed. Skip the teardown.
        harness.skip_teardown()


if __name__ == "__main__":
    main()
