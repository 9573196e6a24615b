"""Python `aiohttp`, async: W tasks on one event loop, one `ClientSession` (own connection) per task."""

from __future__ import annotations

import argparse

import aiohttp

from .. import harness


async def make_client(args: argparse.Namespace) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=1, ssl=harness.ssl_context(args)),  # one keep-alive connection
        timeout=aiohttp.ClientTimeout(total=args.timeout),
        trust_env=False,
    )


async def request(session: aiohttp.ClientSession, url: str) -> tuple[int, int]:
    async with session.get(url) as r:
        body = await r.read()  # the whole body
        return r.status, len(body)


async def upload(session: aiohttp.ClientSession, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    async with session.request(method, url, data=body) as r:
        return r.status, await r.read()


async def close(session: aiohttp.ClientSession) -> None:
    await session.close()


def main(argv: list[str] | None = None) -> None:
    p = harness.parser(__doc__ or "")
    p.add_argument(
        "--loop", choices=["asyncio", "uvloop"], default="asyncio", help="event loop implementation (default asyncio)"
    )
    args = p.parse_args(argv)
    info = {
        "language": "Python",
        "library": "aiohttp",
        "library_version": aiohttp.__version__,
        "mode": "async",
        "gil": None,
    }
    loop_factory = None
    if args.loop == "uvloop":
        import uvloop

        loop_factory = uvloop.new_event_loop
        info["library"] = "aiohttp+uvloop"
        info["library_version"] = f"{aiohttp.__version__} (uvloop {harness.version('uvloop')})"
    harness.run(args, info, async_=harness.AsyncDriver(make_client, request, close, upload), loop_factory=loop_factory)


if __name__ == "__main__":
    main()
