"""beast_client (pybind11 binding of cpp-beast): API, argument errors, keep-alive, threads, signals, the GIL.

The fault catalogue (bad URLs, refused, timeouts, broken and malformed responses, idle keep-alive closes) is
python/tests/test_faults.py, for both bindings at once; the benchmark drivers are python/tests/test_drivers.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import beast_client
import pytest

# ---- API shape ------------------------------------------------------------------------------------


def test_module_metadata():
    assert isinstance(beast_client.__version__, str) and beast_client.__version__
    assert beast_client.boost_version.count(".") == 2
    assert issubclass(beast_client.ProtocolError, OSError)
    assert beast_client.ProtocolError.__module__ == "beast_client"
    assert set(beast_client.__all__) >= {"Client", "Response", "ProtocolError", "__version__", "boost_version"}


def test_get_returns_status_and_counts_the_body(server):
    with beast_client.Client(timeout=5.0) as c:
        assert c.get(server.url + "/") == 200
        assert c.last_body_bytes == len(b"Hello, World!")
        assert c.get(server.url + "/bytes/1000000") == 200
        assert c.last_body_bytes == 1_000_000
        assert c._connections_opened == 1  # keep-alive


def test_context_manager_and_close(server):
    c = beast_client.Client(timeout=2.5)
    assert c.timeout == 2.5 and not c.closed
    assert repr(c) == "<beast_client.Client timeout=2.5>"
    with c as same:
        assert same is c
        assert c.get(server.url + "/") == 200
    assert c.closed and repr(c).endswith(" closed>")
    for call in (
        lambda: c.get(server.url + "/"),
        lambda: c.fetch_len(server.url + "/"),
        lambda: c.request("GET", server.url + "/"),
    ):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    c.close()  # idempotent
    assert beast_client.Client().timeout is None  # no total limit by default (connect/read timeouts instead)
    assert repr(beast_client.Client()) == "<beast_client.Client timeout=None>"


def test_exit_does_not_swallow_exceptions(server):
    with pytest.raises(KeyError):
        with beast_client.Client() as c:
            raise KeyError("x")
    assert c.closed


def test_fetch_len(server):
    with beast_client.Client(timeout=5.0) as c:
        assert c.fetch_len(server.url + "/bytes/12345") == (200, 12345)
        status, n = c.fetch_len(server.url + "/status/500", release_gil=False)
        assert status == 500 and n == c.last_body_bytes


def test_clients_take_attributes(server):
    c = beast_client.Client()
    c.kind = "beast"  # a __dict__, like a plain Python object
    assert c.kind == "beast"
    assert type(c).__module__ == "beast_client" and beast_client.Response.__module__ == "beast_client"
    c.close()


def test_request_post_with_headers_and_body(server):
    with beast_client.Client(timeout=5.0) as c:
        r = c.request(
            "POST",
            server.url + "/echo",
            headers={"Content-Type": "text/plain", "X-Test": "1"},
            body=b"payload \x00\xff",
        )
        assert isinstance(r, beast_client.Response)
        assert r.status == 200
        assert r.body == b"payload \x00\xff"
        assert isinstance(r.headers, beast_client.Headers)
        assert r.headers["content-length"] == str(len(r.body))
        assert "content-length" in list(r.headers)  # names lower-cased
        assert c.last_body_bytes == len(r.body)
        # bytes-like bodies, no body, read-only fields
        assert c.request("POST", server.url + "/echo", body=bytearray(b"ab")).body == b"ab"
        assert c.request("POST", server.url + "/echo", body=memoryview(b"xabc")[1:]).body == b"abc"
        assert c.request("POST", server.url + "/echo").body == b""
        assert c.request("POST", server.url + "/echo", body=b"held", release_gil=False).body == b"held"
        assert r.headers is r.headers  # the same Headers on each access
        with pytest.raises(AttributeError):
            r.status = 1  # type: ignore[misc]


def test_request_argument_types(server):
    with beast_client.Client(timeout=5.0) as c:
        with pytest.raises(TypeError):
            c.request("POST", server.url + "/echo", body="text")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            c.request("GET", server.url + "/", headers={"a": 1})  # type: ignore[dict-item]
        with pytest.raises(TypeError):
            c.get(server.url + "/", True)  # type: ignore[misc]  # release_gil is keyword-only
        with pytest.raises(ValueError):
            c.request("GET", server.url + "/", headers={"X-Evil": "a\r\nInjected: 1"})
        with pytest.raises(ValueError):
            c.request("BAD METHOD", server.url + "/")
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            beast_client.Client(timeout=bad)


def test_non_2xx_is_returned_not_raised(server):
    with beast_client.Client(timeout=5.0) as c:
        assert c.get(server.url + "/status/500") == 500
        assert c.get(server.url + "/status/404", release_gil=False) == 404
        assert c.request("GET", server.url + "/status/503").status == 503


def test_keep_alive_reopens_after_connection_close(server):
    with beast_client.Client(timeout=5.0) as c:
        assert c.get(server.url + "/close") == 200
        assert c.get(server.url + "/") == 200
        assert c.get(server.url + "/") == 200
        assert c._connections_opened == 2


# ---- errors ---------------------------------------------------------------------------------------


def test_concurrent_use_of_one_client_is_runtime_error(server):
    with beast_client.Client(timeout=5.0) as c:
        result: list[object] = []
        t = threading.Thread(target=lambda: result.append(c.get(server.url + "/delay/400")))
        t.start()
        time.sleep(0.15)  # the other thread is inside get(), GIL released
        with pytest.raises(RuntimeError, match="already in use"):
            c.get(server.url + "/")
        t.join()
        assert result == [200]
        assert c.get(server.url + "/") == 200


def test_one_client_per_thread_in_parallel(server):
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with beast_client.Client(timeout=5.0) as c:
                for _ in range(50):
                    assert c.get(server.url + "/") == 200
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


class _Interrupted(Exception):
    pass


@pytest.mark.parametrize("release_gil", [True, False])
def test_signal_interrupts_a_blocked_get(server, release_gil):
    """A signal handler that raises (like Ctrl-C's KeyboardInterrupt) stops a waiting get() promptly."""
    assert threading.current_thread() is threading.main_thread()  # Python runs handlers there

    def on_signal(signum, frame):
        raise _Interrupted()

    old = signal.signal(signal.SIGUSR1, on_signal)
    killer = None
    try:
        with beast_client.Client(timeout=10.0) as c:
            t0 = time.monotonic()
            # sent from another process: with the GIL held no Python thread of ours could run to send it
            killer = subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -USR1 {os.getpid()}"])
            with pytest.raises(_Interrupted):
                c.get(server.url + "/delay/5000", release_gil=release_gil)
            assert time.monotonic() - t0 < 1.0
            assert c.get(server.url + "/") == 200  # usable afterwards (a new connection)
    finally:
        if killer is not None:
            killer.wait(timeout=5)
        signal.signal(signal.SIGUSR1, old)


# ---- the GIL --------------------------------------------------------------------------------------


def _progress_during_get(url: str, release_gil: bool) -> tuple[int, float]:
    """How far a pure-Python counter thread gets while this thread is inside get(url)."""
    count = [0]
    running = [True]

    def spin() -> None:
        while running[0]:
            count[0] += 1

    with beast_client.Client(timeout=10.0) as c:
        c.get(url.rsplit("/delay/", 1)[0] + "/")  # connect first
        t = threading.Thread(target=spin)
        t.start()
        try:
            time.sleep(0.05)
            before = count[0]
            t0 = time.monotonic()
            assert c.get(url, release_gil=release_gil) == 200
            elapsed = time.monotonic() - t0
            after = count[0]
        finally:
            running[0] = False
            t.join()
    return after - before, elapsed


def test_gil_is_released_during_io(server):
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)  # the held run's leak (a switch or two around the call) stays tiny
    try:
        released, t_released = _progress_during_get(server.url + "/delay/300", release_gil=True)
        held, t_held = _progress_during_get(server.url + "/delay/300", release_gil=False)
    finally:
        sys.setswitchinterval(old)
    assert t_released >= 0.29 and t_held >= 0.29
    assert released >= 10 * max(held, 1), (released, held)


def test_threads_overlap_only_with_the_gil_released(server):
    def group(release_gil: bool) -> float:
        clients = [beast_client.Client(timeout=10.0) for _ in range(4)]
        for c in clients:
            c.get(server.url + "/")
        threads = [
            threading.Thread(target=c.get, args=(server.url + "/delay/200",), kwargs={"release_gil": release_gil})
            for c in clients
        ]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        for c in clients:
            c.close()
        return wall

    released, held = group(True), group(False)
    assert released < 0.6, released  # ~0.2 s: the four requests overlap
    assert held > 0.7, held  # ~0.8 s: one at a time
    assert held > 2 * released
