"""The Client object of both bindings (docs/binding-api.md): the module's shape, the client's life cycle,
the benchmark path (get, fetch_len), request() against the axum server's /echo, argument errors, threads,
the GIL and signals. Each test runs for beast_client and reqwest_client; every request is bounded in time."""

from __future__ import annotations

import collections.abc
import gzip
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.binding_clients import SYNC
from support.httpapp import BIG, App, sent_header_names
from support.rawserver import HELLO, RawServer, answer

pytestmark = pytest.mark.kinds(*SYNC)


# -- the module ------------------------------------------------------------------------------------


def test_module_shape(mod: ModuleType) -> None:
    name = mod.__name__
    assert isinstance(mod.__version__, str) and mod.__version__
    exported = {"Client", "Headers", "Response", "StreamResponse", "ProtocolError", "TLSError", "TooManyRedirects"}
    assert set(mod.__all__) >= exported | {"__version__"}
    for cls in (mod.ProtocolError, mod.TooManyRedirects):
        assert issubclass(cls, OSError)
        assert cls.__module__ == name
    assert issubclass(mod.TLSError, ConnectionError)
    assert issubclass(mod.Headers, collections.abc.Mapping)
    # typed: the stub and the PEP 561 marker are installed next to the package
    stub = Path(mod.__file__).with_name("_core.pyi")
    assert stub.is_file() and stub.with_name("py.typed").is_file()


def test_client_defaults_and_repr(mod: ModuleType) -> None:
    c = mod.Client()
    assert c.timeout is None and not c.closed and c.last_body_bytes == 0
    assert (c.connect_timeout, c.read_timeout) == (10.0, 30.0)
    assert repr(c) == f"<{mod.__name__}.Client timeout=None>"
    for method in ("get", "fetch_len", "request", "stream", "close", "__enter__", "__exit__"):
        assert callable(getattr(c, method))
    c.close()
    c = mod.Client(5.0)  # the total timeout is the first positional argument
    assert (c.timeout, c.connect_timeout, c.read_timeout) == (5.0, 10.0, 30.0)
    c.close()


def test_clients_take_attributes(mod: ModuleType) -> None:
    c = mod.Client()
    c.kind = "mine"  # a __dict__, like a plain Python object
    assert c.kind == "mine"
    assert type(c).__module__ == mod.__name__ and mod.Response.__module__ == mod.__name__
    c.close()


# -- the life cycle --------------------------------------------------------------------------------


def test_context_manager_and_close(mod: ModuleType, server: Server) -> None:
    c = mod.Client(timeout=2.5)
    assert c.timeout == 2.5 and not c.closed
    assert repr(c) == f"<{mod.__name__}.Client timeout=2.5>"
    with c as same:
        assert same is c
        assert c.get(server.url + "/") == 200
    assert c.closed and repr(c).endswith(" closed>")
    for call in (
        lambda: c.get(server.url + "/"),
        lambda: c.fetch_len(server.url + "/"),
        lambda: c.request("GET", server.url + "/"),
        lambda: c.stream("GET", server.url + "/"),
    ):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    c.close()  # idempotent
    assert c.closed


def test_exit_does_not_swallow_exceptions(mod: ModuleType) -> None:
    with pytest.raises(KeyError):
        with mod.Client() as c:
            raise KeyError("x")
    assert c.closed


# -- the benchmark path: get() and fetch_len() -------------------------------------------------------


def test_get_reads_and_counts_the_whole_body(mod: ModuleType, server: Server) -> None:
    with mod.Client(timeout=5.0) as c:
        assert c.get(server.url + "/") == 200
        assert c.last_body_bytes == len(HELLO)
        assert c.get(server.url + "/bytes/1000000") == 200
        assert c.last_body_bytes == 1_000_000
        assert c.get(server.url + "/", release_gil=False) == 200
        assert c.last_body_bytes == len(HELLO)
    assert c.closed


def test_fetch_len(mod: ModuleType, server: Server) -> None:
    with mod.Client(timeout=5.0) as c:
        assert c.fetch_len(server.url + "/bytes/12345") == (200, 12345)
        assert c.last_body_bytes == 12345
        status, n = c.fetch_len(server.url + "/status/500", release_gil=False)
        assert status == 500 and n == c.last_body_bytes


