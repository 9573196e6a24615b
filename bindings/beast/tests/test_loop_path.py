"""beast_client.AsyncClient's loop path (bindings/beast/README.md, "How AsyncClient runs"): get, fetch_len and fetch
over http:// run on the event loop's own thread (counted by the diagnostic `_raw._loop_requests`), one keep-alive
connection per request in flight, moving with the loops a thread runs in turn; https://, another thread's loop and
request() take the I/O thread. The contract both bindings keep (cancellation, sharing, fork, uvloop) is tested in
bindings/tests/ (test_async.py, test_fork.py, ...). Counts of requests and connections, never a speed."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import beast_client
import pytest
from clientbench.execution.server import Server
from support.rawserver import HELLO, Conn, Handler, RawServer, answer

T = 10.0


def uvloop_run(coro: Any) -> Any:
    uvloop = pytest.importorskip("uvloop")
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)


def test_the_benchmark_calls_run_on_the_loop_on_one_connection(raw_server: Callable[[Handler], RawServer]) -> None:
    srv = raw_server(answer())
    c = beast_client.AsyncClient(timeout=T)

    async def main() -> list[Any]:
        return [
            await c.get(srv.url + "/a"),
            await c.fetch_len(srv.url + "/b"),
            await c.fetch(srv.url + "/c", method="POST", body=b"xyz"),
            (await c.request("GET", srv.url + "/d")).status,  # the I/O thread's (its own pool)
        ]

    assert asyncio.run(main()) == [200, (200, len(HELLO)), (200, HELLO), 200]
    assert c._raw._loop_requests == 3
    assert srv.accepted == 2  # one connection for the loop path, one for the I/O thread's pool
    assert srv.heads[2].startswith(b"POST /c HTTP/1.1\r\n") and b"\r\nContent-Length: 3" in srv.heads[2]
    c.close()


def test_loops_in_turn_share_the_loop_paths_connections(raw_server: Callable[[Handler], RawServer]) -> None:
    srv = raw_server(answer())
    c = beast_client.AsyncClient(timeout=T)
    for _ in range(3):
        assert asyncio.run(c.get(srv.url + "/")) == 200
    loop = asyncio.new_event_loop()
    try:  # a loop that stays open between its calls (run_until_complete), as the tests' adapter's
        assert loop.run_until_complete(c.fetch_len(srv.url + "/")) == (200, len(HELLO))
        assert loop.run_until_complete(c.get(srv.url + "/")) == 200
    finally:
        loop.close()
    assert uvloop_run(c.get(srv.url + "/")) == 200
    assert c._raw._loop_requests == 6 and srv.accepted == 1
    c.close()


def test_https_and_another_threads_loop_take_the_io_thread(server: Server, tls_server: Server) -> None:
    c = beast_client.AsyncClient(timeout=T, verify=tls_server.ca_file)
    assert asyncio.run(c.get(tls_server.url + "/")) == 200
    assert c._raw._loop_requests == 0  # TLS: the I/O thread's
    assert asyncio.run(c.get(server.url + "/")) == 200
    assert c._raw._loop_requests == 1  # the path is this thread's from now on
    results: list[int] = []
    t = threading.Thread(target=lambda: results.append(asyncio.run(c.get(server.url + "/"))))
    t.start()
    t.join(30)
    assert results == [200] and c._raw._loop_requests == 1  # another thread's loop: the I/O thread's
    assert asyncio.run(c.get(server.url + "/")) == 200
    assert c._raw._loop_requests == 2
    c.close()


def test_a_loop_closed_with_a_request_in_flight_leaves_the_client_usable(
    raw_server: Callable[[Handler], RawServer],
) -> None:
    """The first loop stops and closes while its request waits for an answer: the next loop's requests go on
    new connections (that request is abandoned: its connection closed), on the loop path."""
    dropped = threading.Event()

    def handler(conn: Conn) -> None:
        head = conn.read_request()
        if head is not None and head.startswith(b"GET /never "):
            if conn.hold(10):
                dropped.set()
            return
        while head is not None:
            conn.respond()
            head = conn.read_request()

    srv = raw_server(handler)
    c = beast_client.AsyncClient(timeout=T)
    loop = asyncio.new_event_loop()
    task = loop.create_task(c.get(srv.url + "/never"))
    loop.run_until_complete(asyncio.sleep(0.2))
    assert not task.done()
    loop.close()  # (asyncio then warns that the task was destroyed pending)
    assert asyncio.run(c.get(srv.url + "/ok")) == 200
    assert c._raw._loop_requests == 2
    assert dropped.wait(5), "the abandoned request's connection was not closed"
    c.close()


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_max_connections_bounds_the_loop_path_and_a_wait_times_out(
    raw_server: Callable[[Handler], RawServer], loop: str
) -> None:
    def slow(conn: Conn) -> None:
        while (head := conn.read_request()) is not None:
            if head.startswith(b"GET /slow "):
                conn.hold(0.8)
            conn.respond()

    srv = raw_server(slow)

    async def main() -> None:
        async with beast_client.AsyncClient(timeout=T, connect_timeout=0.3, max_connections=1) as c:
            first = asyncio.ensure_future(c.get(srv.url + "/slow"))
            await asyncio.sleep(0.1)
            with pytest.raises(TimeoutError, match=r"max_connections \(1\)"):
                await c.get(srv.url + "/")
            assert await first == 200
            statuses = await asyncio.gather(*(c.get(srv.url + "/") for _ in range(5)))  # one after the other
            assert statuses == [200] * 5 and c._raw._loop_requests == 7

    asyncio.run(main()) if loop == "asyncio" else uvloop_run(main())
    assert srv.accepted == 1


def test_an_idle_connection_the_server_closes_is_dropped_and_the_next_request_reconnects(
    raw_server: Callable[[Handler], RawServer],
) -> None:
    """The server closes each connection 50 ms after its answer; the loop runs meanwhile (its reader sees the
    close), or does not (the idle check before re-use sees it): no request fails, none is sent on a dead one."""

    def close_soon(conn: Conn) -> None:
        if conn.read_request() is not None:
            conn.respond()
            conn.hold(0.05)
        conn.sock.close()

    srv = raw_server(close_soon)
    c = beast_client.AsyncClient(timeout=T)

    async def main() -> list[int]:
        out = [await c.get(srv.url + "/")]
        await asyncio.sleep(0.3)  # the loop runs while the server closes
        out.append(await c.get(srv.url + "/"))
        return out

    assert asyncio.run(main()) == [200, 200]
    loop = asyncio.new_event_loop()
    try:  # the loop does not run while the server closes
        assert loop.run_until_complete(c.get(srv.url + "/")) == 200
        threading.Event().wait(0.3)
        assert loop.run_until_complete(c.get(srv.url + "/")) == 200
    finally:
        loop.close()
    assert srv.accepted == 4 and len(srv.heads) == 4  # every request on a connection of its own, sent once
    c.close()


def test_close_closes_the_idle_connections(raw_server: Callable[[Handler], RawServer]) -> None:
    closed = threading.Event()

    def handler(conn: Conn) -> None:
        while conn.read_request() is not None:
            conn.respond()
        closed.set()  # the client closed it

    srv = raw_server(handler)

    async def main() -> None:
        async with beast_client.AsyncClient(timeout=T) as c:
            assert await c.get(srv.url + "/") == 200
        with pytest.raises(RuntimeError, match="closed"):
            await c.get(srv.url + "/")

    asyncio.run(main())
    assert closed.wait(5)


def test_close_and_the_clients_end_in_another_thread_are_done_on_the_loops_thread(
    raw_server: Callable[[Handler], RawServer],
) -> None:
    """The loop runs in a thread of its own; the main thread closes one client and drops another: their idle
    connections close (on the loop's thread, which alone touches a path)."""
    closed = threading.Semaphore(0)

    def handler(conn: Conn) -> None:
        while conn.read_request() is not None:
            conn.respond()
        closed.release()  # the client closed it

    srv = raw_server(handler)
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever)
    runner.start()
    try:
        for end in ("close", "drop"):
            c: beast_client.AsyncClient | None = beast_client.AsyncClient(timeout=T)
            assert c is not None
            assert asyncio.run_coroutine_threadsafe(c.get(srv.url + "/"), loop).result(10) == 200
            assert c._raw._loop_requests == 1
            if end == "close":
                c.close()
            else:
                c = None  # the client's end, in this thread
            assert closed.acquire(timeout=5), f"{end}: the idle connection was not closed"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join(10)
        loop.close()
