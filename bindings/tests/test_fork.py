"""Fork safety of every binding client (beast_client.Client, reqwest_client.Client and both AsyncClients;
docs/binding-api.md, "Fork"): after `fork()` (multiprocessing's fork start method, or a bare `os.fork()`) a
child gets working clients, the one it inherited (already used by the parent) and new ones: their runtimes
and pools are made anew in the child, which never sends a byte on a connection the parent pooled. The
parent's connections stay the parent's: after the child has used (and closed) the client, the parent's next
requests go out on the connections it had. A stream the parent opened cannot be read by the child
(RuntimeError); the parent reads it whole afterwards.

The server tags every response with the number of the connection it came on. Each child runs under a time
limit: a child that hangs (as AsyncClient's child once did) fails the test instead of stalling it."""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import multiprocessing
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.binding_clients import FACTORIES, MODULES, is_async
from support.rawserver import Conn, RawServer

T = 5.0  # each request's own timeout
CHILD_LIMIT = 30.0  # seconds a child may take in all


def open_client(kind: str, **options: Any) -> Any:
    """A client of `kind` (an AsyncClient itself, not the adapter of `new`: parent and child run its coroutines)."""
    if is_async(kind):
        return MODULES[kind].AsyncClient(timeout=T, **options)
    return MODULES[kind].Client(timeout=T, **options)


def request(kind: str, c: Any, url: str) -> Any:
    if is_async(kind):
        return asyncio.run(c.request("GET", url))
    return c.request("GET", url)


def tags(kind: str, c: Any, url: str) -> list[str]:
    """The connections (their tags) that a request() and a fetch() of `c` went out on."""
    if is_async(kind):

        async def both() -> list[str]:
            r = await c.request("GET", url)
            _, body = await c.fetch(url)
            return [r.text(), body.decode()]

        return asyncio.run(both())
    return [c.request("GET", url).text(), c.fetch(url)[1].decode()]


@pytest.fixture()
def tagged(raw_server: Callable[..., RawServer]) -> RawServer:
    """Every response's body is the number of the connection it came on (1, 2, ...)."""
    lock = threading.Lock()
    numbers = itertools.count(1)

    def handler(conn: Conn) -> None:
        with lock:
            n = next(numbers)
        while conn.read_request(timeout=20) is not None:
            conn.respond(str(n).encode())

    return raw_server(handler)


def outcome(work: Callable[[], Any]) -> dict[str, Any]:
    try:
        return {"ok": work()}
    except BaseException as e:  # reported by the parent
        return {"error": f"{type(e).__name__}: {e}"}


def _mp_child(work: Callable[[], Any], conn: Any) -> None:
    conn.send(outcome(work))
    conn.close()


def in_child(how: str, work: Callable[[], Any]) -> Any:
    """Run `work()` in a forked child and return what it returned (its exception fails the test); a child
    that has not answered within CHILD_LIMIT is killed and fails the test."""
    if how == "multiprocessing":
        ctx = multiprocessing.get_context("fork")
        reader, writer = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_mp_child, args=(work, writer))
        p.start()
        writer.close()
        try:
            if not reader.poll(CHILD_LIMIT):
                pytest.fail(f"the child did not answer within {CHILD_LIMIT} s (hung)")
            result = reader.recv()
        finally:
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()
        assert p.exitcode == 0, p.exitcode
    else:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            try:
                os.close(r)
                os.write(w, json.dumps(outcome(work)).encode())
            finally:
                os._exit(0)
        os.close(w)
        data = b""
        deadline = time.monotonic() + CHILD_LIMIT
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([r], [], [], left)[0]:
                    pytest.fail(f"the child did not answer within {CHILD_LIMIT} s (hung)")
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(r)
            for _ in range(50):
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        result = json.loads(data)
    assert "error" not in result, result["error"]
    return result["ok"]


