"""Both bindings on the two interpreters of `make freethreaded` (one CPython source, one set of flags, with and
without the GIL): importing them keeps the GIL off on the free-threaded build, a request that holds the GIL
stops the other Python threads on the GIL build only, and each binding survives many threads (a client per
thread for beast, one shared client for reqwest).

`make test` builds the interpreters first; where the CPython source cannot be fetched, `make freethreaded`
records why in build/cpython/unavailable and these tests skip with that reason."""

from __future__ import annotations

import pytest
from clientbench.environment.interpreters import Interpreter
from support.freethreaded import interpreters, needs, run_python, unavailable

if why := unavailable():
    pytest.skip(why, allow_module_level=True)
FT, GIL = interpreters()


def _counting_during_held_call(interp: Interpreter, url: str) -> dict[str, int]:
    return run_python(
        interp,
        f"""
        import json, threading, time, beast_client
        c = beast_client.Client(timeout=10)
        c.get({url!r})  # connected
        t = threading.Thread(target=lambda: c.get({url!r} + "delay/400", release_gil=False))
        # a fixed window that the 400 ms call covers: a thread blocked on the GIL counts only after the call
        end = time.perf_counter() + 0.3
        t.start()
        time.sleep(0.02)  # (releases the GIL: the other thread enters its call)
        n = 0
        while time.perf_counter() < end:
            n += 1
        t.join()
        print(json.dumps({{"count": n}}))
    """,
    )


def test_holding_the_gil_stops_other_threads_on_the_gil_build_only(server):
    """On the GIL build a pure-Python thread nearly stops while another holds the GIL in a request; on the
    free-threaded build it keeps running (measured in the same test, as a ratio)."""
    if GIL is None:
        pytest.fail("`make freethreaded` built no interpreter with the GIL (it builds both from one source)")
    needs(FT, "beast_client")
    needs(GIL, "beast_client")
    free = _counting_during_held_call(FT, server.url + "/")["count"]
    held = _counting_during_held_call(GIL, server.url + "/")["count"]
    assert free > 10 * max(held, 1), (free, held)


def test_many_threads_each_with_its_own_beast_client(server):
    needs(FT, "beast_client")
    out = run_python(
        FT,
        f"""
        import json, sys, threading, beast_client
        results = []
        def work():
            with beast_client.Client(timeout=10) as c:
                results.append([c.fetch_len({server.url!r} + "/bytes/1000", release_gil=i % 2 == 0)
                                for i in range(200)])
        threads = [threading.Thread(target=work) for _ in range(16)]
        [t.start() for t in threads]; [t.join() for t in threads]
        print(json.dumps({{"gil": sys._is_gil_enabled(), "results": results}}))
    """,
    )
    assert out["gil"] is False
    assert len(out["results"]) == 16
    assert all(r == [200, 1000] for rs in out["results"] for r in rs)


def test_many_threads_sharing_one_reqwest_client(server):
    needs(FT, "reqwest_client")
    out = run_python(
        FT,
        f"""
        import json, sys, threading, reqwest_client
        c = reqwest_client.Client(timeout=10)
        results = []
        def work():
            results.append([c.fetch_len({server.url!r} + "/bytes/1000", release_gil=i % 2 == 0)
                            for i in range(200)])
        threads = [threading.Thread(target=work) for _ in range(16)]
        [t.start() for t in threads]; [t.join() for t in threads]
        print(json.dumps({{"gil": sys._is_gil_enabled(), "results": results}}))
    """,
    )
    assert out["gil"] is False
    assert len(out["results"]) == 16
    assert all(r == [200, 1000] for rs in out["results"] for r in rs)