def test_non_2xx_is_returned_not_raised(mod: ModuleType, server: Server) -> None:
    with mod.Client(timeout=5.0) as c:
        assert c.get(server.url + "/status/500") == 500
        assert c.get(server.url + "/status/404", release_gil=False) == 404
        assert c.request("GET", server.url + "/status/503").status == 503
        assert c.get(server.url + "/") == 200  # the connection is still fine


def test_benchmark_path_stays_bare(mod: ModuleType, raw_server: Callable[..., RawServer], http_app: App) -> None:
    """get()/fetch_len() send one GET exactly as given: no Accept-Encoding or default headers, no redirect
    followed, no body decoded; request() sends them. The benchmark's User-Agent is each library's own: Beast's
    request builder names the binding and Boost.Beast, reqwest sends none."""
    srv = raw_server(answer())
    with mod.Client(timeout=5.0, headers={"X-Default": "1"}) as c:
        assert c.get(srv.url + "/") == 200
        assert c.fetch_len(srv.url + "/") == (200, len(HELLO))
        c.request("GET", srv.url + "/")
    bare = [h.lower() for h in srv.heads[:2]]
    for head in bare:
        assert b"accept-encoding" not in head and b"x-default" not in head
        agents = [line for line in head.split(b"\r\n") if line.startswith(b"user-agent:")]
        if mod.__name__ == "beast_client":
            bench_agent = rf"user-agent: beast-client/{re.escape(mod.__version__)} boost\.beast/\d+"
            assert len(agents) == 1 and re.fullmatch(bench_agent, agents[0].decode()), agents
        else:
            assert agents == []
    full = srv.heads[2].lower()
    assert f"user-agent: {mod.__name__.replace('_', '-')}/{mod.__version__}\r\n".encode() in full
    assert b"accept-encoding: " in full and b"x-default: 1" in full
    with mod.Client(timeout=5.0) as c:
        assert c.fetch_len(http_app.url + "/gzip") == (200, len(gzip.compress(BIG)))  # not decoded
        assert "accept-encoding" not in sent_header_names(http_app)
        assert c.get(http_app.url + "/redirect/1") == 302  # not followed


# -- request() against /echo ------------------------------------------------------------------------


def test_request_post_with_headers_and_body(mod: ModuleType, server: Server) -> None:
    with mod.Client(timeout=5.0) as c:
        r = c.request(
            "POST",
            server.url + "/echo",
            headers={"Content-Type": "text/plain", "X-Test": "1"},
            body=b"payload \x00\xff",
        )
        assert isinstance(r, mod.Response)
        assert r.status == 200 and r.reason == "OK"
        assert r.body == b"payload \x00\xff"
        assert r.body is r.body  # made once
        h = r.headers
        assert isinstance(h, mod.Headers) and isinstance(h, collections.abc.Mapping)
        assert h is r.headers  # the same Headers on each access
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in h.items())
        assert h["content-length"] == str(len(r.body))
        assert "content-length" in list(h)  # names lower-cased
        assert c.last_body_bytes == len(r.body)
        with pytest.raises(TypeError):
            h["x"] = "read-only"  # type: ignore[index]
        with pytest.raises(AttributeError):
            r.status = 1  # type: ignore[misc]
        # bytes-like bodies, no body, the GIL held
        assert c.request("POST", server.url + "/echo", body=bytearray(b"ab")).body == b"ab"
        assert c.request("POST", server.url + "/echo", body=memoryview(b"xabc")[1:]).body == b"abc"
        assert c.request("POST", server.url + "/echo").body == b""
        assert c.request("POST", server.url + "/echo", body=b"held", release_gil=False).body == b"held"
        r = c.request("GET", server.url + "/")
        assert (r.status, r.body) == (200, HELLO)
        assert repr(r) == "<Response [200]>"


def test_request_argument_errors(mod: ModuleType, server: Server) -> None:
    with mod.Client(timeout=5.0) as c:
        with pytest.raises(TypeError):
            c.request("POST", server.url + "/echo", body="text")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            c.request("GET", server.url + "/", headers={"a": 1})  # type: ignore[dict-item]
        with pytest.raises(TypeError):
            c.request("GET", server.url + "/", headers=[("a", "b", "c")])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            c.request("GET", server.url + "/", headers=42)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            c.get(server.url + "/", True)  # type: ignore[misc]  # release_gil is keyword-only
        with pytest.raises(ValueError):
            c.request("GET", server.url + "/", headers={"X-Evil": "a\r\nInjected: 1"})
        with pytest.raises(ValueError):
            c.request("GET", server.url + "/", headers={"bad name": "x"})
        with pytest.raises(ValueError):
            c.request("BAD METHOD", server.url + "/")
        assert c.get(server.url + "/") == 200  # still usable


