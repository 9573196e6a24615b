"""The fixtures of all three suites (registered by each conftest.py: `pytest_plugins = ("support.fixtures",)`)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import pytest
from clientbench.run.server import Server

from .rawserver import Handler, RawServer


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    """The real axum server on an ephemeral loopback port (target/release/clientbench-server, `make build`);
    requests go to `server.url + "/..."`."""
    with Server() as s:
        yield s


@pytest.fixture()
def closed_port_url() -> str:
    """A loopback URL nobody listens on: bind an ephemeral port, then close it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


@pytest.fixture()
def raw_server() -> Iterator[Callable[[Handler], RawServer]]:
    """Factory: `raw_server(handler)` starts a RawServer (support/rawserver.py), closed after the test."""
    servers: list[RawServer] = []

    def start(handler: Handler) -> RawServer:
        servers.append(RawServer(handler))
        return servers[-1]

    yield start
    for s in servers:
        s.close()
