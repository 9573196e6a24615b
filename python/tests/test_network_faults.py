"""Network faults through toxiproxy in front of the real axum server (support/toxiproxy.py), for the native
drivers (cpp-beast, rust-reqwest): every request counted as a failure whose reason starts with the right
class, or no failure and every body byte where the request must succeed. And the runner's own use of
toxiproxy: no toxiproxy-server process outlives its owner (the module's, a Toxiproxy whose body raises, a
Testbed whose body raises).

The bindings meet the same faults in bindings/tests/test_network_faults.py."""

from __future__ import annotations

import os
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from clientbench.execution import testbed
from clientbench.execution.driver_process import run_driver
from clientbench.execution.toxiproxy import Toxiproxy
from clientbench.model import RunStatus
from clientbench.network import Network
from clientbench.options.rows import RowFlags, select
from clientbench.registry.shipped import CLIENTS
from clientbench.workload import Workload
from support.toxiproxy import (
    BIG,
    CLOSE_DELAY_MS,
    CUT_AFTER,
    LIMIT,
    RESET_TIMEOUT,
    SLICER,
    N,
    alive,
    missing,
    parent,
    reset_proxy,
    toxic,
    toxiproxy_pids,
)

if why := missing():
    pytest.skip(why, allow_module_level=True)

SLACK = 1.5  # an error must arrive within its deadline + SLACK


def later(delay: float, fn: Any) -> threading.Timer:
    timer = threading.Timer(delay, fn)
    timer.daemon = True
    timer.start()
    return timer


NATIVE = select(RowFlags(("cpp-beast", "rust-reqwest")), CLIENTS)
native = pytest.mark.parametrize("spec", NATIVE, ids=[s.name for s in NATIVE])


def reasons(run: Any) -> list[str]:
    return [f["reason"] for w in run.raw["workers"] for f in w["failures"]]


def assert_all_failed(run: Any, requests: int, *classes: str) -> None:
    assert run.returncode == 0 and not run.crashed, run.reason  # exit status 0 and a valid document
    assert run.status is RunStatus.FAILED
    assert run.stats.requests == requests and run.stats.errors == requests, run.reason
    got = reasons(run)
    assert len(got) == requests and all(r.startswith(tuple(f"{c}: " for c in classes)) for r in got), got


@native
@pytest.mark.timeout(60)
def test_native_reset_mid_response(spec, proxied, toxiproxy):
    base, cut = reset_proxy(proxied, toxiproxy)
    timer = later(CUT_AFTER, cut)
    run = run_driver(spec, f"{base}/bytes/{BIG}", Workload(1, 3, 0, RESET_TIMEOUT), row_timeout_s=30)
    timer.join(5)
    assert_all_failed(run, 3, "ConnectionError")
    assert run.duration_s < CUT_AFTER + 3 * SLACK, run.duration_s


@native
@pytest.mark.timeout(60)
def test_native_stalled_connection(spec, proxied):
    _, base = proxied(toxic("timeout", timeout=0))
    run = run_driver(spec, f"{base}/", Workload(1, 2, 0, 1.0), row_timeout_s=30)
    assert_all_failed(run, 2, "TimeoutError")
    assert run.duration_s < 2 * 1.0 + SLACK + 1.0, run.duration_s


@native
@pytest.mark.timeout(60)
def test_native_sliced_response(spec, proxied):
    _, base = proxied(SLICER)
    run = run_driver(spec, f"{base}/bytes/{N}", Workload(1, 3, 0, 20.0), row_timeout_s=60, expected_body_bytes=N)
    assert run.status is RunStatus.OK, run.reason
    assert run.stats.errors == 0 and run.stats.body_bytes == 3 * N


@native
@pytest.mark.timeout(60)
def test_native_truncated_response(spec, proxied):
    _, base = proxied(toxic("limit_data", bytes=LIMIT))
    run = run_driver(spec, f"{base}/bytes/{N}", Workload(1, 3, 0, 5.0), row_timeout_s=30)
    assert_all_failed(run, 3, "ConnectionError", "ProtocolError")
    assert run.stats.body_bytes == 0  # a failed request's bytes are never counted as a body


@native
@pytest.mark.timeout(60)
@pytest.mark.parametrize("path, size", [("/close", 13), (f"/bytes/{N}", N)], ids=["close", "bytes"])
def test_native_slow_close(spec, proxied, path, size):
    _, base = proxied(toxic("slow_close", delay=CLOSE_DELAY_MS))
    run = run_driver(spec, base + path, Workload(1, 3, 0, 10.0), row_timeout_s=30, expected_body_bytes=size)
    assert run.status is RunStatus.OK, run.reason
    assert run.stats.errors == 0 and run.stats.body_bytes == 3 * size
    assert run.stats.max_ms is not None and run.stats.max_ms < CLOSE_DELAY_MS / 2, run.stats.max_ms


@native
@pytest.mark.timeout(60)
def test_native_latency_beyond_the_timeout(spec, proxied):
    _, base = proxied(toxic("latency", latency=1500, jitter=0))
    run = run_driver(spec, f"{base}/", Workload(1, 3, 0, 0.5), row_timeout_s=30)
    assert_all_failed(run, 3, "TimeoutError")


# -- no toxiproxy-server left behind -----------------------------------------------------------------


@pytest.mark.timeout(60)
def test_no_toxiproxy_left_behind(toxiproxy, started_pids, tmp_path):
    # the module's own: exactly the one the fixture started runs now (the fixture's teardown is checked by
    # started_pids at the end of the module)
    assert toxiproxy.proc is not None and alive(toxiproxy.proc.pid)
    ours = {p for p in toxiproxy_pids() if parent(p) == os.getpid()}
    assert ours == {toxiproxy.proc.pid}, ours

    # a Toxiproxy used as a context manager whose body raises
    with pytest.raises(RuntimeError, match="body failed"), Toxiproxy() as tp:
        assert tp.proc is not None
        pid = tp.proc.pid
        assert alive(pid)
        raise RuntimeError("body failed")
    assert not alive(pid) and not Path(f"/proc/{pid}").exists()

    # a Testbed with a network whose body raises: its toxiproxy and its server are stopped
    with (
        pytest.raises(RuntimeError, match="body failed"),
        testbed.Testbed(testbed.Options(network=Network(rtt_ms=1), out=tmp_path), ["test"]) as tb,
    ):
        assert tb.toxiproxy is not None and tb.toxiproxy.proc is not None and tb.server is not None
        pid, server_pid = tb.toxiproxy.proc.pid, tb.server.pid
        assert alive(pid) and server_pid is not None
        with urllib.request.urlopen(tb.base_url + "/", timeout=5) as r:  # through the proxy
            assert r.read() == b"Hello, World!"
        raise RuntimeError("body failed")
    assert not alive(pid) and not Path(f"/proc/{pid}").exists()
    assert not Path(f"/proc/{server_pid}").exists()
    assert (tmp_path / next(p.name for p in tmp_path.iterdir()) / "toxiproxy.log").exists()
    assert {p for p in toxiproxy_pids() if parent(p) == os.getpid()} == {toxiproxy.proc.pid}
