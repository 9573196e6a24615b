"""The three binding clients under one sync interface, for the fault and fuzz tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import beast_client
import reqwest_client

PROTOCOL_ERRORS = (beast_client.ProtocolError, reqwest_client.ProtocolError)


class AsyncAdapter:
    """reqwest_client.AsyncClient driven synchronously on its own event loop."""

    def __init__(self, timeout: float):
        self.loop = asyncio.new_event_loop()
        self.client = reqwest_client.AsyncClient(timeout=timeout)

    def get(self, url: str) -> int:
        return self.loop.run_until_complete(self.client.get(url))

    def fetch_len(self, url: str) -> tuple[int, int]:
        return self.loop.run_until_complete(self.client.fetch_len(url))

    def request(self, method: str, url: str, **kw: Any) -> Any:
        return self.loop.run_until_complete(self.client.request(method, url, **kw))

    def close(self) -> None:
        self.client.close()
        self.loop.close()


FACTORIES: dict[str, Callable[[float], Any]] = {
    "beast": lambda t: beast_client.Client(timeout=t),
    "reqwest": lambda t: reqwest_client.Client(timeout=t),
    "reqwest-async": AsyncAdapter,
}
#: the binding module of each kind (its ProtocolError, ...)
MODULES = {"beast": beast_client, "reqwest": reqwest_client, "reqwest-async": reqwest_client}


def make(kind: str, timeout: float) -> Any:
    """A client of `kind` (a key of FACTORIES), tagged with `.kind`."""
    c = FACTORIES[kind](timeout)
    c.kind = kind
    return c
