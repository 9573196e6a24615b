"""The fixtures of every test suite, registered once for all of them by the repository's conftest.py
(`pytest_plugins = ("support.fixtures",)`)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from clientbench.execution.server import Server

from .dualserver import DualHandler, DualServer, make_pki
from .httpapp import App, running
from .rawserver import Handler, RawServer


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    """The real axum server on an ephemeral loopback port (target/release/clientbench-server, `make build`);
    requests go to `server.url + "/..."`."""
    with Server() as s:
        yield s


@pytest.fixture(scope="session")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The axum server over HTTPS (`--tls`), its throw-away CA in `server.ca_file`; `server.url` is https://."""
    with Server(tls=True, tls_dir=tmp_path_factory.mktemp("server-tls")) as s:
        assert s.url.startswith("https://") and s.ca_file
        yield s


@pytest.fixture()
def http_app() -> Iterator[App]:
    """An application on Python's own http.server (support/httpapp.py), stopped after the test."""
    with running() as app:
        yield app


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


@pytest.fixture(scope="session")
def dual_pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The CA, leaf certificate and key of `dual_server` (support/dualserver.py; made with the openssl CLI)."""
    try:
        return make_pki(tmp_path_factory.mktemp("dual-pki"))
    except FileNotFoundError as e:
        pytest.skip(str(e))


@pytest.fixture()
def dual_server(dual_pki: tuple[Path, Path, Path]) -> Iterator[Callable[[DualHandler], DualServer]]:
    """Factory: `dual_server(handler)` starts a DualServer (TLS and plain HTTP on one port, support/dualserver.py)
    whose `handler(conn, tls)` runs for every connection; closed after the test."""
    servers: list[DualServer] = []

    def start(handler: DualHandler) -> DualServer:
        servers.append(DualServer(handler, dual_pki))
        return servers[-1]

    yield start
    for s in servers:
        s.close()
