"""An open loop second by second (stats.time_series, #32 item 6): the bucketing on a fabricated document whose
series is computed by hand (a stall shows as a dip in the achieved rate and a jump in the P99), what has no series
(a closed loop, histograms), results.json's schema, and the plots (the HTML page's charts, the PNG)."""

from __future__ import annotations

import copy
import json

import pytest
from clientbench.commands.report import folder_report
from clientbench.execution.driver_process import run_driver
from clientbench.model import DriverRun, Results, Row, RunStatus
from clientbench.report.base import Figure
from clientbench.report.drawing import drawing
from clientbench.report.export.html import page as html_page
from clientbench.report.export.plots import draw, standard_figures
from clientbench.schema import validate_results
from clientbench.stats import TimeSeries, row_stats, time_series
from clientbench.workload import Workload
from support import fake_driver
from support.rows import client, histogram_doc, raw, results

MS = 1_000_000
S = 1_000 * MS


def stalled(duration_s: float | None = 4.0, requests: int = 40, failed: tuple[int, ...] = (35,)) -> dict:
    """One worker at 10 requests/s: request k intended at k x 100 ms, each taking 1 ms except k = 15 (intended at
    1.5 s), which takes 1,000 ms: k = 16 ... 25 wait for it and start late, one after the other (docs/raw-format.md:
    a request starts at its intended time, or when the previous one returned)."""
    intended = [k * 100 * MS for k in range(requests)]
    start, latency, free = [], [], 0
    for k, t in enumerate(intended):
        s = max(t, free)
        took = 1000 * MS if k == 15 else MS
        start.append(s)
        latency.append(took)
        free = s + took
    workload = {
        "url": "http://127.0.0.1:1/", "workers": 1, "requests": None if duration_s else requests,
        "duration_s": duration_s, "warmup": 0, "timeout_s": 30, "connection": "keep-alive", "loop": "open",
        "rate": 10, "arrival": "uniform", "seed": None, "method": "GET", "body_size": 0, "record": "samples",
    }  # fmt: skip
    worker = {
        "elapsed_ns": free, "count": requests, "late": 10, "missed": 0, "start_ns": start, "intended_ns": intended,
        "latencies_ns": latency, "bytes": 13 * requests, "failure_count": len(failed),
        "failures": [{"index": k, "reason": "status 500", "status": 500} for k in failed],
    }  # fmt: skip
    return {
        "schema": "clientbench.raw/3",
        "client": {"language": "C++", "library": "beast", "library_version": "1", "mode": "sync", "gil": None},
        "workload": workload,
        "wall_ns": free,
        "workers": [worker],
    }


def test_a_stall_is_a_dip_in_the_rate_and_a_jump_in_the_p99_of_its_second():
    ts = time_series(stalled())
    assert ts is not None
    got = [(s.t_s, s.width_s, s.requests, s.errors, s.completed, s.achieved_rps) for s in ts.seconds]
    # second 1: k = 10 ... 14 returned in it, k = 15 ... 19 (intended in it) only at 2.5 s and after: a dip to 5/s;
    # second 2: those 5 and its own 10; second 3: 10 sent, k = 35 failed (no success, counted in its errors)
    assert got == [(0.0, 1.0, 10, 0, 10, 10.0), (1.0, 1.0, 10, 0, 5, 5.0), (2.0, 1.0, 10, 0, 15, 15.0),
                   (3.0, 1.0, 10, 1, 9, 9.0)]  # fmt: skip
    # second 1's corrected latencies: 1 ms x 5 (k = 10 ... 14), 1000 (k = 15), 901, 802, 703, 604 (k = 16 ... 19:
    # returned at 2.501 ... 2.504 s); nearest rank: P50 the 5th of 10, P99 the 10th
    # second 2's: k = 20 ... 24 returned at 2.505 ... 2.509 s (505, 406, 307, 208, 109 ms), k = 25 at 2.510 s
    # (10 ms), k = 26 ... 29 on time (1 ms): P50 10 ms, P99 505 ms
    assert [(s.p50_ms, s.p99_ms) for s in ts.seconds] == [
        (pytest.approx(1.0), pytest.approx(1.0)),
        (pytest.approx(1.0), pytest.approx(1000.0)),
        (pytest.approx(10.0), pytest.approx(505.0)),
        (pytest.approx(1.0), pytest.approx(1.0)),
    ]
    assert (ts.drained, ts.unplaced_errors) == (0, 0)
    # the run's own figures do not change: its P99 over 39 successes is the stall's 1,000 ms
    assert row_stats(stalled()).p99_ms == pytest.approx(1000.0)


def test_a_schedule_of_n_requests_lasts_n_over_the_rate_and_a_partial_last_second_is_cut():
    assert time_series(stalled(duration_s=None)) == time_series(stalled())
    # 35 requests over 3.5 s: the last bucket is [3, 3.5), its 5 successes 10 per second
    ts = time_series(stalled(duration_s=3.5, requests=35, failed=()))
    assert ts is not None
    assert [(s.width_s, s.requests, s.completed, s.achieved_rps) for s in ts.seconds][-1] == (0.5, 5, 5, 10.0)


