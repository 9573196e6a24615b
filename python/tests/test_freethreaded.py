"""The clients and our bindings on the two interpreters of `make freethreaded` (one CPython source, one set of
flags, with and without the GIL): they run, the GIL stays off on the free-threaded build, holding the GIL no
longer serializes threads there, and the bindings survive many threads.

`make test` builds the interpreters first; where the CPython source cannot be fetched, `make freethreaded`
records why in build/cpython/unavailable and these tests skip with that reason."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest
from clientbench.run.clients import CLIENTS
from clientbench.run.driver import run_driver
from clientbench.run.interpreters import Interpreter, has_module, known
from clientbench.run.paths import repo_root
from clientbench.workload import Workload

UNAVAILABLE = repo_root() / "build" / "cpython" / "unavailable"
BUILT = known()
if UNAVAILABLE.exists():
    pytest.skip(f"free-threaded CPython: {UNAVAILABLE.read_text().strip()}", allow_module_level=True)
if not {label for label in BUILT if label.endswith("t")}:
    pytest.skip("no free-threaded interpreter built: run `make freethreaded`", allow_module_level=True)

FT = next(Interpreter(k, v) for k, v in BUILT.items() if k.endswith("t"))
GIL = next((Interpreter(k, v) for k, v in BUILT.items() if not k.endswith("t")), None)

ROWS = [
    "py-requests",
    "py-aiohttp",
    "py-httpx-sync",
    "py-urllib3",
    "py-pycurl",
    "py-beast-held",
    "py-beast-released",
    "py-reqwest-held",
    "py-reqwest-released",
    "py-reqwest-async",
]


def run_python(interp: Interpreter, code: str, timeout: float = 120) -> dict:
    """Run code under interp (clientbench on its path); it prints one JSON line."""
    done = subprocess.run(
        [interp.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**interp.env(), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def needs(interp: Interpreter, module: str) -> None:
    if not has_module(interp.executable, module):
        pytest.fail(f"{module} is not installed in {interp.executable}: `make freethreaded` installs it")


@pytest.mark.parametrize("name", ROWS)
def test_rows_run_with_the_gil_off(name, server):
    spec = next(s for s in CLIENTS if s.name == name).under(FT)
    assert spec.needs_module
    needs(FT, spec.needs_module)
    run = run_driver(spec, server.url + "/", Workload(4, 20, 2, 10), row_timeout_s=120, expected_body_bytes=13)
    assert run.ok and not run.failed, run.reason
    python = run.raw["client"]["python"]
    assert python["free_threaded"] is True
    # after importing the client and running: a C extension without free-threading support re-enables it
    assert python["gil_enabled"] is False, python["extensions"]


def _counting_during_held_call(interp: Interpreter, url: str) -> dict:
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


def test_holding_the_gil_no_longer_stops_other_threads(server):
    """On the GIL build a pure-Python thread nearly stops while another holds the GIL in a request; on the
    free-threaded build it keeps running (measured in the same test, as a ratio)."""
    if GIL is None:
        pytest.skip("only the free-threaded interpreter was built")
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
