"""reqwest_client (PyO3 binding of rust-reqwest) against the axum server: API, argument errors, AsyncClient
(cancellation, event loops, exit), threads, signals, the GIL. Every request is bounded in time.

The fault catalogue (bad URLs, refused, timeouts, broken and malformed responses, idle keep-alive closes) is
python/tests/test_faults.py, for both bindings at once; the benchmark drivers are python/tests/test_drivers.py."""

from __future__ import annotations

import asyncio
import inspect
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
import reqwest_client
from clientbench.run.server import Server
from reqwest_client import AsyncClient, Client, ProtocolError, Response
from support.rawserver import Conn, Handler, RawServer

# -- API shape -----------------------------------------------------------------------------------


def test_api_shape() -> None:
    assert set(reqwest_client.__all__) >= {"Client", "AsyncClient", "ProtocolError", "Response"}
    assert isinstance(reqwest_client.__version__, str) and reqwest_client.__version__
    assert reqwest_client.reqwest_version.startswith("0.13.")
    assert issubclass(ProtocolError, OSError)
    assert ProtocolError.__module__ == "reqwest_client"
    c = Client()
    assert c.timeout is None and not c.closed and c.last_body_bytes == 0
    for name in ("get", "fetch_len", "request", "close", "__enter__", "__exit__"):
        assert callable(getattr(c, name))
    a = AsyncClient(timeout=2.5)
    assert a.timeout == 2.5 and not a.closed
    for name in ("get", "fetch_len", "request", "close", "__aenter__", "__aexit__"):
        assert callable(getattr(a, name))
    with pytest.raises(TypeError):
        c.get("http://127.0.0.1:1/", False)  # release_gil is keyword-only
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            Client(timeout=bad)
        with pytest.raises(ValueError):
            AsyncClient(timeout=bad)
    stub = Path(reqwest_client.__file__).with_name("_core.pyi")
    assert stub.is_file() and stub.with_name("py.typed").is_file()


# -- the axum server -----------------------------------------------------------------------------


def test_get_reads_whole_body(server: Server) -> None:
    with Client(timeout=5) as c:
        assert c.get(server.url + "/") == 200
        assert c.last_body_bytes == 13
        assert c.fetch_len(server.url + "/bytes/100000") == (200, 100000)
        assert c.last_body_bytes == 100000
        assert c.get(server.url + "/", release_gil=False) == 200
        assert c.last_body_bytes == 13
    assert c.closed


def test_request_echo_headers_body(server: Server) -> None:
    with Client(timeout=5) as c:
        r = c.request(
            "POST",
            server.url + "/echo",
            headers={"X-Test": "yes", "content-type": "text/plain"},
            body=b"payload \x00\xff",
        )
        assert isinstance(r, Response)
        assert r.status == 200
        assert r.body == b"payload \x00\xff"
        assert r.body is r.body  # created once
        h = r.headers
        assert isinstance(h, reqwest_client.Headers) and isinstance(h, Mapping)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in h.items())
        assert h["content-length"] == str(len(r.body))
        assert h is r.headers  # the same object each time
        with pytest.raises(TypeError):
            h["x"] = "read-only"  # type: ignore[index]
        with pytest.raises(AttributeError):
            r.status = 1  # type: ignore[misc]
        r2 = c.request("POST", server.url + "/echo", body=bytearray(b"ba"))
        assert r2.body == b"ba"
        r3 = c.request("GET", server.url + "/")
        assert (r3.status, r3.body) == (200, b"Hello, World!")
        assert "200" in repr(r3)


def test_non_2xx_is_returned(server: Server) -> None:
    with Client(timeout=5) as c:
        assert c.get(server.url + "/status/500") == 500
        assert c.get(server.url + "/status/404") == 404
        assert c.request("GET", server.url + "/status/503").status == 503
        assert c.get(server.url + "/") == 200  # the connection is still fine


def test_one_client_from_two_threads(server: Server) -> None:
    with Client(timeout=5) as c:
        results: list[int] = []
        threads = [threading.Thread(target=lambda: results.append(c.get(server.url + "/delay/200"))) for _ in range(2)]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join(5)
        took = time.perf_counter() - t
        assert results == [200, 200]
        assert took < 0.39, f"two concurrent 200 ms requests took {took:.3f}s"


# -- errors --------------------------------------------------------------------------------------


def test_invalid_request_arguments(server: Server) -> None:
    with Client(timeout=1) as c:
        with pytest.raises(ValueError):
            c.request("BAD METHOD", server.url + "/")
        with pytest.raises(ValueError):
            c.request("GET", server.url + "/", headers={"bad name": "x"})
        with pytest.raises(ValueError):
            c.request("GET", server.url + "/", headers={"x": "a\r\nb"})
        with pytest.raises(TypeError):
            c.request("POST", server.url + "/echo", body="str is not bytes")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            c.request("GET", server.url + "/", headers=[("a", "b", "c")])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            c.request("GET", server.url + "/", headers=42)  # type: ignore[arg-type]


def test_closed_client_raises_runtime_error(server: Server) -> None:
    c = Client()
    c.close()
    c.close()  # idempotent
    with pytest.raises(RuntimeError):
        c.get(server.url + "/")
    a = AsyncClient()
    a.close()
    with pytest.raises(RuntimeError):
        asyncio.run(_await(a.get(server.url + "/")))


async def _await(awaitable):  # type: ignore[no-untyped-def]
    return await awaitable


# -- AsyncClient ---------------------------------------------------------------------------------


