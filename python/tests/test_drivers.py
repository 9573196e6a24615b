"""Every driver of the table against the real server, validated against the schema by the runner."""

import pytest

from clientbench.clients import CLIENTS
from clientbench.runner import Workload, run_driver

SMALL = Workload(workers=3, requests=5, warmup=1, timeout_s=5)
NAMES = [c.name for c in CLIENTS]


@pytest.fixture(params=CLIENTS, ids=NAMES)
def spec(request):
    return request.param


def test_driver_meets_the_contract(spec, server):
    row = run_driver(spec, server.url + "/", SMALL, row_timeout_s=120)
    assert row.ok, row.reason
    raw, s = row.raw, row.stats
    assert (raw["client"]["language"], raw["client"]["library"]) == (spec.language, spec.library)
    assert raw["client"]["mode"] == spec.mode and raw["client"]["gil"] == spec.gil
    assert raw["workload"]["workers"] == 3 and raw["workload"]["requests"] == 5
    assert s.requests == 15 and s.errors == 0, row.reason
    assert s.body_bytes == 15 * len(b"Hello, World!")
    # the group clock covers every worker's timed loop
    assert s.bench_ms >= max(w["elapsed_ns"] for w in raw["workers"]) / 1e6 * 0.99
    for w in raw["workers"]:
        assert sum(w["latencies_ns"]) <= w["elapsed_ns"] * 1.01


def test_driver_reads_whole_large_bodies(spec, server):
    n = 1_000_000
    row = run_driver(spec, f"{server.url}/bytes/{n}", Workload(2, 2, 0, 10), row_timeout_s=120)
    assert row.ok and row.stats.errors == 0, row.reason
    assert row.stats.body_bytes == 4 * n


def test_non_200_is_a_counted_failure(spec, server):
    row = run_driver(spec, server.url + "/status/500", Workload(2, 3, 0, 5), row_timeout_s=120)
    assert row.ok, row.reason  # the driver worked ...
    assert row.stats.errors == 6 and row.stats.requests == 6  # ... and every request failed
    assert row.failed
    failures = [f for w in row.raw["workers"] for f in w["failures"]]
    assert sorted(f["index"] for f in failures) == [0, 0, 1, 1, 2, 2]
    assert all(f.get("status") == 500 for f in failures)


def test_closed_port_gives_failures_not_a_crash(spec, closed_port_url):
    row = run_driver(spec, closed_port_url, Workload(2, 2, 0, 2), row_timeout_s=120)
    assert row.ok, row.reason
    assert row.stats.errors == 4 and row.failed
    reasons = [f["reason"] for w in row.raw["workers"] for f in w["failures"]]
    assert all(reasons)
