"""Both AsyncClients (beast_client.AsyncClient, reqwest_client.AsyncClient; docs/binding-api.md, "asyncio"):
their shape, request/stream on asyncio's loop and uvloop, coroutines awaited on any loop, cancellation (a
cancelled task abandons its request and closes its connection), one client shared by the tasks of a loop
(within max_connections), many concurrent requests and loops, and a clean interpreter exit right after an
await. Fork after async use is in test_fork.py, the fault catalogue (every AsyncClient included) in
test_faults.py. Every request is bounded; nothing here asserts a speed."""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Coroutine
from types import ModuleType
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.binding_clients import SYNC
from support.rawserver import Conn, Handler, RawServer

T = 20.0


pytestmark = pytest.mark.kinds(*SYNC)


def run_on(loop: str, coro: Coroutine[Any, Any, Any]) -> Any:
    """`coro` to completion on a new loop of the asyncio default's kind or uvloop's (a peer: `make peers`)."""
    factory = asyncio.new_event_loop
    if loop == "uvloop":
        factory = pytest.importorskip("uvloop").new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(asyncio.wait_for(coro, 60))


def test_shape(mod: ModuleType) -> None:
    a = mod.AsyncClient(timeout=2.5)
    assert a.timeout == 2.5 and not a.closed and a.verify is True and a.tls_info is None
    for name in ("get", "fetch_len", "fetch", "request", "__aenter__", "__aexit__"):
        assert inspect.iscoroutinefunction(getattr(mod.AsyncClient, name)), name
    assert repr(a) == f"<{mod.__name__}.AsyncClient timeout=2.5>"
    a.close()
    a.close()  # idempotent
    assert a.closed and "closed" in repr(a)
    # the Python layer both bindings share (bindings/common/_aio.py) is each package's own, as its extension is
    assert mod.AsyncClient.__module__ == mod.AsyncStreamResponse.__module__ == mod.__name__
    for kw in ({"timeout": 0}, {"timeout": float("nan")}, {"connect_timeout": 0}, {"read_timeout": -1}):
        with pytest.raises(ValueError):
            mod.AsyncClient(**kw)
    for kw in ({"max_redirects": -1}, {"max_connections": 0}, {"proxy": "not a url"}):
        with pytest.raises(ValueError):
            mod.AsyncClient(**kw)
    with pytest.raises(TypeError):
        mod.AsyncClient(cookies="yes")