def test_client_option_errors(mod: ModuleType, server: Server) -> None:
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            mod.Client(timeout=bad)
    for kwargs in ({"connect_timeout": 0}, {"read_timeout": -1}, {"max_redirects": -1}, {"timeout": float("nan")}):
        with pytest.raises(ValueError):
            mod.Client(**kwargs)
    with pytest.raises(TypeError):
        mod.Client(headers={"a": 1})  # type: ignore[dict-item]
    # an invalid default header name: ValueError when the client is made or, at the latest, at its first request
    try:
        c = mod.Client(timeout=5.0, headers={"bad name": "x"})
    except ValueError:
        return
    with c, pytest.raises(ValueError):
        c.request("GET", server.url + "/")


# -- threads ---------------------------------------------------------------------------------------


def test_one_client_per_thread_in_parallel(mod: ModuleType, server: Server) -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with mod.Client(timeout=5.0) as c:
                for _ in range(50):
                    assert c.get(server.url + "/") == 200
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []


def test_one_client_shared_by_threads(mod: ModuleType, server: Server) -> None:
    """One Client used by four threads at once: each request takes a connection of its own from the pool;
    every answer is right (test_shared_beast.py: the pool's bound and the GIL)."""
    c = mod.Client(timeout=5)
    outcomes: list[Any] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(50):
            try:
                r = c.request("GET", server.url + "/bytes/1000")
                outcome = "ok" if r.status == 200 and len(r.body) == 1000 else f"bad {r.status} {len(r.body)}"
            except Exception as exc:  # noqa: BLE001 - reported by the assertion
                outcome = f"error {exc!r}"
            with lock:
                outcomes.append(outcome)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert outcomes == ["ok"] * 200, sorted(set(outcomes))
    assert c.get(server.url + "/") == 200
    c.close()


# -- the GIL ---------------------------------------------------------------------------------------


def _counter_progress(call: Callable[[], int]) -> tuple[int, float]:
    """How far a pure-Python counter thread gets while `call()` runs in this thread, and how long it ran."""
    counter = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            counter[0] += 1

    t = threading.Thread(target=spin, daemon=True)
    t.start()
    try:
        time.sleep(0.02)
        before = counter[0]
        t0 = time.monotonic()
        assert call() == 200
        return counter[0] - before, time.monotonic() - t0
    finally:
        stop.set()
        t.join(5)


def test_gil_is_released_during_io(mod: ModuleType, server: Server) -> None:
    """A 400 ms request with the GIL released lets another Python thread run; with it held, that thread
    nearly stops (it only gets the switch or two around the call: a 1 ms switch interval keeps that small)."""
    url = server.url + "/delay/400"
    released: list[int] = []
    held: list[int] = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        with mod.Client(timeout=5) as c:
            c.get(server.url + "/")  # connect first
            for _ in range(3):
                n, took = _counter_progress(lambda: c.get(url, release_gil=True))
                assert took >= 0.39, took
                released.append(n)
                n, took = _counter_progress(lambda: c.get(url, release_gil=False))
                assert took >= 0.39, took
                held.append(n)
    finally:
        sys.setswitchinterval(old)
    r, h = statistics.median(released), statistics.median(held)
    assert r > 0
    # 5x, not more: beside the other suites on two cores the released thread shares a core, and the held call's
    # switches stretch (seen: released 0.98M, held 0.10M; alone, 1.2M and 0.07M)
    assert r >= 5 * max(h, 1), f"counter progress released={released} held={held}"


