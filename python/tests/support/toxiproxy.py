"""Network faults through toxiproxy (build/bin/toxiproxy-server, `make toxiproxy`) in front of the real axum
server, for the tests of the bindings (bindings/tests/test_network_faults.py) and of the native drivers
(python/tests/test_network_faults.py). A fixture plugin, registered by the repository's conftest.py.

Each test gets a proxy of its own (`proxied(*toxics)`: a unique name, deleted afterwards); one
toxiproxy-server runs per test module, and none may outlive it (`started_pids` checks at the end of the
module)."""

from __future__ import annotations

import itertools
import os
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from clientbench.environment.binaries import Unavailable
from clientbench.execution.server import Server
from clientbench.execution.toxiproxy import Toxiproxy, toxiproxy_binary

BIG = 1_000_000  # /bytes/BIG through 100 KB/s: 10 s, far longer than any timeout here
N = 100_000
LIMIT = 50_000  # limit_data: the response is cut after this many bytes
CLOSE_DELAY_MS = 2000  # slow_close
CUT_AFTER = 0.3  # reset_proxy: seconds into the response
RESET_TIMEOUT = 5.0


def missing() -> str | None:
    """Why toxiproxy-server cannot run here (a test module skips with it), or None (`make test` builds it)."""
    try:
        binary = toxiproxy_binary()
    except Unavailable as exc:  # not built: the message says where it was looked for, and how to build it
        return str(exc)
    return None if os.access(binary, os.X_OK) else f"toxiproxy-server at {binary} is not executable"


def pattern(n: int) -> bytes:
    """What GET /bytes/{n} returns: byte i is b'a' + i % 26."""
    return (bytes(range(ord("a"), ord("z") + 1)) * (n // 26 + 1))[:n]


def toxic(
    kind: str, stream: str = "downstream", *, name: str | None = None, toxicity: float = 1.0, **attrs: Any
) -> dict[str, Any]:
    return {
        "name": name or f"{kind}_{stream}",
        "type": kind,
        "stream": stream,
        "toxicity": toxicity,
        "attributes": attrs,
    }


# 64..448-byte segments, 200 us apart (toxiproxy's timers make it ~1 ms): ~400 segments per response
SLICER = toxic("slicer", average_size=256, size_variation=192, delay=200)


def reset_proxy(proxied: Callable[..., tuple[str, str]], toxiproxy: Toxiproxy) -> tuple[str, Callable[[], None]]:
    """A proxy that resets its connection mid-response when the returned `cut()` is called: (base URL, cut).

    toxiproxy's reset_peer swallows the first chunk it sees, so it cannot sit in the chain from the start of a
    response that must partly arrive. The proxy starts with a reset_peer of toxicity 0 (a no-op, but its
    presence makes toxiproxy set SO_LINGER 0 on the connection, so that a close is a RST) and a 100 KB/s
    bandwidth limit; cut() adds a second reset_peer: the next chunk is dropped and the connection reset."""
    name, base = proxied(
        toxic("reset_peer", name="arm", toxicity=0.0, timeout=0),
        toxic("bandwidth", rate=100),
    )
    return base, lambda: toxiproxy.add_toxic(name, toxic("reset_peer", name="cut", timeout=0))


# -- the toxiproxy-server processes ----------------------------------------------------------------


def toxiproxy_pids() -> set[int]:
    """Every running toxiproxy-server process (from /proc), zombies excluded."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")[0]
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmd.endswith(b"toxiproxy-server") and state != "Z":
            pids.add(int(entry.name))
    return pids


def alive(pid: int) -> bool:
    return pid in toxiproxy_pids()


def parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


# -- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def started_pids() -> Iterator[list[int]]:
    """The pids of the toxiproxy-server processes this module started; after the module's other fixtures are
    torn down, none of them may still run."""
    pids: list[int] = []
    yield pids
    left = [p for p in pids if alive(p)]
    assert not left, f"toxiproxy-server still running after the module: {left}"


@pytest.fixture(scope="module")
def axum() -> Iterator[Server]:
    with Server() as s:
        yield s


@pytest.fixture(scope="module")
def toxiproxy(started_pids: list[int], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toxiproxy]:
    tp = Toxiproxy(log=tmp_path_factory.mktemp("toxiproxy") / "toxiproxy.log")
    tp.start()
    assert tp.proc is not None
    started_pids.append(tp.proc.pid)
    try:
        yield tp
    finally:
        tp.stop()


_names = itertools.count(1)


@pytest.fixture()
def proxied(axum: Server, toxiproxy: Toxiproxy) -> Iterator[Callable[..., tuple[str, str]]]:
    """`proxied(*toxics)` -> (name, base URL) of a new proxy to the server with these toxics; deleted
    (with its connections) after the test."""
    made: list[str] = []

    def make(*toxics: dict[str, Any]) -> tuple[str, str]:
        name = f"netfault{os.getpid()}_{next(_names)}"
        listen = toxiproxy.proxy(name, axum.url.partition("://")[2])
        made.append(name)
        for t in toxics:
            toxiproxy.add_toxic(name, t)
        return name, f"http://{listen}"

    yield make
    for name in made:
        req = urllib.request.Request(f"{toxiproxy.api}/proxies/{name}", method="DELETE")
        with urllib.request.urlopen(req, timeout=5):
            pass