def test_a_closed_client_raises_runtime_error(mod: ModuleType, server: Server) -> None:
    a = mod.AsyncClient()
    a.close()

    async def main() -> None:
        with pytest.raises(RuntimeError):
            await a.get(server.url + "/")

    asyncio.run(main())


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_requests_and_streams(mod: ModuleType, server: Server, loop: str) -> None:
    async def main() -> None:
        async with mod.AsyncClient(timeout=T) as c:
            assert await c.get(server.url + "/") == 200
            assert await c.fetch_len(server.url + "/bytes/54321") == (200, 54321)
            r = await c.request("POST", server.url + "/redirect-to?url=/anything&status=307", json={"a": 1})
            assert r.url == server.url + "/anything"
            assert (r.json()["method"], json.loads(r.json()["body"])) == ("POST", {"a": 1})
            r = await c.request("PUT", server.url + "/anything", body=iter([b"ab", b"cd"]))
            echoed = r.json()
            assert echoed["body"] == "abcd"  # streamed (chunked)
            assert echoed["headers"]["transfer-encoding"] == ["chunked"] and "content-length" not in echoed["headers"]
            for path in ("gzip", "brotli", "zstd"):
                assert (await c.request("GET", server.url + "/" + path)).json()["coding"] == path
            with pytest.raises(mod.TooManyRedirects):
                await c.request("GET", server.url + "/redirect/11")
            n = 1024 * 1024
            async with c.stream("GET", server.url + f"/bytes/{n}") as s:
                assert s.status == 200 and s.headers["content-length"] == str(n)
                sizes = [len(chunk) async for chunk in s.aiter_bytes()]
            assert len(sizes) > 1 and sum(sizes) == n and s.closed
            async with c.stream("GET", server.url + "/stream/3") as s:
                assert (await s.aread()).count(b"\n") == 3
            async with c.stream("GET", server.url + "/bytes/1048576") as s:
                async for _chunk in s.aiter_bytes():
                    break  # leave early: closed with the block
            with pytest.raises(TimeoutError):
                await c.request("GET", server.url + "/delay/3000", timeout=0.3)
            assert await c.get(server.url + "/") == 200  # still usable
        assert c.closed

    run_on(loop, main())


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_streams_an_upload_as_it_is_sent(mod: ModuleType, server: Server, loop: str, tmp_path: Any) -> None:
    """Each AsyncClient streams an iterable, an async iterable or a file (chunked), reading it on the loop as
    the request goes out (a source that waits is read while the request is under way); a streamed response's
    upload goes on while the answer is read; what the source raises is raised as itself."""
    seen: list[int] = []

    async def pieces() -> Any:
        for i in range(3):
            seen.append(i)
            await asyncio.sleep(0.01)
            yield b"%d" % i

    async def failing() -> Any:
        yield b"first"
        raise LookupError("the source failed")

    big = bytes(range(256)) * 4096  # 1 MiB, sent in 64 KiB pieces and echoed back

    async def chunks_of_big() -> Any:
        for i in range(0, len(big), 65536):
            yield big[i : i + 65536]

    path = tmp_path / "f.bin"
    path.write_bytes(b"\x00\xff" * 40000)

    async def main() -> None:
        async with mod.AsyncClient(timeout=T) as c:
            for body, want in (
                (pieces(), "012"),
                (iter([b"a", bytearray(b"b"), memoryview(b"c")]), "abc"),
                ([b"x", b"", b"y"], "xy"),
            ):
                echo = (await c.request("POST", server.url + "/anything", body=body)).json()
                assert echo["body"] == want and echo["headers"]["transfer-encoding"] == ["chunked"], echo
            assert seen == [0, 1, 2]
            with open(path, "rb") as f:
                echo = (await c.request("PUT", server.url + "/anything", body=f)).json()
            assert echo["body_len"] == 80000 and echo["headers"]["transfer-encoding"] == ["chunked"]
            async with c.stream("POST", server.url + "/echo", body=chunks_of_big()) as s:
                assert s.status == 200
                assert await s.aread() == big
            with pytest.raises(LookupError, match="the source failed"):
                await c.request("POST", server.url + "/anything", body=failing())
            with pytest.raises(LookupError, match="the source failed"):
                async with c.stream("POST", server.url + "/anything", body=failing()):
                    pass
            with pytest.raises(TypeError):
                await c.request("POST", server.url + "/anything", body=iter(["str chunk"]))
            with pytest.raises(TypeError):
                await c.request("POST", server.url + "/anything", body=42)
            r = await c.request("POST", f"{server.url}/redirect-to?url=/anything&status=307", body=iter([b"once"]))
            assert r.status == 307  # a streamed body is not sent twice
            assert await c.get(server.url + "/") == 200

    run_on(loop, main())


def test_upload_source_is_left_when_the_request_ends(mod: ModuleType, server: Server) -> None:
    """A request that ends (cancelled here) while its source still has chunks stops reading it: nothing is left
    running on the loop."""
    taken: list[int] = []

    async def endless() -> Any:
        i = 0
        while True:
            taken.append(i)
            i += 1
            yield b"x" * 65536
            await asyncio.sleep(0)

    async def main() -> None:
        async with mod.AsyncClient(timeout=T) as c:
            task = asyncio.ensure_future(c.request("POST", server.url + "/upload", body=endless()))
            while len(taken) < 20:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(0.1)
            n = len(taken)
            await asyncio.sleep(0.1)
            assert len(taken) == n, "the source is still being read"
            feeders = [t for t in asyncio.all_tasks() if getattr(t.get_coro(), "__name__", "") == "_feed"]
            assert feeders == []
            assert await c.get(server.url + "/") == 200

    run_on("asyncio", main())


