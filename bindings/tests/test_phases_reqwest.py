"""reqwest_client's phases: `Response.phases` (seconds), `Client.fetch_phases` and `AsyncClient.fetch_phases`
(`(status, length, {key: ns})`) against a server of the test's own (support/dualserver.py: TLS and plain HTTP on
one port) that waits HEAD_S before each response head and BODY_S between the head and the body: `send+wait` and
`receive` within 10% + 1 ms of them, `connect+tls` non-zero on a new connection and 0 on a reused one, the keys in
the contract's order (`dns+connect+tls` for a host name); the GIL released as fetch_len releases it (against the
axum server, out of this process)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable

import pytest
import reqwest_client
from clientbench.execution.server import Server
from support.dualserver import DualHandler, DualServer
from support.rawserver import Conn
from support.timing import about, retimed, timed

pytestmark = retimed  # a timed check that misses runs the test again (support/timing.py)

HEAD_S = 0.100
BODY_S = 0.060
BODY = b"hello, phases"
KEYS = ("connect+tls", "send+wait", "receive")
T = 10.0


def slow(conn: Conn, tls: bool) -> None:
    """Keep-alive: each answer's head after HEAD_S, its body BODY_S after the head (two sends, without Nagle, which
    would hold the body back until the client's delayed ACK of the head)."""
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while conn.read_request(timeout=5) is not None:
        time.sleep(HEAD_S)
        conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY))
        time.sleep(BODY_S)
        conn.send(BODY)


@pytest.fixture()
def slow_server(dual_server: Callable[[DualHandler], DualServer]) -> DualServer:
    return dual_server(slow)


def check(phases: dict[str, float], new_connection: bool, what: str, keys: tuple[str, ...] = KEYS) -> None:
    assert tuple(phases) == keys, what
    assert all(isinstance(v, float) and v >= 0 for v in phases.values()), (what, phases)
    about(phases["send+wait"], HEAD_S, what, phases)
    about(phases["receive"], BODY_S, what, phases)
    assert (phases[keys[0]] > 0) == new_connection, (what, phases)


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_response_phases(slow_server: DualServer, scheme: str) -> None:
    url = slow_server.origin(scheme, "127.0.0.1") + "/"
    with reqwest_client.Client(timeout=T, verify=slow_server.ca_file) as c:
        for i, new in enumerate([True, False, False]):
            r = c.request("GET", url)
            assert (r.status, r.body) == (200, BODY)
            check(r.phases, new, f"{scheme} request {i}")
        # the phases fit in what the caller measured
        t = time.perf_counter()
        r = c.request("GET", url)
        assert sum(r.phases.values()) <= time.perf_counter() - t
        # by name: the name's resolution is in the new connection's time
        r = c.request("GET", slow_server.origin(scheme, "localhost") + "/")
        check(r.phases, True, "localhost", ("dns+connect+tls", "send+wait", "receive"))
    assert slow_server.accepted == 2


def test_fetch_phases(slow_server: DualServer) -> None:
    url = slow_server.origin("https", "127.0.0.1") + "/"
    with reqwest_client.Client(timeout=T, verify=slow_server.ca_file) as c:
        for i, new in enumerate([True, False]):
            status, length, ns = c.fetch_phases(url)
            assert (status, length) == (200, len(BODY)) and c.last_body_bytes == len(BODY)
            assert all(isinstance(v, int) for v in ns.values()), ns
            check({k: v / 1e9 for k, v in ns.items()}, new, f"request {i}")
    with reqwest_client.Client(timeout=T, verify=slow_server.ca_file) as c:
        assert c.fetch_len(url) == (200, len(BODY))  # no phases asked: the same exchange
        with pytest.raises(ValueError):
            c.fetch_phases("ftp://127.0.0.1/")


def test_fetch_phases_releases_the_gil_as_fetch_len(server: Server) -> None:
    """Against the axum server (another process: a server thread of this one would wait for the GIL too), whose
    /delay/100 answers after 100 ms: send+wait is that, the GIL held or released; while fetch_phases waits another
    Python thread runs, unless release_gil=False."""
    url = server.url + "/delay/100"

    def ticks_during(call: Callable[[], tuple[int, int, dict[str, int]]]) -> tuple[int, dict[str, int]]:
        stop = threading.Event()
        count = [0]

        def spin() -> None:
            while not stop.is_set():
                count[0] += 1
                time.sleep(0.001)

        t = threading.Thread(target=spin)
        t.start()
        time.sleep(0.005)
        start = count[0]
        status, _, ns = call()
        ticks = count[0] - start
        stop.set()
        t.join()
        assert status == 200
        return ticks, ns

    with reqwest_client.Client(timeout=T) as c:
        c.fetch_phases(url)  # the connection, kept
        released, ns = ticks_during(lambda: c.fetch_phases(url))
        assert ns["connect+tls"] == 0, ns
        about(ns["send+wait"] / 1e9, 0.100, ns)
        held, ns = ticks_during(lambda: c.fetch_phases(url, release_gil=False))
        assert ns["connect+tls"] == 0, ns
        about(ns["send+wait"] / 1e9, 0.100, ns)
    timed(released >= 20, released)  # ~100 ms of 1 ms sleeps
    assert held <= 2, held


def test_async_fetch_phases_and_response_phases(slow_server: DualServer) -> None:
    url = slow_server.origin("https", "127.0.0.1") + "/"

    async def main() -> None:
        async with reqwest_client.AsyncClient(timeout=T, verify=slow_server.ca_file) as a:
            status, length, ns = await a.fetch_phases(url)
            assert (status, length) == (200, len(BODY))
            check({k: v / 1e9 for k, v in ns.items()}, True, "async first")
            status, length, ns = await a.fetch_phases(url)
            check({k: v / 1e9 for k, v in ns.items()}, False, "async second")
            # request() decompresses (the default), on a second pool: a connection of its own, then kept
            r = await a.request("GET", url)
            check(r.phases, True, "async request")
            r = await a.request("GET", url)
            check(r.phases, False, "async request again")

    asyncio.run(main())
