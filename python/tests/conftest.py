from __future__ import annotations

import socket
from typing import Iterator

import pytest

from clientbench.server import Server


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    """The real axum server on an ephemeral loopback port (built by `make build`)."""
    with Server() as s:
        yield s


@pytest.fixture()
def closed_port_url() -> str:
    """A loopback URL nobody listens on: bind an ephemeral port, then close it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"