def test_coroutines_run_on_any_loop_and_the_pool_outlives_loops(mod: ModuleType, server: Server) -> None:
    a = mod.AsyncClient(timeout=T)
    assert asyncio.run(a.get(server.url + "/")) == 200  # created outside a running loop, awaited in one
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(a.fetch_len(server.url + "/bytes/10")) == (200, 10)
        assert loop.run_until_complete(a.request("GET", server.url + "/")).status == 200
    finally:
        loop.close()
    assert run_on("uvloop", a.get(server.url + "/")) == 200
    a.close()


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_cancelled_task_abandons_its_request_and_closes_its_connection(
    mod: ModuleType, raw_server: Callable[[Handler], RawServer], loop: str
) -> None:
    """task.cancel() and asyncio.wait_for's timeout cancel the request: its connection is closed (the server
    sees it go), and the client goes on. Both ways a request can take: `get` (beast: on the loop's thread) and
    `request` (on the extension's I/O thread, abandoned through the Completer)."""
    dropped = threading.Semaphore(0)

    def silent(conn: Conn) -> None:
        head = conn.read_request()
        if head is not None and head.startswith(b"GET /ok "):
            conn.respond()
            return
        if conn.hold(5):  # the client dropped the connection
            dropped.release()

    async def main(url: str) -> None:
        a = mod.AsyncClient(timeout=30)
        task = asyncio.ensure_future(a.get(url + "/silent"))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(asyncio.TimeoutError):  # wait_for's, long before the client's 30 s
            await asyncio.wait_for(a.get(url + "/silent"), 0.1)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(a.request("GET", url + "/silent"), 0.1)
        assert await a.get(url + "/ok") == 200
        a.close()

    srv = raw_server(silent)
    run_on(loop, main(srv.url))
    assert srv.accepted == 4
    for _ in range(3):
        assert dropped.acquire(timeout=5), "a cancelled request's connection was not closed"


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_one_client_shared_by_the_tasks_of_a_loop(mod: ModuleType, own_server: Server, loop: str) -> None:
    """16 tasks share one client: each request takes a connection of its own from the pool, within
    max_connections; every answer is the request's own."""

    async def main() -> list[tuple[int, int]]:
        async with mod.AsyncClient(timeout=T, max_connections=4) as c:

            async def worker(w: int) -> list[tuple[int, int]]:
                return [await c.fetch_len(f"{own_server.url}/bytes/{w * 100 + i}") for i in range(20)]

            return [r for rs in await asyncio.gather(*(worker(w) for w in range(16))) for r in rs]

    before = own_server.stats()
    results = run_on(loop, main())
    after = own_server.stats()
    assert results == [(200, w * 100 + i) for w in range(16) for i in range(20)]
    assert before and after
    assert 1 <= after["connections"] - before["connections"] - 1 <= 4  # (- 1: the second /stats)


def test_many_concurrent_requests_and_loops(mod: ModuleType, server: Server) -> None:
    async def burst(n: int) -> list[tuple[int, int]]:
        async with mod.AsyncClient(timeout=T) as a:
            return list(await asyncio.gather(*(a.fetch_len(f"{server.url}/bytes/{i}") for i in range(n))))

    assert asyncio.run(burst(300)) == [(200, i) for i in range(300)]
    results: list[list[tuple[int, int]]] = []
    threads = [threading.Thread(target=lambda: results.append(asyncio.run(burst(50)))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == [[(200, i) for i in range(50)]] * 3


EXIT_RIGHT_AFTER_AWAIT = r"""
import asyncio, importlib, sys
mod = importlib.import_module(sys.argv[1])
async def main():
    async with mod.AsyncClient(timeout=5) as a:
        for url in sys.argv[2:]:
            try:
                await a.get(url)
            except OSError:
                pass
        # a request still running at the exit
        asyncio.ensure_future(a.get(sys.argv[-1].rstrip("/") + "/delay/2000"))
        await asyncio.sleep(0)
asyncio.run(main())
"""


@pytest.mark.slow
def test_exit_right_after_an_await_is_clean(mod: ModuleType, server: Server, closed_port_url: str) -> None:
    """The interpreter finalizes right after the last await, while the client's I/O may still be finishing
    (and a request still runs): no crash, no hang. Ten runs, every one exits with status 0."""
    for _ in range(10):
        p = subprocess.run(
            [sys.executable, "-c", EXIT_RIGHT_AFTER_AWAIT, mod.__name__, closed_port_url, server.url + "/"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