def test_requests_returning_after_the_schedule_are_drained_and_unlisted_failures_unplaced():
    doc = stalled(duration_s=3.5, requests=35, failed=(30,))
    w = doc["workers"][0]
    w["latencies_ns"][-1] = 600 * MS  # k = 34 (intended 3.4 s) returns at 4.0 s, after the schedule's 3.5 s
    w["failure_count"] = 3  # two failures beyond those the driver listed
    ts = time_series(doc)
    assert ts is not None
    assert (ts.drained, ts.unplaced_errors) == (1, 2)
    last = ts.seconds[-1]
    assert (last.requests, last.errors, last.completed, last.p99_ms) == (5, 1, 3, pytest.approx(600.0))


def test_a_closed_loop_and_a_histogram_document_have_no_series():
    assert time_series(raw()) is None
    assert time_series(histogram_doc()) is None


def _row(doc: dict, name: str = "cpp-x") -> Row:
    r = Row(client(name, gil=None))
    r.add(DriverRun(r.client, RunStatus.OK, raw=doc, stats=row_stats(doc), returncode=0, series=time_series(doc)))
    return r


def test_results_json_holds_the_series_validates_and_reads_back():
    rows = [_row(stalled())]
    doc = json.loads(json.dumps(results(rows).to_json()))
    validate_results(doc)
    series = doc["rows"][0]["runs"][0]["series"]
    assert (series["bucket_s"], series["by"]) == (1.0, "intended_start")
    assert [s["achieved_rps"] for s in series["seconds"]] == [10.0, 5.0, 15.0, 10.0 - 1.0]
    assert Results.from_json(doc).rows[0].runs[0].series == rows[0].runs[0].series
    # a run without one (a closed loop, histograms) has no `series` key: older documents still validate
    closed = results([_row(raw())]).to_json()
    assert "series" not in closed["rows"][0]["runs"][0]
    validate_results(closed)
    bad = copy.deepcopy(doc)
    bad["rows"][0]["runs"][0]["series"]["seconds"][0]["achieved_rps"] = -1
    with pytest.raises(Exception, match="achieved_rps|-1"):
        validate_results(bad)


def test_the_runner_computes_the_series_of_an_open_loop_run():
    """Through a driver process (the fake driver's simulated workers: every 10th request stalls 300 ms)."""
    spec = fake_driver.spec("stall", "--synthetic", "--service-us", "1000", "--stall-every", "10", "--stall-ms", "300")
    run = run_driver(spec, "http://127.0.0.1:1/", Workload(workers=1, rate=20, duration_s=2), row_timeout_s=30)
    assert run.status is RunStatus.OK, run.reason
    assert isinstance(run.series, TimeSeries) and len(run.series.seconds) == 2
    assert sum(s.requests for s in run.series.seconds) == run.stats.requests == 40
    assert max(s.p99_ms or 0 for s in run.series.seconds) >= 300  # the stall, in its second's P99


def test_the_html_report_and_the_png_draw_the_series(tmp_path):
    rows = [_row(stalled(), "cpp-a"), _row(stalled(), "cpp-b")]
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(results(rows).to_json()))
    report = folder_report(folder, None)
    page = html_page(report, report.title)
    (part,) = page.parts
    rate = page.charts[f"{part.id}-0-series-0"]
    assert [t["x"] for t in rate["data"][:2]] == [[0.0, 1.0, 2.0, 3.0]] * 2
    assert rate["data"][0]["y"] == [10.0, 5.0, 15.0, 9.0]
    assert any(t.get("name") == "offered: 10 requests/s" for t in rate["data"])  # the offered rate's line
    latency = page.charts[f"{part.id}-0-series-1"]
    assert latency["data"][0]["y"] == pytest.approx([1.0, 1000.0, 505.0, 1.0])  # cpp-a's P99 per second
    assert latency["layout"]["yaxis"]["type"] == "log"
    errors = page.charts[f"{part.id}-0-series-2"]
    assert errors["data"][0]["y"] == [0.0, 0.0, 0.0, 1.0]
    assert f"{part.id}-0-series-0" in page.parts[0].phases[0].charts
    # the PNG: standard_figures adds it for a run with a series, one drawing of the three plots stacked
    (figure,) = [f for f in standard_figures(rows, "test") if f.kind == "series"]
    d = drawing(figure)
    assert d is not None and len(d.plots) == 3 and d.share_x
    png = draw(d, tmp_path / figure.file)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_closed_loop_run_draws_no_series():
    rows = [_row(raw())]
    assert [f for f in standard_figures(rows, "test") if f.kind == "series"] == []
    assert drawing(Figure("series", "series.png", "x", rows)) is None
