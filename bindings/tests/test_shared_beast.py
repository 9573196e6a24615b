"""One beast_client.Client shared by threads, against the axum server and a raw server that holds requests
until enough are there (`Gate`): every response right and none refused, max_connections bounding the
connections per origin (and a request waiting for one), and the GIL released while the threads wait: the
connections a client opens tell whether its requests overlapped (a request takes a connection of its own; a
request that starts when another has finished re-uses its connection, handed back before the request
returns). No assertion on a time: counts of connections (the client's and the servers') and outcomes, which
the gate makes certain however loaded the machine is (the requests that must overlap do, as the server
answers none of them until they all are there)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable

import beast_client
import pytest
from clientbench.execution.server import Server
from support.rawserver import HELLO, Conn, RawServer

#: the longest a Gate waits for its requests to meet before it lets them go (then `met` is false)
PATIENCE = 30.0


class Gate:
    """A RawServer handler that holds every request until `meet` requests are held at once (from then on the
    gate stays open: `met`) or `open()` is called, plus `hold` seconds, and counts them: `peak`, the most held
    at once; `arrived`, set at the first. (The same as bindings/tests/test_shared_http2.py's.)"""

    def __init__(self, meet: int | None, hold: float = 0.0, body: bytes = HELLO) -> None:
        self.meet, self.hold, self.body = meet, hold, body
        self.cond = threading.Condition()
        self.held = self.peak = 0
        self.opened = self.met = False
        self.arrived = threading.Event()

    def open(self) -> None:
        with self.cond:
            self.opened = True
            self.cond.notify_all()

    def __call__(self, conn: Conn) -> None:
        while conn.read_request(timeout=PATIENCE) is not None:
            with self.cond:
                self.held += 1
                self.peak = max(self.peak, self.held)
                self.arrived.set()
                if self.meet is not None and self.held >= self.meet:
                    self.met = self.opened = True
                    self.cond.notify_all()
                self.cond.wait_for(lambda: self.opened, timeout=PATIENCE)
            time.sleep(self.hold)  # keeps the requests in flight together: pressure on max_connections
            with self.cond:
                self.held -= 1
            conn.respond(self.body)


def connections(server: Server) -> int:
    """The connections the server has accepted so far (this request's own included)."""
    with urllib.request.urlopen(server.url + "/stats", timeout=10) as r:
        return int(json.loads(r.read())["connections"])


def run_threads(n: int, work: Callable[[int], None]) -> list[BaseException]:
    """Runs work(t) on n threads started together; the exceptions they raised."""
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(n)

    def body(t: int) -> None:
        try:
            start.wait(10)
            work(t)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=body, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads), "a thread did not finish"
    return errors


def test_sixteen_threads_share_one_client(server: Server) -> None:
    """16 threads x 200 requests over one Client: the benchmark path and request(), each answer checked
    (/echo returns the thread's own body), none refused, at most one connection per thread."""
    before = connections(server)
    client = beast_client.Client(timeout=30)
    wrong: list[str] = []
    lock = threading.Lock()

    def work(t: int) -> None:
        for i in range(200):
            body = f"thread {t} request {i} ".encode() * (1 + i % 7)
            kind = i % 4
            if kind == 0:
                ok = client.get(server.url + "/") == 200
            elif kind == 1:
                n = 100 + 7 * t + i
                ok = client.fetch_len(f"{server.url}/bytes/{n}") == (200, n)
            elif kind == 2:
                ok = client.fetch(server.url + "/echo", method="POST", body=body) == (200, body)
            else:
                r = client.request("POST", server.url + "/echo", body=body)
                ok = r.status == 200 and r.body == body
            if not ok:
                with lock:
                    wrong.append(f"thread {t} request {i} ({kind})")

    errors = run_threads(16, work)
    assert errors == []
    assert wrong == []
    opened = client._connections_opened
    assert 1 <= opened <= 16
    assert connections(server) - before == opened + 1  # + this /stats request's
    client.close()


