"""Network faults through toxiproxy (build/bin/toxiproxy-server, `make toxiproxy`) in front of the real axum
server: a reset mid-response, a stalled connection, a response sliced into tiny segments, a response cut
short, a delayed close and a latency beyond the timeout.

For beast_client.Client, reqwest_client.Client and reqwest_client.AsyncClient: the documented exception
(TimeoutError, ConnectionError or the binding's ProtocolError) within the timeout, never a hang, never a
short success; for the native drivers (cpp-beast, rust-reqwest): every request counted as a failure whose
reason starts with the right class, or no failure and every body byte where the request must succeed.

Each test gets a proxy of its own (a unique name, deleted afterwards); one toxiproxy-server runs for the
module, and no toxiproxy-server process outlives its owner (checked at the end of the module, and for a
Testbed whose body raises)."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import beast_client
import pytest
import reqwest_client
from clientbench.run import testbed
from clientbench.run.clients import select
from clientbench.run.driver import run_driver
from clientbench.run.network import Network, Toxiproxy, toxiproxy_binary
from clientbench.run.server import Server
from clientbench.workload import Workload

if not (toxiproxy_binary().is_file() and os.access(toxiproxy_binary(), os.X_OK)):
    pytest.skip(
        f"toxiproxy-server not found at {toxiproxy_binary()}; build it with `make toxiproxy`",
        allow_module_level=True,
    )

SLACK = 1.5  # an error must arrive within its deadline + SLACK
BIG = 1_000_000  # /bytes/BIG through 100 KB/s: 10 s, far longer than any timeout here
N = 100_000


def pattern(n: int) -> bytes:
    """What GET /bytes/{n} returns: byte i is b'a' + i % 26."""
    return (bytes(range(ord("a"), ord("z") + 1)) * (n // 26 + 1))[:n]


def toxic(kind: str, stream: str = "downstream", *, name: str | None = None, toxicity: float = 1.0, **attrs: Any):
    return {
        "name": name or f"{kind}_{stream}",
        "type": kind,
        "stream": stream,
        "toxicity": toxicity,
        "attributes": attrs,
    }


# -- processes: the server, toxiproxy, and the check that no toxiproxy-server is left behind ----------


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


# -- the three binding clients behind one synchronous interface --------------------------------------


class AsyncOnItsLoop:
    """reqwest_client.AsyncClient, each call run to completion on an event loop of its own."""

    def __init__(self, timeout: float):
        self.loop = asyncio.new_event_loop()
        self.client = reqwest_client.AsyncClient(timeout=timeout)

    def get(self, url: str) -> int:
        return self.loop.run_until_complete(self.client.get(url))

    def fetch_len(self, url: str) -> tuple[int, int]:
        return self.loop.run_until_complete(self.client.fetch_len(url))

    def request(self, method: str, url: str) -> Any:
        return self.loop.run_until_complete(self.client.request(method, url))

    def close(self) -> None:
        self.client.close()
        self.loop.close()


KINDS: dict[str, tuple[Callable[[float], Any], type[OSError]]] = {
    "beast": (lambda t: beast_client.Client(timeout=t), beast_client.ProtocolError),
    "reqwest": (lambda t: reqwest_client.Client(timeout=t), reqwest_client.ProtocolError),
    "reqwest-async": (AsyncOnItsLoop, reqwest_client.ProtocolError),
}


@pytest.fixture(params=list(KINDS))
def make_client(request: pytest.FixtureRequest) -> Iterator[Callable[[float], Any]]:
    """`make_client(timeout)` -> a client of this kind (`.kind` set), closed after the test."""
    made: list[Any] = []

    def make(timeout: float) -> Any:
        c = KINDS[request.param][0](timeout)
        c.kind = request.param
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def ways(client: Any, url: str) -> dict[str, Callable[[], Any]]:
    """Every call that does one GET; each returns what a caller would take as the outcome."""
    return {
        "get": lambda: client.get(url),
        "fetch_len": lambda: client.fetch_len(url),
        "request": lambda: client.request("GET", url),
    }


def raises_within(fn: Callable[[], Any], exc: Any, limit: float, at_least: float = 0.0) -> BaseException:
    t0 = time.monotonic()
    with pytest.raises(exc) as info:
        outcome = fn()
        pytest.fail(f"returned {outcome!r} instead of raising")  # e.g. a short success
    took = time.monotonic() - t0
    assert at_least <= took < limit, f"{info.value!r} after {took:.2f}s"
    return info.value


def later(delay: float, fn: Callable[[], None]) -> threading.Timer:
    timer = threading.Timer(delay, fn)
    timer.daemon = True
    timer.start()
    return timer


# -- 1. reset mid-response ---------------------------------------------------------------------------
#
# toxiproxy's reset_peer swallows the first chunk it sees, so it cannot sit in the chain from the start of a
# response that must partly arrive. The proxy starts with a reset_peer of toxicity 0 (a no-op, but its presence
# makes toxiproxy set SO_LINGER 0 on the connection, so that a close is a RST) and a 100 KB/s bandwidth limit;
# CUT_AFTER s into the response, a second reset_peer is added: the next chunk is dropped and the connection reset.

CUT_AFTER = 0.3
RESET_TIMEOUT = 5.0


def reset_proxy(proxied: Callable[..., tuple[str, str]], toxiproxy: Toxiproxy) -> tuple[str, Callable[[], None]]:
    name, base = proxied(
        toxic("reset_peer", name="arm", toxicity=0.0, timeout=0),
        toxic("bandwidth", rate=100),
    )
    return base, lambda: toxiproxy.add_toxic(name, toxic("reset_peer", name="cut", timeout=0))


@pytest.mark.timeout(30)
def test_reset_mid_response(make_client, proxied, toxiproxy):
    client = make_client(RESET_TIMEOUT)
    base, cut = reset_proxy(proxied, toxiproxy)
    timer = later(CUT_AFTER, cut)
    err = raises_within(lambda: client.request("GET", f"{base}/bytes/{BIG}"), ConnectionResetError, CUT_AFTER + SLACK)
    timer.join(5)
    if client.kind == "beast":  # what arrived before the reset is counted: the reset was mid-body
        assert 0 < client.last_body_bytes < BIG, (client.last_body_bytes, err)
    # the proxy now resets every new connection at its first response byte: still a ConnectionError
    for way, fn in ways(client, f"{base}/").items():
        err = raises_within(fn, ConnectionResetError, SLACK)
        assert "127.0.0.1" in str(err), (way, err)


# -- 2. a stalled connection (timeout toxic, timeout=0: data dropped, nothing closes) -------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize("stream", ["downstream", "upstream"])
def test_stalled_connection_times_out(make_client, proxied, stream):
    """downstream: the request reached the server, the response never arrives; upstream: the request never
    reaches the server (every call for the first, get() for the second: a second each)."""
    _, base = proxied(toxic("timeout", stream, timeout=0))
    client = make_client(1.0)
    calls = ways(client, f"{base}/")
    for way, fn in calls.items() if stream == "downstream" else [("get", calls["get"])]:
        err = raises_within(fn, TimeoutError, 1.0 + SLACK, at_least=0.8)
        assert not isinstance(err, ConnectionError), (way, err)


# -- 3. a response in tiny segments with small delays ------------------------------------------------


# 64..448-byte segments, 200 us apart (toxiproxy's timers make it ~1 ms): ~400 segments per response
SLICER = toxic("slicer", average_size=256, size_variation=192, delay=200)


@pytest.mark.timeout(60)
def test_sliced_response_arrives_intact(make_client, proxied):
    _, base = proxied(SLICER)
    client = make_client(20.0)
    url = f"{base}/bytes/{N}"
    r = client.request("GET", url)
    assert r.status == 200 and len(r.body) == N and r.body == pattern(N)
    assert client.fetch_len(url) == (200, N)


# -- 4. the response cut short (limit_data), never a short success -----------------------------------

LIMIT = 50_000


@pytest.mark.timeout(30)
def test_truncated_response_raises(make_client, proxied):
    _, base = proxied(toxic("limit_data", bytes=LIMIT))
    client = make_client(5.0)
    for way, fn in ways(client, f"{base}/bytes/{N}").items():
        err = raises_within(fn, ConnectionError, SLACK)
        assert "complete" in str(err) or client.kind != "beast", (way, err)
    if client.kind != "reqwest-async":
        assert client.last_body_bytes < N


# -- 5. a delayed close: the response is complete (Content-Length) before the close ------------------

CLOSE_DELAY_MS = 2000


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "path, body", [("/close", b"Hello, World!"), (f"/bytes/{N}", pattern(N))], ids=["close", "bytes"]
)
def test_slow_close_still_succeeds(make_client, proxied, path, body):
    _, base = proxied(toxic("slow_close", delay=CLOSE_DELAY_MS))
    client = make_client(10.0)
    for i in range(3):
        t0 = time.monotonic()
        r = client.request("GET", base + path)
        took = time.monotonic() - t0
        assert r.status == 200 and r.body == body, i
        # not waiting for the (delayed) close of the previous /close connection, nor of this one
        assert took < CLOSE_DELAY_MS / 2000, f"request {i} took {took:.2f}s"


# -- 6. latency beyond the timeout ------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_latency_beyond_the_timeout(make_client, proxied):
    _, base = proxied(toxic("latency", latency=1500, jitter=0))
    client = make_client(0.5)
    for _way, fn in ways(client, f"{base}/").items():
        raises_within(fn, TimeoutError, 0.5 + SLACK, at_least=0.4)


# -- the native drivers ------------------------------------------------------------------------------

NATIVE = select(["cpp-beast", "rust-reqwest"])
native = pytest.mark.parametrize("spec", NATIVE, ids=[s.name for s in NATIVE])


def reasons(run: Any) -> list[str]:
    return [f["reason"] for w in run.raw["workers"] for f in w["failures"]]


def assert_all_failed(run: Any, requests: int, *classes: str) -> None:
    assert run.ok, run.reason  # exit status 0 and a valid document
    assert run.stats.requests == requests and run.stats.errors == requests, run.reason
    got = reasons(run)
    assert len(got) == requests and all(r.startswith(tuple(f"{c}: " for c in classes)) for r in got), got


@native
@pytest.mark.timeout(60)
def test_native_reset_mid_response(spec, proxied, toxiproxy):
    base, cut = reset_proxy(proxied, toxiproxy)
    timer = later(CUT_AFTER, cut)
    run = run_driver(spec, f"{base}/bytes/{BIG}", Workload(1, 3, 0, RESET_TIMEOUT), row_timeout_s=30)
    timer.join(5)
    assert_all_failed(run, 3, "ConnectionError")
    assert run.duration_s < CUT_AFTER + 3 * SLACK, run.duration_s


@native
@pytest.mark.timeout(60)
def test_native_stalled_connection(spec, proxied):
    _, base = proxied(toxic("timeout", timeout=0))
    run = run_driver(spec, f"{base}/", Workload(1, 2, 0, 1.0), row_timeout_s=30)
    assert_all_failed(run, 2, "TimeoutError")
    assert run.duration_s < 2 * 1.0 + SLACK + 1.0, run.duration_s


@native
@pytest.mark.timeout(60)
def test_native_sliced_response(spec, proxied):
    _, base = proxied(SLICER)
    run = run_driver(spec, f"{base}/bytes/{N}", Workload(1, 3, 0, 20.0), row_timeout_s=60, expected_body_bytes=N)
    assert run.ok and not run.failed, run.reason
    assert run.stats.errors == 0 and run.stats.body_bytes == 3 * N


@native
@pytest.mark.timeout(60)
def test_native_truncated_response(spec, proxied):
    _, base = proxied(toxic("limit_data", bytes=LIMIT))
    run = run_driver(spec, f"{base}/bytes/{N}", Workload(1, 3, 0, 5.0), row_timeout_s=30)
    assert_all_failed(run, 3, "ConnectionError", "ProtocolError")
    assert run.stats.body_bytes == 0  # a failed request's bytes are never counted as a body


@native
@pytest.mark.timeout(60)
@pytest.mark.parametrize("path, size", [("/close", 13), (f"/bytes/{N}", N)], ids=["close", "bytes"])
def test_native_slow_close(spec, proxied, path, size):
    _, base = proxied(toxic("slow_close", delay=CLOSE_DELAY_MS))
    run = run_driver(spec, base + path, Workload(1, 3, 0, 10.0), row_timeout_s=30, expected_body_bytes=size)
    assert run.ok and not run.failed, run.reason
    assert run.stats.errors == 0 and run.stats.body_bytes == 3 * size
    assert run.stats.max_ms is not None and run.stats.max_ms < CLOSE_DELAY_MS / 2, run.stats.max_ms


@native
@pytest.mark.timeout(60)
def test_native_latency_beyond_the_timeout(spec, proxied):
    _, base = proxied(toxic("latency", latency=1500, jitter=0))
    run = run_driver(spec, f"{base}/", Workload(1, 3, 0, 0.5), row_timeout_s=30)
    assert_all_failed(run, 3, "TimeoutError")


# -- no toxiproxy-server left behind -----------------------------------------------------------------


@pytest.mark.timeout(60)
def test_no_toxiproxy_left_behind(toxiproxy, started_pids, tmp_path):
    # the module's own: exactly the one the fixture started runs now (the fixture's teardown is checked by
    # started_pids at the end of the module)
    assert toxiproxy.proc is not None and alive(toxiproxy.proc.pid)
    ours = {p for p in toxiproxy_pids() if _parent(p) == os.getpid()}
    assert ours == {toxiproxy.proc.pid}, ours

    # a Toxiproxy used as a context manager whose body raises
    with pytest.raises(RuntimeError, match="body failed"), Toxiproxy() as tp:
        assert tp.proc is not None
        pid = tp.proc.pid
        assert alive(pid)
        raise RuntimeError("body failed")
    assert not alive(pid) and not Path(f"/proc/{pid}").exists()

    # a Testbed with a network whose body raises: its toxiproxy and its server are stopped
    with (
        pytest.raises(RuntimeError, match="body failed"),
        testbed.Testbed(testbed.Options(network=Network(rtt_ms=1), out=tmp_path), ["test"]) as tb,
    ):
        assert tb.toxiproxy is not None and tb.toxiproxy.proc is not None and tb.server is not None
        pid, server_pid = tb.toxiproxy.proc.pid, tb.server.pid
        assert alive(pid) and server_pid is not None
        with urllib.request.urlopen(tb.base_url + "/", timeout=5) as r:  # through the proxy
            assert r.read() == b"Hello, World!"
        raise RuntimeError("body failed")
    assert not alive(pid) and not Path(f"/proc/{pid}").exists()
    assert not Path(f"/proc/{server_pid}").exists()
    assert (tmp_path / next(p.name for p in tmp_path.iterdir()) / "toxiproxy.log").exists()
    assert {p for p in toxiproxy_pids() if _parent(p) == os.getpid()} == {toxiproxy.proc.pid}


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None
