"""reqwest_client against the axum server (clientbench-server) and small raw-socket servers.

Every server thread and every request is bounded in time."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

import reqwest_client
from reqwest_client import AsyncClient, Client, ProtocolError, Response

REPO = Path(__file__).resolve().parents[3]
SCHEMA = REPO / "python" / "clientbench" / "schema" / "raw-result.schema.json"


# -- a raw-socket HTTP server -----------------------------------------------------------------------

class RawServer:
    """Listens on 127.0.0.1; runs `handler(sock, index)` in a thread for every accepted connection."""

    def __init__(self, handler: Callable[[socket.socket, int], None]):
        self.handler = handler
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted = 0
        self.stopping = threading.Event()
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> "RawServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(2)
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass
        self.sock.close()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            conn.settimeout(5)
            self.conns.append(conn)
            index, self.accepted = self.accepted, self.accepted + 1
            threading.Thread(target=self._run, args=(conn, index), daemon=True).start()

    def _run(self, conn: socket.socket, index: int) -> None:
        try:
            self.handler(conn, index)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass


def read_request(conn: socket.socket) -> bytes | None:
    """One request head (requests in these tests have no body); None when the peer closed."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        buf += chunk
    return buf


def ok(body: bytes = b"hi") -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


def hold(conn: socket.socket, seconds: float = 5.0) -> None:
    conn.settimeout(seconds)
    try:
        conn.recv(1)
    except OSError:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- API shape -----------------------------------------------------------------------------------

def test_api_shape() -> None:
    assert set(reqwest_client.__all__) >= {"Client", "AsyncClient", "ProtocolError", "Response"}
    assert isinstance(reqwest_client.__version__, str) and reqwest_client.__version__
    assert reqwest_client.reqwest_version.startswith("0.13.")
    assert issubclass(ProtocolError, OSError)
    assert ProtocolError.__module__ == "reqwest_client"
    c = Client()
    assert c.timeout == 30.0 and not c.closed and c.last_body_bytes == 0
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

def test_get_reads_whole_body(server: str) -> None:
    with Client(timeout=5) as c:
        assert c.get(server + "/") == 200
        assert c.last_body_bytes == 13
        assert c.fetch_len(server + "/bytes/100000") == (200, 100000)
        assert c.last_body_bytes == 100000
        assert c.get(server + "/", release_gil=False) == 200
        assert c.last_body_bytes == 13
    assert c.closed


def test_request_echo_headers_body(server: str) -> None:
    with Client(timeout=5) as c:
        r = c.request("POST", server + "/echo", headers={"X-Test": "yes", "content-type": "text/plain"},
                      body=b"payload \x00\xff")
        assert isinstance(r, Response)
        assert r.status == 200
        assert r.body == b"payload \x00\xff"
        assert r.body is r.body  # created once
        h = r.headers
        assert isinstance(h, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in h.items())
        assert h["content-length"] == str(len(r.body))
        h["x"] = "mutating the copy does not change the response"
        assert "x" not in r.headers
        with pytest.raises(AttributeError):
            r.status = 1  # type: ignore[misc]
        r2 = c.request("POST", server + "/echo", body=bytearray(b"ba"))
        assert r2.body == b"ba"
        r3 = c.request("GET", server + "/")
        assert (r3.status, r3.body) == (200, b"Hello, World!")
        assert "200" in repr(r3)


def test_non_2xx_is_returned(server: str) -> None:
    with Client(timeout=5) as c:
        assert c.get(server + "/status/500") == 500
        assert c.get(server + "/status/404") == 404
        assert c.request("GET", server + "/status/503").status == 503
        assert c.get(server + "/") == 200  # the connection is still fine


def test_close_endpoint_reconnects_transparently(server: str) -> None:
    with Client(timeout=5) as c:
        for _ in range(5):
            assert c.get(server + "/close") == 200
            assert c.get(server + "/") == 200


def test_one_client_from_two_threads(server: str) -> None:
    with Client(timeout=5) as c:
        results: list[int] = []
        threads = [threading.Thread(target=lambda: results.append(c.get(server + "/delay/200")))
                   for _ in range(2)]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join(5)
        took = time.perf_counter() - t
        assert results == [200, 200]
        assert took < 0.39, f"two concurrent 200 ms requests took {took:.3f}s"


