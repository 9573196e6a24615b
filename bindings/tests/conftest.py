"""The fixtures of the bindings' shared tests, one scheme for every file here. (The servers, `server`,
`tls_server`, `http_app`, `raw_server`, `dual_server`, `closed_port_url` and the toxiproxy ones, come from the
repository's conftest.py: python/tests/support.)

- `kind`: the client a test runs against, a key of support.binding_clients.FACTORIES: "beast" and "reqwest" (each
  binding's Client), "beast-async" and "reqwest-async" (its AsyncClient, driven through a synchronous adapter). A
  test that takes it, or a fixture below, runs once per kind. `@pytest.mark.kinds(*SYNC)` on a test, or as a
  module's `pytestmark`, narrows it to the two Clients: one run per binding, named after it.
- `mod`: the binding module of `kind`, beast_client or reqwest_client (its Client, AsyncClient, error classes).
- `new`: `new(**options)` makes a client of `kind` with these options, closed after the test; its timeout is the
  test module's `T` (seconds) unless `timeout=` is given.
- `client`: `new()`.
- `capture`: a raw server that answers 200 to everything, counts the connections it accepted (`accepted`) and
  keeps the head of every request it read (`heads`).
- `dual`: the scripted application (status, Location and Set-Cookie from the URL) over http:// and https:// on
  one port (support/dualserver.py).
- `own_server`: an axum server of the test's own: its /stats count this test's connections alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.binding_clients import FACTORIES, MODULES, make
from support.dualserver import DualHandler, DualServer, scripted
from support.rawserver import RawServer, keep_alive


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kinds(*kinds): the client kinds a test runs against (default: all four)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrizes `kind` (taken by the test or by a fixture it takes) over the kinds of its `kinds` mark."""
    if "kind" not in metafunc.fixturenames:
        return
    mark = metafunc.definition.get_closest_marker("kinds")
    kinds = list(mark.args) if mark else list(FACTORIES)
    unknown = [k for k in kinds if k not in FACTORIES]
    assert kinds and not unknown, f"@pytest.mark.kinds: {unknown or 'none given'} (the kinds: {list(FACTORIES)})"
    metafunc.parametrize("kind", kinds)


@pytest.fixture()
def mod(kind: str) -> ModuleType:
    return MODULES[kind]


@pytest.fixture()
def new(kind: str, request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    made: list[Any] = []

    def factory(**options: Any) -> Any:
        if "timeout" not in options:
            assert hasattr(request.module, "T"), f"{request.module.__name__}: no T, the clients' default timeout"
            options["timeout"] = request.module.T
        made.append(make(kind, options.pop("timeout"), **options))
        return made[-1]

    yield factory
    for c in made:
        c.close()


@pytest.fixture()
def client(new: Callable[..., Any]) -> Any:
    return new()


@pytest.fixture()
def capture() -> Iterator[RawServer]:
    with RawServer(keep_alive) as s:
        yield s


@pytest.fixture()
def dual(dual_server: Callable[[DualHandler], DualServer]) -> DualServer:
    return dual_server(scripted)


@pytest.fixture()
def own_server() -> Iterator[Server]:
    with Server() as s:
        yield s