def test_threads_overlap_only_with_the_gil_released(mod: ModuleType, server: Server) -> None:
    """Four threads, a 200 ms request each: released, all four are in flight at once (every one started before any
    ended, a fact of the order, whatever the machine's load); held, they take turns, so the group lasts at least
    four requests (a lower bound that load can only raise)."""

    def group(release_gil: bool) -> tuple[float, list[tuple[float, float]]]:
        clients = [mod.Client(timeout=10.0) for _ in range(4)]
        for c in clients:
            c.get(server.url + "/")
        spans: list[tuple[float, float]] = []

        def one(c: Any) -> None:
            start = time.monotonic()
            c.get(server.url + "/delay/200", release_gil=release_gil)
            spans.append((start, time.monotonic()))

        threads = [threading.Thread(target=one, args=(c,)) for c in clients]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        for c in clients:
            c.close()
        return wall, spans

    _, released = group(True)
    assert len(released) == 4 and max(s for s, _ in released) < min(e for _, e in released), released
    held, _ = group(False)
    assert held >= 4 * 0.2, held  # one at a time: four server delays end to end


# -- signals ---------------------------------------------------------------------------------------


@pytest.fixture()
def sigint_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this process, whatever disposition it inherited: a process started in
    the background (`cmd &`, some CI runners) inherits SIGINT ignored, and Python then installs no handler."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class _Interrupted(Exception):
    pass


def _kill_later(sig: int, delay: float) -> subprocess.Popen[bytes]:
    """Send `sig` to this process from another one after `delay` s, like a terminal's Ctrl-C: with the GIL
    held, no Python thread of this process could run to send it."""
    return subprocess.Popen(["sh", "-c", f"sleep {delay}; kill -{signal.Signals(sig).name[3:]} {os.getpid()}"])


@pytest.mark.parametrize("release_gil", [True, False])
def test_ctrl_c_interrupts_a_request_promptly(
    mod: ModuleType, server: Server, sigint_raises: None, release_gil: bool
) -> None:
    assert threading.current_thread() is threading.main_thread()  # Python runs handlers there
    with mod.Client(timeout=30) as c:
        t0 = time.monotonic()
        killer = _kill_later(signal.SIGINT, 0.2)
        try:
            with pytest.raises(KeyboardInterrupt):
                c.get(server.url + "/delay/5000", release_gil=release_gil)
        finally:
            killer.wait(5)
        took = time.monotonic() - t0
        assert took < 1.0, f"KeyboardInterrupt after {took:.3f}s"
        assert c.get(server.url + "/") == 200  # the client is still usable


@pytest.mark.parametrize("release_gil", [True, False])
def test_a_raising_signal_handler_interrupts_a_blocked_get(mod: ModuleType, server: Server, release_gil: bool) -> None:
    """Any signal handler that raises stops a waiting get() promptly, not only Ctrl-C's."""
    assert threading.current_thread() is threading.main_thread()

    def on_signal(signum: int, frame: object) -> None:
        raise _Interrupted()

    old = signal.signal(signal.SIGUSR1, on_signal)
    killer = None
    try:
        with mod.Client(timeout=10.0) as c:
            t0 = time.monotonic()
            killer = _kill_later(signal.SIGUSR1, 0.2)
            with pytest.raises(_Interrupted):
                c.get(server.url + "/delay/5000", release_gil=release_gil)
            assert time.monotonic() - t0 < 1.0
            assert c.get(server.url + "/") == 200  # usable afterwards (a new connection)
    finally:
        if killer is not None:
            killer.wait(timeout=5)
        signal.signal(signal.SIGUSR1, old)


# A fresh interpreter whose own thread sends it SIGINT while the main thread waits in get() with the GIL
# released. It installs Python's SIGINT handler itself: started from a background job, it would inherit
# SIGINT ignored and never see a KeyboardInterrupt.
CTRL_C = r"""
import signal, sys, threading, time, os
import {module} as m
signal.signal(signal.SIGINT, signal.default_int_handler)
c = m.Client(timeout=10)
url = sys.argv[1]
assert c.get(url + "/") == 200
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t0 = time.monotonic()
try:
    c.get(url + "/delay/5000")
    print("no interrupt")
except KeyboardInterrupt:
    print("interrupted after %.3f" % (time.monotonic() - t0 - 0.5))
print("status after", c.get(url + "/"))
"""


def test_ctrl_c_from_a_thread_of_a_fresh_process(mod: ModuleType, server: Server) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CTRL_C.format(module=mod.__name__), server.url],
        capture_output=True,
        text=True,
        timeout=30,
    )
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stderr
    assert lines[0].startswith("interrupted after"), out.stdout
    assert float(lines[0].split()[-1]) < 0.5  # well under a second, not when the 5 s request ends
    assert lines[1] == "status after 200"  # the client is still usable