def test_async_client(server: Server) -> None:
    async def main() -> None:
        async with AsyncClient(timeout=5) as a:
            assert isinstance(a, AsyncClient)
            assert await a.get(server.url + "/") == 200
            assert await a.fetch_len(server.url + "/bytes/54321") == (200, 54321)
            assert await a.get(server.url + "/status/500") == 500
            r = await a.request("POST", server.url + "/echo", headers={"x": "y"}, body=b"abc")
            assert (r.status, r.body) == (200, b"abc")
            for _ in range(3):
                assert await a.get(server.url + "/close") == 200
            t = time.perf_counter()
            statuses = await asyncio.gather(*(a.get(server.url + "/delay/200") for _ in range(5)))
            assert statuses == [200] * 5
            assert time.perf_counter() - t < 0.6  # concurrent, not 5 x 200 ms
        assert a.closed

    asyncio.run(main())


def test_async_methods_are_coroutines(server: Server) -> None:
    a = AsyncClient(timeout=5)
    for name in ("get", "fetch_len", "request", "__aenter__", "__aexit__"):
        assert inspect.iscoroutinefunction(getattr(AsyncClient, name)), name
    # lazy like any coroutine: created outside a running loop, awaited later, on any loop
    assert asyncio.run(a.get(server.url + "/")) == 200
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(a.fetch_len(server.url + "/bytes/10")) == (200, 10)
        assert loop.run_until_complete(a.request("GET", server.url + "/")).status == 200
    finally:
        loop.close()
    assert asyncio.run(a.get(server.url + "/")) == 200  # the pool outlives event loops
    a.close()
    assert "closed" in repr(a)


def test_async_cancel_aborts_the_request(raw_server: Callable[[Handler], RawServer]) -> None:
    """Cancelling the asyncio side (task.cancel(), asyncio.wait_for) cancels the Rust request: its
    connection is dropped."""
    dropped = threading.Semaphore(0)

    def silent(conn: Conn) -> None:
        conn.read_request()
        if conn.hold(5):  # the client dropped the connection
            dropped.release()

    async def main(url: str) -> None:
        a = AsyncClient(timeout=30)
        task = asyncio.ensure_future(a.get(url))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(asyncio.TimeoutError):  # wait_for's, long before the client's 30 s
            await asyncio.wait_for(a.get(url), 0.1)
        a.close()

    srv = raw_server(silent)
    asyncio.run(main(srv.url + "/"))
    assert srv.accepted == 2
    for _ in range(2):
        assert dropped.acquire(timeout=2), "a cancelled request's connection was not closed"


def test_async_many_concurrent_requests_and_loops(server: Server) -> None:
    async def burst(n: int) -> list:
        async with AsyncClient(timeout=10) as a:
            return await asyncio.gather(*(a.fetch_len(f"{server.url}/bytes/{i}") for i in range(n)))

    assert asyncio.run(burst(300)) == [(200, i) for i in range(300)]
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(asyncio.run(burst(50)))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [[(200, i) for i in range(50)]] * 3


EXIT_RIGHT_AFTER_AWAIT = r"""
import asyncio, sys
import reqwest_client
async def main():
    async with reqwest_client.AsyncClient(timeout=5) as a:
        for url in sys.argv[1:]:
            try:
                await a.get(url)
            except OSError:
                pass
asyncio.run(main())
"""


def test_exit_right_after_an_await_is_clean(server: Server, closed_port_url: str) -> None:
    # Regression: a bridge that resolves futures from tokio threads (pyo3-async-runtimes) can abort
    # the process (SIGABRT) when the interpreter finalizes while such a thread waits for the GIL.
    for _ in range(15):
        p = subprocess.run(
            [sys.executable, "-c", EXIT_RIGHT_AFTER_AWAIT, closed_port_url, server.url + "/"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert p.returncode == 0, (p.returncode, p.stderr[-2000:])


def test_clients_accept_attributes() -> None:
    c, a = Client(), AsyncClient()
    c.tag = a.tag = "mine"  # type: ignore[attr-defined]
    assert c.tag == a.tag == "mine"  # type: ignore[attr-defined]


# -- the GIL -------------------------------------------------------------------------------------


def _counter_progress(call: Callable[[], int]) -> int:
    """How far a pure-Python counter thread gets while `call()` runs in this thread."""
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
        assert call() == 200
        return counter[0] - before
    finally:
        stop.set()
        t.join(5)


def test_gil_released_lets_other_threads_run(server: Server) -> None:
    # 400 ms requests: the held case still leaks a switch interval or two (5 ms each) around the call
    url = server.url + "/delay/400"
    released, held = [], []
    with Client(timeout=5) as c:
        c.get(server.url + "/")  # connect first
        for _ in range(3):
            released.append(_counter_progress(lambda: c.get(url, release_gil=True)))
            held.append(_counter_progress(lambda: c.get(url, release_gil=False)))
    r, h = statistics.median(released), statistics.median(held)
    assert r > 0
    assert r >= 10 * max(h, 1), f"counter progress released={released} held={held}"


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
@pytest.mark.parametrize("release", [True, False])
def test_ctrl_c_interrupts_a_request_promptly(server: Server, release: bool) -> None:
    # The SIGINT comes from another process, like a terminal's Ctrl-C: a Python thread could not send
    # it while this thread holds the GIL.
    with Client(timeout=30) as c:
        t = time.perf_counter()
        killer = subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -INT {os.getpid()}"])
        try:
            with pytest.raises(KeyboardInterrupt):
                c.get(server.url + "/delay/5000", release_gil=release)
        finally:
            killer.wait(5)
        took = time.perf_counter() - t
        assert took < 1.0, f"KeyboardInterrupt after {took:.3f}s"
        assert c.get(server.url + "/") == 200  # the client is still usable
