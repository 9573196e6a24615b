"""The binding clients behind one synchronous interface, for the tests that run every case against each:
beast_client.Client, reqwest_client.Client, and each binding's AsyncClient driven on an event loop of its own."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import ModuleType
from typing import Any

import beast_client
import reqwest_client

PROTOCOL_ERRORS = (beast_client.ProtocolError, reqwest_client.ProtocolError)


class AsyncAdapter:
    """A binding's AsyncClient, each call run to completion on the adapter's own event loop."""

    def __init__(self, module: ModuleType, timeout: float | None, **options: Any):
        self.loop = asyncio.new_event_loop()
        self.client = module.AsyncClient(timeout=timeout, **options)

    def get(self, url: str) -> int:
        return self.loop.run_until_complete(self.client.get(url))  # type: ignore[no-any-return]

    def fetch_len(self, url: str) -> tuple[int, int]:
        return self.loop.run_until_complete(self.client.fetch_len(url))  # type: ignore[no-any-return]

    def fetch(self, url: str, **kw: Any) -> tuple[int, bytes]:
        return self.loop.run_until_complete(self.client.fetch(url, **kw))  # type: ignore[no-any-return]

    def request(self, method: str, url: str, **kw: Any) -> Any:
        return self.loop.run_until_complete(self.client.request(method, url, **kw))

    def stream_read(self, method: str, url: str, **kw: Any) -> tuple[int, bytes]:
        """`(status, body)` of `client.stream(...)`, its body read with aread()."""

        async def run() -> tuple[int, bytes]:
            async with self.client.stream(method, url, **kw) as s:
                return s.status, await s.aread()

        return self.loop.run_until_complete(run())

    @property
    def tls_info(self) -> Any:
        return self.client.tls_info

    def close(self) -> None:
        self.client.close()
        self.loop.close()


FACTORIES: dict[str, Callable[..., Any]] = {
    "beast": lambda timeout, **options: beast_client.Client(timeout=timeout, **options),
    "beast-async": lambda timeout, **options: AsyncAdapter(beast_client, timeout, **options),
    "reqwest": lambda timeout, **options: reqwest_client.Client(timeout=timeout, **options),
    "reqwest-async": lambda timeout, **options: AsyncAdapter(reqwest_client, timeout, **options),
}

#: the binding module of each kind (its ProtocolError, TLSError, ...)
MODULES: dict[str, ModuleType] = {
    "beast": beast_client,
    "beast-async": beast_client,
    "reqwest": reqwest_client,
    "reqwest-async": reqwest_client,
}

#: the two bindings' modules by name, for the tests parametrized over the bindings themselves
BINDINGS: dict[str, ModuleType] = {"beast": beast_client, "reqwest": reqwest_client}

#: the kinds that are each binding's synchronous Client, named after their binding: a test of the modules
#: themselves, or of what only Client has, runs on these (bindings/tests/conftest.py: `@pytest.mark.kinds(*SYNC)`)
SYNC: tuple[str, ...] = tuple(BINDINGS)


def make(kind: str, timeout: float | None, **options: Any) -> Any:
    """A client of `kind` (a key of FACTORIES) with these constructor options, tagged with `.kind`."""
    c = FACTORIES[kind](timeout, **options)
    c.kind = kind
    return c


def is_async(kind: str) -> bool:
    """Whether `kind` (a key of FACTORIES) is an AsyncClient (no release_gil, no last_body_bytes)."""
    return kind.endswith("-async")


def binding_of(kind: str) -> str:
    """The binding ("beast" or "reqwest") of a kind of FACTORIES."""
    return kind.removesuffix("-async")
