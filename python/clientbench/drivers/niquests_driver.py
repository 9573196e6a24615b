"""Python `niquests` (requests' successor, on urllib3-future): sync (`niquests.Session` per thread) or async
(`niquests.AsyncSession` per task)."""

from __future__ import annotations

from typing import Any

import niquests

from .. import sdk


def _options(opts: sdk.Options) -> dict[str, Any]:
    # one connection per worker; retries=0 (niquests' default): every failure is the request's own
    return {"pool_connections": 1, "pool_maxsize": 1, "retries": 0, "timeout": opts.timeout}


def make_client(opts: sdk.Options) -> niquests.Session:
    session = niquests.Session(**_options(opts))
    session.trust_env = False  # no proxy / netrc lookups: measure the client, not the environment
    session.verify = sdk.verify(opts)
    return session


def request(session: niquests.Session, url: str) -> tuple[int, int]:
    r = session.get(url)
    return int(r.status_code or 0), len(r.content or b"")  # .content reads the whole body


def upload(session: niquests.Session, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = session.request(method, url, data=body)
    return int(r.status_code or 0), r.content or b""


async def make_async_client(opts: sdk.Options) -> niquests.AsyncSession:
    session = niquests.AsyncSession(**_options(opts))
    session.trust_env = False
    session.verify = sdk.verify(opts)
    return session


async def request_async(session: niquests.AsyncSession, url: str) -> tuple[int, int]:
    r = await session.get(url)
    return int(r.status_code or 0), len(r.content or b"")


async def upload_async(session: niquests.AsyncSession, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = await session.request(method, url, data=body)
    return int(r.status_code or 0), r.content or b""


SYNC = sdk.SyncClient("niquests", make_client, request, upload, niquests.Session.close, version=niquests.__version__)
ASYNC = sdk.AsyncClient(
    "niquests",
    make_async_client,
    request_async,
    upload_async,
    niquests.AsyncSession.close,
    version=niquests.__version__,
)
