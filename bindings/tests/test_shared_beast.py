"""One beast_client.Client shared by threads, against the axum server: every response right and none refused,
max_connections bounding the connections per origin (and a request waiting for one), and the GIL released
while the threads wait: the connections a client opens tell whether its requests overlapped (a request
takes a connection of its own; a request that starts when another has finished re-uses its connection).
No assertion on a time: counts of connections (the client's and the server's /stats) and outcomes."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Callable

import beast_client
import pytest
from clientbench.execution.server import Server


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


def test_max_connections_bounds_the_connections(server: Server) -> None:
    """max_connections=2: 8 threads, each request 10 ms at the server, go through 2 connections."""
    before = connections(server)
    client = beast_client.Client(timeout=30, max_connections=2)

    def work(t: int) -> None:
        for _ in range(10):
            assert client.get(server.url + "/delay/10") == 200

    assert run_threads(8, work) == []
    assert client._connections_opened == 2  # the threads overlapped: both were needed, and no more
    assert connections(server) - before == 2 + 1
    client.close()


def test_a_request_waits_for_a_free_connection_at_most_the_connect_timeout(server: Server) -> None:
    client = beast_client.Client(timeout=30, connect_timeout=0.2, max_connections=1)
    holder = threading.Thread(target=client.get, args=(server.url + "/delay/1500",))
    holder.start()
    try:
        for _ in range(1000):  # until the holder has the only connection
            if client._connections_opened == 1:
                break
            threading.Event().wait(0.005)
        with pytest.raises(TimeoutError, match=r"max_connections \(1\)"):
            client.get(server.url + "/")
    finally:
        holder.join(30)
    assert client.get(server.url + "/") == 200  # handed back: re-used
    assert client._connections_opened == 1
    client.close()


@pytest.mark.parametrize("release_gil", [True, False])
def test_threads_overlap_only_with_the_gil_released(server: Server, release_gil: bool) -> None:
    """8 threads, one request each (800 ms at the server) over one client: with the GIL released they wait
    together, so the pool opens 8 connections; with it held, one thread at a time runs its request and the
    next one re-uses the connection."""
    client = beast_client.Client(timeout=30)
    delay = 800 if release_gil else 100

    def work(t: int) -> None:
        assert client.get(f"{server.url}/delay/{delay}", release_gil=release_gil) == 200

    assert run_threads(8, work) == []
    assert client._connections_opened == (8 if release_gil else 1)
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