def test_max_connections_bounds_the_connections(raw_server: Callable[[Gate], RawServer]) -> None:
    """max_connections=2: 8 threads x 10 requests go through 2 connections, both needed (the server answers
    the first request only once a second is there), no more."""
    gate = Gate(meet=2, hold=0.005)
    srv = raw_server(gate)
    client = beast_client.Client(timeout=30, max_connections=2)

    def work(t: int) -> None:
        for _ in range(10):
            assert client.get(srv.url + "/") == 200

    assert run_threads(8, work) == []
    assert gate.met and gate.peak == 2, (gate.met, gate.peak)
    assert client._connections_opened == srv.accepted == 2
    client.close()


@pytest.mark.timeout(60)
def test_a_request_waits_for_a_free_connection_at_most_the_connect_timeout(
    raw_server: Callable[[Gate], RawServer],
) -> None:
    """The holder's request is held until the gate opens, after the wait; the client has no total timeout, so
    only connect_timeout can end the wait (without it, the test's own timeout would)."""
    gate = Gate(meet=None)
    srv = raw_server(gate)
    client = beast_client.Client(connect_timeout=0.2, max_connections=1)
    holder = threading.Thread(target=client.get, args=(srv.url + "/",))
    holder.start()
    try:
        assert gate.arrived.wait(30), "the holder's request did not arrive"
        with pytest.raises(TimeoutError, match=r"max_connections \(1\)"):
            client.get(srv.url + "/")
    finally:
        gate.open()
        holder.join(30)
    assert client.get(srv.url + "/") == 200  # handed back: re-used
    assert client._connections_opened == srv.accepted == 1
    assert len(srv.heads) == 2  # the one that waited was never sent
    client.close()


def test_threads_overlap_with_the_gil_released(raw_server: Callable[[Gate], RawServer]) -> None:
    """8 threads, one request each, over one client, to a server that answers none until all 8 are there: with
    the GIL released they wait together, so the pool opens 8 connections. (Were the GIL held, the first would
    wait alone, this in-process server could not run, and the requests would time out.)"""
    gate = Gate(meet=8)
    srv = raw_server(gate)
    client = beast_client.Client(timeout=PATIENCE + 30)

    def work(t: int) -> None:
        assert client.get(srv.url + "/") == 200

    assert run_threads(8, work) == []
    assert gate.met
    assert client._connections_opened == srv.accepted == 8
    client.close()


def test_threads_take_turns_with_the_gil_held(server: Server) -> None:
    """8 threads, one request each (100 ms at the server, another process) over one client, with the GIL held:
    one thread at a time runs its request and the next one re-uses the connection."""
    client = beast_client.Client(timeout=30)

    def work(t: int) -> None:
        assert client.get(f"{server.url}/delay/100", release_gil=False) == 200

    assert run_threads(8, work) == []
    assert client._connections_opened == 1
    client.close()


def test_close_while_threads_share_the_client(server: Server) -> None:
    """close() from one thread while others are in requests: those finish, later ones raise RuntimeError."""
    client = beast_client.Client(timeout=30)
    outcomes: list[str] = []
    lock = threading.Lock()

    def work(t: int) -> None:
        if t == 0:
            threading.Event().wait(0.1)
            client.close()
            return
        for _ in range(100):
            try:
                status = client.get(server.url + "/delay/5")
                result = "ok" if status == 200 else f"status {status}"
            except RuntimeError as exc:
                result = "closed" if "closed" in str(exc) else f"other {exc}"
            with lock:
                outcomes.append(result)

    assert run_threads(4, work) == []
    assert set(outcomes) <= {"ok", "closed"}, set(outcomes)
    assert "closed" in outcomes
    assert client._connections_opened >= 1
    with pytest.raises(RuntimeError, match="closed"):
        client.get(server.url + "/")


@pytest.mark.parametrize(("value", "error"), [(0, ValueError), (-1, ValueError), ("2", TypeError), (True, TypeError)])
def test_max_connections_is_checked(value: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="max_connections"):
        beast_client.Client(max_connections=value)  # type: ignore[arg-type]