@pytest.mark.parametrize("how", ["multiprocessing", "os.fork"])
def test_a_forked_child_gets_working_clients(kind: str, how: str, tagged: RawServer) -> None:
    url = tagged.url + "/"
    c = open_client(kind)
    parents = set(tags(kind, c, url))

    def child() -> list[str]:
        got = tags(kind, c, url) + tags(kind, c, url)  # the inherited client, twice
        fresh = open_client(kind)
        got += tags(kind, fresh, url)
        fresh.close()
        c.close()  # closing (and dropping) the inherited client leaves the parent's connections alone
        gc.collect()
        return got

    children = in_child(how, child)
    assert len(children) == 6 and all(t.isdigit() for t in children), children
    assert not parents & set(children), f"the child used the parent's connections: {parents} {children}"
    # the parent goes on with its own connections
    for _ in range(2):
        assert set(tags(kind, c, url)) <= parents
    c.close()
    # and a second child, of a parent that closed its client, still gets working clients
    assert len(in_child(how, lambda: tags(kind, open_client(kind), url))) == 2


def test_a_grandchild_gets_working_clients(tagged: RawServer) -> None:
    url = tagged.url + "/"
    clients = {kind: open_client(kind) for kind in FACTORIES}
    parents = {t for kind, c in clients.items() for t in tags(kind, c, url)}

    def child() -> dict[str, list[str]]:
        mine = [t for kind, c in clients.items() for t in tags(kind, c, url)]
        grand = in_child("os.fork", lambda: [t for kind, c in clients.items() for t in tags(kind, c, url)])
        return {"child": mine, "grandchild": grand}

    got = in_child("os.fork", child)
    mine, grand = set(got["child"]), set(got["grandchild"])
    assert len(got["child"]) == len(got["grandchild"]) == 2 * len(FACTORIES)
    assert not parents & (mine | grand) and not mine & grand, (parents, mine, grand)
    for kind, c in clients.items():
        assert set(tags(kind, c, url)) <= parents
        c.close()


def test_a_stream_opened_before_fork_stays_the_parents(kind: str, raw_server: Callable[..., RawServer]) -> None:
    release = threading.Event()
    body = b"a" * 1000 + b"b" * 1000

    def half_then_rest(conn: Conn) -> None:
        if conn.read_request(timeout=10) is None:
            return
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n" + body[:1000])
        release.wait(CHILD_LIMIT)
        conn.send(body[1000:])
        conn.read_request(timeout=5)

    srv = raw_server(half_then_rest)
    c = open_client(kind)
    if is_async(kind):
        loop = asyncio.new_event_loop()
        ctx = c.stream("GET", srv.url + "/")
        s = loop.run_until_complete(ctx.__aenter__())
        it = s.aiter_bytes()
        first = loop.run_until_complete(it.__anext__())

        def read_in_child() -> str:
            async def read() -> bytes:
                return b"".join([chunk async for chunk in s.aiter_bytes()])

            try:
                asyncio.run(read())
            except RuntimeError as e:
                return str(e)
            return "read"

        def rest() -> bytes:
            async def read() -> bytes:
                return b"".join([chunk async for chunk in it])

            return loop.run_until_complete(read())
    else:
        s = c.stream("GET", srv.url + "/")
        it = s.iter_bytes()
        first = next(it)

        def read_in_child() -> str:
            try:
                s.read()
            except RuntimeError as e:
                return str(e)
            return "read"

        def rest() -> bytes:
            return b"".join(it)

    assert body.startswith(first)
    said = in_child("os.fork", read_in_child)
    assert "fork" in said, said
    release.set()
    assert first + rest() == body
    if is_async(kind):
        loop.run_until_complete(ctx.__aexit__(None, None, None))
        loop.close()
    else:
        s.close()
    c.close()


def test_the_child_keeps_a_copy_of_the_cookies(kind: str, server: Server) -> None:
    c = open_client(kind, cookies=True)
    request(kind, c, server.url + "/cookies/set?a=1")

    def child() -> list[str]:
        request(kind, c, server.url + "/cookies/set?b=2")
        return request(kind, c, server.url + "/headers").json()["cookie"]  # type: ignore[no-any-return]

    assert sorted(in_child("os.fork", child)[0].split("; ")) == ["a=1", "b=2"]
    assert request(kind, c, server.url + "/headers").json()["cookie"] == ["a=1"]  # the child's is its own
    c.close()