# -- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["https://127.0.0.1/", "garbage", "", "ftp://127.0.0.1/", "http://",
                                 "http://127.0.0.1:99999/", "http://127.0.0.1:0/"])
def test_invalid_url_is_value_error(url: str) -> None:
    with Client(timeout=1) as c:
        with pytest.raises(ValueError):
            c.get(url)
        with pytest.raises(ValueError):
            c.request("GET", url)


def test_invalid_request_arguments(server: str) -> None:
    with Client(timeout=1) as c:
        with pytest.raises(ValueError):
            c.request("BAD METHOD", server + "/")
        with pytest.raises(ValueError):
            c.request("GET", server + "/", headers={"bad name": "x"})
        with pytest.raises(ValueError):
            c.request("GET", server + "/", headers={"x": "a\r\nb"})
        with pytest.raises(TypeError):
            c.request("POST", server + "/echo", body="str is not bytes")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            c.request("GET", server + "/", headers=[("a", "b")])  # type: ignore[arg-type]


def test_refused_is_connection_error() -> None:
    with Client(timeout=5) as c:
        with pytest.raises(ConnectionError) as info:
            c.get(f"http://127.0.0.1:{free_port()}/")
    assert isinstance(info.value, ConnectionRefusedError)
    assert "refused" in str(info.value).lower()


def test_malformed_response_is_protocol_error() -> None:
    def garbage(conn: socket.socket, _: int) -> None:
        if read_request(conn):
            conn.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            hold(conn, 1)

    with RawServer(garbage) as srv, Client(timeout=5) as c:
        with pytest.raises(ProtocolError) as info:
            c.get(srv.url + "/")
        assert isinstance(info.value, OSError)
        with pytest.raises(ProtocolError):
            c.request("GET", srv.url + "/")


def test_no_answer_is_timeout_error() -> None:
    def silent(conn: socket.socket, _: int) -> None:
        read_request(conn)
        hold(conn, 5)

    with RawServer(silent) as srv:
        for release in (True, False):
            with Client(timeout=0.5) as c:
                t = time.perf_counter()
                with pytest.raises(TimeoutError):
                    c.get(srv.url + "/", release_gil=release)
                took = time.perf_counter() - t
                assert 0.4 < took < 1.5, took


def test_close_mid_body_is_connection_error() -> None:
    def short(conn: socket.socket, _: int) -> None:
        if read_request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly a part")

    with RawServer(short) as srv, Client(timeout=5) as c:
        with pytest.raises(ConnectionError):
            c.get(srv.url + "/")
        assert srv.accepted == 1  # a partial response is never retried


def test_server_closing_idle_keepalive_connection() -> None:
    def idle_close(conn: socket.socket, _: int) -> None:
        conn.settimeout(0.1)  # closes the connection after 100 ms idle
        try:
            while read_request(conn):
                conn.sendall(ok())
        except OSError:
            pass

    with RawServer(idle_close) as srv, Client(timeout=5) as c:
        for _ in range(3):
            assert c.get(srv.url + "/") == 200
            assert c.get(srv.url + "/") == 200
            time.sleep(0.3)
        assert srv.accepted == 3


def test_closed_client_raises_runtime_error(server: str) -> None:
    c = Client()
    c.close()
    c.close()  # idempotent
    with pytest.raises(RuntimeError):
        c.get(server + "/")
    a = AsyncClient()
    a.close()
    with pytest.raises(RuntimeError):
        asyncio.run(_await(a.get(server + "/")))


async def _await(awaitable):  # type: ignore[no-untyped-def]
    return await awaitable


# -- AsyncClient ---------------------------------------------------------------------------------

