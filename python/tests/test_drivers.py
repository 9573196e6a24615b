"""Every driver of the table against the real server, validated against the schema by the runner."""

import importlib.util

import pytest

from clientbench.clients import CLIENTS
from clientbench.runner import Workload, run_driver

SMALL = Workload(workers=3, requests=5, warmup=1, timeout_s=5)
NAMES = [c.name for c in CLIENTS]


@pytest.fixture(params=CLIENTS, ids=NAMES)
def spec(request):
    spec = request.param
    if spec.optional and importlib.util.find_spec(spec.needs_module) is None:
        pytest.skip(f"peer {spec.needs_module} is not installed here (make peers)")
    return spec


def test_driver_meets_the_contract(spec, server):
    row = run_driver(spec, server.url + "/", SMALL, row_timeout_s=120)
    assert row.ok, row.reason
    raw, s = row.raw, row.stats
    assert (raw["client"]["language"], raw["client"]["library"]) == (spec.language, spec.library)
    assert raw["client"]["mode"] == spec.mode and raw["client"]["gil"] == spec.gil
    workers = spec.fixed_workers or 3
    assert raw["workload"]["workers"] == workers and raw["workload"]["requests"] == 5
    assert s.requests == workers * 5 and s.errors == 0, row.reason
    assert s.body_bytes == workers * 5 * len(b"Hello, World!")
    # every harness reports its own CPU time and peak RSS (VmHWM, not the forked runner's pages)
    assert raw["cpu_ns"] > 0 and 0 < raw["peak_rss_kib"] < 512 * 1024
    if spec.language != "Python":
        assert s.peak_rss_mib < 40, "a native driver's RSS must not include the Python runner's"
    # the group clock covers every worker's timed loop
    assert s.bench_ms >= max(w["elapsed_ns"] for w in raw["workers"]) / 1e6 * 0.99
    for w in raw["workers"]:
        assert sum(w["latencies_ns"]) <= w["elapsed_ns"] * 1.01


def test_driver_reads_whole_large_bodies(spec, server):
    n = 1_000_000
    row = run_driver(spec, f"{server.url}/bytes/{n}", Workload(2, 2, 0, 10), row_timeout_s=120,
                     expected_body_bytes=n)
    assert row.ok and row.stats.errors == 0 and not row.failed, row.reason
    assert row.stats.body_bytes == row.stats.requests * n


def test_non_200_is_a_counted_failure(spec, server):
    row = run_driver(spec, server.url + "/status/500", Workload(2, 3, 0, 5), row_timeout_s=120)
    assert row.ok, row.reason  # the driver worked ...
    n = row.stats.requests
    assert n == (spec.fixed_workers or 2) * 3 and row.stats.errors == n  # ... and every request failed
    assert row.failed
    failures = [f for w in row.raw["workers"] for f in w["failures"]]
    assert sorted(f["index"] for f in failures) == sorted(list(range(3)) * (n // 3))
    assert all(f.get("status") == 500 for f in failures)


def test_closed_port_gives_failures_not_a_crash(spec, closed_port_url):
    row = run_driver(spec, closed_port_url, Workload(2, 2, 0, 2), row_timeout_s=120)
    assert row.ok, row.reason
    assert row.stats.errors == row.stats.requests == (spec.fixed_workers or 2) * 2 and row.failed
    reasons = [f["reason"] for w in row.raw["workers"] for f in w["failures"]]
    assert all(reasons)


def test_new_connection_mode(spec, server):
    row = run_driver(spec, server.url + "/", Workload(2, 3, 0, 5, connection="new"), row_timeout_s=120)
    assert row.ok and row.stats.errors == 0, row.reason
    assert row.raw["workload"].get("connection", "new") == "new"


def test_body_integrity_check_catches_a_short_count(spec, server):
    row = run_driver(spec, server.url + "/", Workload(1, 2, 0, 5), row_timeout_s=120, expected_body_bytes=14)
    assert row.ok and row.stats.errors == 0
    assert row.failed and "body integrity" in row.integrity_error
