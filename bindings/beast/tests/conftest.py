"""Fixtures for the beast_client tests: the real axum server and a tiny raw-socket server."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

# `clientbench` (server control, drivers) lives in python/ of the checkout; use the installed package
# when there is one, else the checkout's copy.
try:
    import clientbench  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python"))

from clientbench.server import Server  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for beast_test_helpers (unique module name)
from beast_test_helpers import RawServer  # noqa: E402


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    """The real axum server on an ephemeral loopback port (`cargo build --release -p clientbench-server`)."""
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
def raw_server() -> Iterator[Callable[[Callable[[socket.socket], None]], RawServer]]:
    """Factory: raw_server(handler) -> RawServer, closed at the end of the test."""
    servers: list[RawServer] = []

    def make(handler: Callable[[socket.socket], None]) -> RawServer:
        s = RawServer(handler)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()