def test_async_client(server: str) -> None:
    async def main() -> None:
        async with AsyncClient(timeout=5) as a:
            assert isinstance(a, AsyncClient)
            assert await a.get(server + "/") == 200
            assert await a.fetch_len(server + "/bytes/54321") == (200, 54321)
            assert await a.get(server + "/status/500") == 500
            r = await a.request("POST", server + "/echo", headers={"x": "y"}, body=b"abc")
            assert (r.status, r.body) == (200, b"abc")
            for _ in range(3):
                assert await a.get(server + "/close") == 200
            t = time.perf_counter()
            statuses = await asyncio.gather(*(a.get(server + "/delay/200") for _ in range(5)))
            assert statuses == [200] * 5
            assert time.perf_counter() - t < 0.6  # concurrent, not 5 x 200 ms
        assert a.closed

    asyncio.run(main())


def test_async_errors() -> None:
    def garbage(conn: socket.socket, _: int) -> None:
        if read_request(conn):
            conn.sendall(b"NOT HTTP\r\n\r\n")
            hold(conn, 1)

    def silent(conn: socket.socket, _: int) -> None:
        read_request(conn)
        hold(conn, 5)

    async def main(bad: str, slow: str) -> None:
        async with AsyncClient(timeout=0.5) as a:
            with pytest.raises(ValueError):
                await a.get("https://127.0.0.1/")
            with pytest.raises(ValueError):
                await a.request("GET", "garbage")
            with pytest.raises(ConnectionRefusedError):
                await a.get(f"http://127.0.0.1:{free_port()}/")
            with pytest.raises(ProtocolError):
                await a.get(bad + "/")
            t = time.perf_counter()
            with pytest.raises(TimeoutError):
                await a.fetch_len(slow + "/")
            assert time.perf_counter() - t < 1.5
            # cancelling the asyncio side cancels the Rust request
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(a.get(slow + "/"), 0.1)

    with RawServer(garbage) as bad, RawServer(silent) as slow:
        asyncio.run(main(bad.url, slow.url))


def test_async_methods_are_coroutines(server: str) -> None:
    a = AsyncClient(timeout=5)
    for name in ("get", "fetch_len", "request", "__aenter__", "__aexit__"):
        assert inspect.iscoroutinefunction(getattr(AsyncClient, name)), name
    # lazy like any coroutine: created outside a running loop, awaited later, on any loop
    assert asyncio.run(a.get(server + "/")) == 200
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(a.fetch_len(server + "/bytes/10")) == (200, 10)
        assert loop.run_until_complete(a.request("GET", server + "/")).status == 200
    finally:
        loop.close()
    assert asyncio.run(a.get(server + "/")) == 200  # the pool outlives event loops
    a.close()
    assert "closed" in repr(a)


def test_async_cancel_aborts_the_request() -> None:
    closed = threading.Event()

    def silent(conn: socket.socket, _: int) -> None:
        read_request(conn)
        conn.settimeout(5)
        try:
            if conn.recv(1) == b"":  # the client dropped the connection
                closed.set()
        except OSError:
            pass

    async def main(url: str) -> None:
        a = AsyncClient(timeout=30)
        task = asyncio.ensure_future(a.get(url))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        a.close()

    with RawServer(silent) as srv:
        asyncio.run(main(srv.url + "/"))
        assert closed.wait(2), "the cancelled request's connection was not closed"


def test_async_many_concurrent_requests_and_loops(server: str) -> None:
    async def burst(n: int) -> list:
        async with AsyncClient(timeout=10) as a:
            return await asyncio.gather(*(a.fetch_len(f"{server}/bytes/{i}") for i in range(n)))

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


def test_exit_right_after_an_await_is_clean(server: str) -> None:
    # Regression: a bridge that resolves futures from tokio threads (pyo3-async-runtimes) can abort
    # the process (SIGABRT) when the interpreter finalizes while such a thread waits for the GIL.
    refused = f"http://127.0.0.1:{free_port()}/"
    for _ in range(15):
        p = subprocess.run([sys.executable, "-c", EXIT_RIGHT_AFTER_AWAIT, refused, server + "/"],
                           capture_output=True, text=True, timeout=30)
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


