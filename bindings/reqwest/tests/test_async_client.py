"""reqwest_client.AsyncClient (asyncio): its shape, request/stream, cancellation, event loops, many concurrent
requests and a clean interpreter exit right after an await, against the axum server. Every request is bounded.
The three clients' fault catalogue (AsyncClient included) is bindings/tests/test_faults.py."""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import reqwest_client
from clientbench.execution.server import Server
from reqwest_client import AsyncClient
from support.rawserver import Conn, Handler, RawServer

T = 20.0


def test_async_client_shape() -> None:
    a = AsyncClient(timeout=2.5)
    assert a.timeout == 2.5 and not a.closed
    for name in ("get", "fetch_len", "request", "stream", "close", "__aenter__", "__aexit__"):
        assert callable(getattr(a, name))
    a.close()
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            AsyncClient(timeout=bad)
    for kw in ({"connect_timeout": 0}, {"read_timeout": -1}, {"timeout": float("nan")}, {"max_redirects": -1}):
        with pytest.raises(ValueError):
            AsyncClient(**kw)  # type: ignore[arg-type]
    a = AsyncClient()
    a.tag = "mine"  # type: ignore[attr-defined]
    assert a.tag == "mine"  # type: ignore[attr-defined]
    a.close()


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def test_closed_async_client_raises_runtime_error(server: Server) -> None:
    a = AsyncClient()
    a.close()
    a.close()  # idempotent
    with pytest.raises(RuntimeError):
        asyncio.run(_await(a.get(server.url + "/")))


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


def test_async_request_and_stream(server: Server) -> None:
    async def main() -> None:
        async with AsyncClient(timeout=T) as c:
            r = await c.request("POST", server.url + "/redirect-to?url=/anything&status=307", json={"a": 1})
            assert r.url == server.url + "/anything"
            echo = r.json()
            assert (echo["method"], json.loads(echo["body"])) == ("POST", {"a": 1})
            r = await c.request("GET", server.url + "/anything", params={"q": "a b"})
            assert r.json()["query"] == "q=a%20b"
            r = await c.request("PUT", server.url + "/anything", body=iter([b"ab", b"cd"]))  # read first
            assert r.json()["body"] == "abcd"
            assert (await c.request("GET", server.url + "/gzip")).json()["coding"] == "gzip"
            with pytest.raises(reqwest_client.TooManyRedirects):
                await c.request("GET", server.url + "/redirect/11")
            n = 1024 * 1024
            async with c.stream("GET", server.url + f"/bytes/{n}") as s:
                assert s.status == 200 and s.headers["content-length"] == str(n)
                sizes = [len(chunk) async for chunk in s.aiter_bytes()]
            assert len(sizes) > 1 and sum(sizes) == n
            assert s.closed
            async with c.stream("GET", server.url + "/stream/3") as s:
                assert (await s.aread()).count(b"\n") == 3
            async with c.stream("GET", server.url + "/bytes/1048576") as s:
                async for _chunk in s.aiter_bytes():
                    break  # leave early: closed with the block
            with pytest.raises(TimeoutError):
                await c.request("GET", server.url + "/delay/3000", timeout=0.3)
            assert await c.get(server.url + "/") == 200

    asyncio.run(asyncio.wait_for(main(), 60))


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
    async def burst(n: int) -> list[tuple[int, int]]:
        async with AsyncClient(timeout=10) as a:
            return list(await asyncio.gather(*(a.fetch_len(f"{server.url}/bytes/{i}") for i in range(n))))

    assert asyncio.run(burst(300)) == [(200, i) for i in range(300)]
    results: list[list[tuple[int, int]]] = []
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


@pytest.mark.slow
def test_exit_right_after_an_await_is_clean(server: Server, closed_port_url: str) -> None:
    """The interpreter finalizes right after the last await, while the request's threads may still be
    finishing: a bridge that resolved futures from tokio threads could abort the process (SIGABRT) there
    (bindings/reqwest/README.md). Fifteen runs, every one exits with status 0."""
    for _ in range(15):
        p = subprocess.run(
            [sys.executable, "-c", EXIT_RIGHT_AFTER_AWAIT, closed_port_url, server.url + "/"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
