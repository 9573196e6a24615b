"""The open loop end to end through the runner: a long run stays bounded (the runner asks for histograms,
the raw output and the runner's memory stay small), the row timeout covers the schedule, and a real native
driver against a stalling server shows coordinated omission corrected (docs/open-loop.md)."""

from __future__ import annotations

import tracemalloc

import pytest
from clientbench.execution.driver_process import row_timeout, run_driver
from clientbench.execution.plan import run_plan
from clientbench.model import RunStatus
from clientbench.registry.shipped import CLIENTS
from clientbench.workload import Workload
from support import fake_driver

#: the issue's long run: 60 s at 20,000 requests/s over 10 workers (1.2 M requests)
LONG = Workload(workers=10, warmup=0, timeout_s=30, rate=20_000.0, duration_s=60.0, repeat=1)


@pytest.mark.slow
def test_a_long_open_loop_stays_bounded(tmp_path):
    """The fake driver prints the document of 1.2 M simulated requests with a long-tailed service time; the
    runner asked it for histograms, and parsing, validating and computing the row takes well under 500 MB."""
    spec = fake_driver.spec("long", "--synthetic", "--service-us", "150", "--spread", "0.8")
    tracemalloc.start()
    try:
        (row,) = run_plan([spec], "http://127.0.0.1:1/", LONG, row_timeout_s=120, out_dir=tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (run,) = row.runs
    assert run.status is RunStatus.OK, run.reason
    assert run.command[-2:] == ["--record", "histogram"]  # 1.2 M expected requests > 200,000
    s = run.stats
    assert s.requests == 1_200_000 and s.missed == 0 and s.offered_rps == 20_000 and not s.saturated
    assert s.service_p50_ms == pytest.approx(0.150, rel=0.01)  # the lognormal's median
    assert s.p9999_ms > s.p99_ms > s.p50_ms  # the tail, corrected
    raw_bytes = (tmp_path / run.raw_file).stat().st_size
    assert raw_bytes < 5 * 2**20, raw_bytes  # the bound is 50 MB; histograms take far less
    assert peak < 500 * 2**20, peak


def test_the_row_timeout_covers_the_schedule_and_one_request():
    assert row_timeout(LONG, 300.0) == 300 + 60 + 30
    assert row_timeout(Workload(workers=2, requests=50, rate=10.0, timeout_s=5), 300.0) == 300 + 10 + 5
    assert row_timeout(Workload(), 300.0) == 300  # a closed loop: the row timeout alone


def test_a_rate_too_fine_for_a_single_worker_row_fails_that_row_with_the_reason():
    """cpp-beast-serial always runs one worker: 2,000,000/s is fine over 10 workers, not over its one."""
    serial = next(c for c in CLIENTS if c.name == "cpp-beast-serial")
    run = run_driver(serial, "http://127.0.0.1:1/", Workload(rate=2_000_000.0, duration_s=1.0), row_timeout_s=5)
    assert run.status is RunStatus.FAILED and "cannot run this workload: --rate 2e+06 over 1 worker(s)" in run.reason


@pytest.mark.slow
def test_a_stalling_server_shows_the_stall_in_the_corrected_latency_only(server):
    """Every 2,000th request to /stall sleeps 200 ms: 0.05% of the requests, fewer than the 0.1% above the
    service time's P99.9, so the service time's P99.9 does not see them. The requests scheduled behind each
    stall on its connection start late and carry the wait in their corrected latency (coordinated omission,
    corrected): at 1,000/s over 4 workers, 50 requests queue behind each stall, 2.5% of them all."""
    rust = next(c for c in CLIENTS if c.name == "rust-reqwest")
    wl = Workload(workers=4, warmup=0, timeout_s=5, rate=1000.0, duration_s=10.0, repeat=1)
    run = run_driver(rust, server.url + "/stall?every=2000&ms=200", wl, row_timeout_s=90)
    assert run.status is RunStatus.OK, run.reason
    s = run.stats
    assert s.requests >= 9500 and s.errors == 0 and s.late > 100, s
    assert s.service_max_ms >= 200, s  # the stalls themselves
    assert s.p999_ms > 100 and s.p99_ms > 50, s  # the corrected latency carries them
    # the service time does not: counted per request, not as a percentile, which a loaded machine's scheduling
    # jitter moves (the service time's P99.9 reached 40 ms under a load average of 8 on 2 cores)
    corrected, service = 0, 0
    for w in run.raw["workers"]:
        for start, intended, latency in zip(w["start_ns"], w["intended_ns"], w["latencies_ns"], strict=True):
            corrected += start - intended + latency >= 100e6
            service += latency >= 100e6
    assert corrected >= 0.01 * s.requests and corrected >= 10 * service, (corrected, service, s.requests)


def test_a_document_whose_figures_cannot_be_computed_fails_its_run_not_the_runner():
    """A histogram bucket of 10^18 ns (31 years) validates as a number but fits no histogram."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from support.rows import histogram_doc; "
        "d = histogram_doc(); d['workers'][0]['histograms']['service']['counts'][-1][0] = 10**18; "
        "print(json.dumps(d))"
    )
    from support import REPO

    spec = fake_driver.code_spec("huge", code, str(REPO / "python" / "tests"))
    asked = Workload(workers=2, warmup=0, rate=4000.0, duration_s=0.001, repeat=1)  # the document's workload
    run = run_driver(spec, "http://127.0.0.1:1/", asked, row_timeout_s=30)
    assert run.status is RunStatus.FAILED and run.stats is None and run.raw is None
    assert (
        run.reason
        == "invalid driver output: worker 0: a service latency of 1000000000000000000 ns does not fit a histogram"
    )