def test_gil_released_lets_other_threads_run(server: str) -> None:
    # 400 ms requests: the held case still leaks a switch interval or two (5 ms each) around the call
    url = server + "/delay/400"
    released, held = [], []
    with Client(timeout=5) as c:
        c.get(server + "/")  # connect first
        for _ in range(3):
            released.append(_counter_progress(lambda: c.get(url, release_gil=True)))
            held.append(_counter_progress(lambda: c.get(url, release_gil=False)))
    r, h = statistics.median(released), statistics.median(held)
    assert r > 0
    assert r >= 10 * max(h, 1), f"counter progress released={released} held={held}"


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
@pytest.mark.parametrize("release", [True, False])
def test_ctrl_c_interrupts_a_request_promptly(server: str, release: bool) -> None:
    # The SIGINT comes from another process, like a terminal's Ctrl-C: a Python thread could not send
    # it while this thread holds the GIL.
    with Client(timeout=30) as c:
        t = time.perf_counter()
        killer = subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -INT {os.getpid()}"])
        try:
            with pytest.raises(KeyboardInterrupt):
                c.get(server + "/delay/5000", release_gil=release)
        finally:
            killer.wait(5)
        took = time.perf_counter() - t
        assert took < 1.0, f"KeyboardInterrupt after {took:.3f}s"
        assert c.get(server + "/") == 200  # the client is still usable


# -- the drivers ---------------------------------------------------------------------------------

def _validate(doc: dict, workers: int, requests: int) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    assert len(doc["workers"]) == workers
    for w in doc["workers"]:
        assert len(w["latencies_ns"]) == len(w["start_ns"]) == requests
        assert w["failures"] == []
        assert w["bytes"] == 13 * requests


def _run_driver(argv: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "python"),
                                                                    os.environ.get("PYTHONPATH")]))}
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("gil", ["held", "released"])
@pytest.mark.parametrize("connection", ["keep-alive", "new"])
def test_sync_driver_document(server: str, gil: str, connection: str) -> None:
    doc = _run_driver([sys.executable, "-m", "clientbench.drivers.binding", "--binding", "reqwest", "--url", server + "/",
                       "--workers", "3", "--requests", "20", "--warmup", "2", "--gil", gil,
                       "--connection", connection])
    _validate(doc, 3, 20)
    assert doc["client"]["language"] == "Python" and doc["client"]["library"] == "reqwest"
    assert (doc["client"]["mode"], doc["client"]["gil"]) == ("sync", gil)
    assert doc["client"]["library_version"] == reqwest_client.reqwest_version


@pytest.mark.parametrize("connection", ["keep-alive", "new"])
def test_async_driver_document(server: str, connection: str) -> None:
    doc = _run_driver([sys.executable, "-m", "clientbench.drivers.binding", "--binding", "reqwest", "--mode", "async", "--url",
                       server + "/", "--workers", "3", "--requests", "20", "--connection", connection])
    _validate(doc, 3, 20)
    assert (doc["client"]["mode"], doc["client"]["gil"]) == ("async", None)


def test_driver_failures_are_data(server: str) -> None:
    doc = _run_driver([sys.executable, "-m", "clientbench.drivers.binding", "--binding", "reqwest", "--url",
                       server + "/status/500", "--workers", "1", "--requests", "3"])
    assert [f["status"] for f in doc["workers"][0]["failures"]] == [500, 500, 500]
    doc = _run_driver([sys.executable, "-m", "clientbench.drivers.binding", "--binding", "reqwest", "--mode", "async", "--url",
                       f"http://127.0.0.1:{free_port()}/", "--workers", "1", "--requests", "2"])
    reasons = [f["reason"] for f in doc["workers"][0]["failures"]]
    assert len(reasons) == 2 and all(r.startswith("ConnectionRefusedError") for r in reasons)


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_native_driver_document(server: str, mode: str) -> None:
    binary = REPO / "target" / "release" / "reqwest-driver"
    if not binary.is_file():
        pytest.skip("target/release/reqwest-driver not built (cargo build --release -p reqwest-bench)")
    doc = _run_driver([str(binary), "--url", server + "/", "--workers", "3", "--requests", "20",
                       "--mode", mode])
    _validate(doc, 3, 20)
    assert doc["client"] == {"language": "Rust", "library": "reqwest", "mode": mode, "gil": None,
                             "library_version": reqwest_client.reqwest_version}
