"""Python `aiohttp`, async: W tasks on one event loop, one `ClientSession` (own connection) per task."""

from __future__ import annotations

import argparse

import aiohttp

from . import _common


async def make_client(args: argparse.Namespace) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=1),  # one keep-alive connection per worker
        timeout=aiohttp.ClientTimeout(total=args.timeout),
        trust_env=False,
    )


async def request(session: aiohttp.ClientSession, url: str) -> tuple[int, int]:
    async with session.get(url) as r:
        body = await r.read()  # the whole body
        return r.status, len(body)


async def close(session: aiohttp.ClientSession) -> None:
    await session.close()


def main(argv: list[str] | None = None) -> None:
    args = _common.parser(__doc__ or "").parse_args(argv)
    info = {"language": "Python", "library": "aiohttp", "library_version": aiohttp.__version__,
            "mode": "async", "gil": None}
    _common.emit(_common.AsyncDriver(make_client, request, close).run(args, info))


if __name__ == "__main__":
    main()
