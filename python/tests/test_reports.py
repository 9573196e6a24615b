"""Aggregation over repeats, the exporters, compare, sweep points and the generated GIL reading."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from clientbench import compare as compare_mod
from clientbench.clients import ClientSpec
from clientbench.gil import reading
from clientbench.plots import run_plots
from clientbench.report import csv_table, markdown_table, results_json
from clientbench.runner import Row, RowResult
from clientbench.stats import ProcessUsage, aggregate, row_stats
from clientbench.sweep import points

REQUIRED = ["Language", "Library", "Mean(ms)", "P99(ms)", "P999(ms)", "Max(ms)", "LMean(ms)", "Bench(ms)",
            "async/sync", "Errors", "GIL"]


def raw(workers=2, n=50, seed=0, wall_ms=10.0, serial=False):
    rng = np.random.default_rng(seed)
    ws = []
    for i in range(workers):
        lat = rng.integers(50_000, 500_000, size=n)
        offset = i * int(lat.sum()) if serial else 0
        starts = (offset + np.concatenate([[0], np.cumsum(lat)[:-1]])).tolist()
        ws.append({"elapsed_ns": int(lat.sum()), "start_ns": starts, "latencies_ns": lat.tolist(),
                   "bytes": 13 * n, "failures": []})
    return {"schema": "clientbench.raw/1", "client": {"language": "Python", "library": "x",
            "library_version": "1", "mode": "sync", "gil": "held"},
            "workload": {"url": "http://127.0.0.1:1/", "workers": workers, "requests": n, "warmup": 0,
                         "timeout_s": 1}, "wall_ns": int(wall_ms * 1e6), "workers": ws, "cpu_ns": 2_000_000}


def row(name="py-x", gil="held", benches=(10.0, 12.0, 11.0), serial=False):
    spec = ClientSpec(name, "Python", "x", "sync", gil, lambda: [])
    runs = []
    for i, b in enumerate(benches):
        doc = raw(seed=i, wall_ms=b, serial=serial)
        runs.append(RowResult(spec, ok=True, raw=doc, stats=row_stats(doc, ProcessUsage(0.5, 20480))))
    return Row(spec, runs)


def test_aggregate_is_the_median_with_bench_spread():
    r = row(benches=(10.0, 30.0, 12.0))
    agg = r.aggregate
    assert agg.repeats == 3
    assert agg.median.bench_ms == 12.0
    assert (agg.bench_min_ms, agg.bench_max_ms) == (10.0, 30.0)
    singles = [x.stats for x in r.runs]
    assert agg.median.mean_ms == pytest.approx(np.median([s.mean_ms for s in singles]))
    assert agg.median.requests == sum(s.requests for s in singles)


def test_cpu_and_rss_figures():
    s = row().runs[0].stats
    assert s.cpu_us_per_req == pytest.approx(2_000_000 / 1e3 / 100)  # the driver's own cpu_ns wins
    assert s.peak_rss_mib == 20.0
    doc = raw()
    del doc["cpu_ns"]
    assert row_stats(doc, ProcessUsage(0.5, 1024)).cpu_us_per_req == pytest.approx(0.5e6 / 100)


def test_aggregate_rejects_nothing():
    with pytest.raises(ValueError):
        aggregate([])


def test_markdown_and_csv_have_the_required_labels():
    rows = [row(), row("py-y", gil="released")]
    md = markdown_table(rows).splitlines()
    header = [c.strip() for c in md[0].strip("|").split("|")]
    for label in REQUIRED:
        assert label in header
    assert len(md) == 4
    csv_header = csv_table(rows).splitlines()[0].split(",")
    assert csv_header == header  # the same columns in both files
    assert csv_header[:8] == REQUIRED[:8]  # the reference's order


def test_results_json_shape():
    doc = json.loads(results_json([row()], {"workload": {"workers": 2}}))
    (r,) = doc["rows"]
    assert doc["schema"] == "clientbench.results/1"
    assert r["status"] == "ok" and len(r["runs"]) == 3
    assert set(r["aggregate"]["median"]) >= {"mean_ms", "p50_ms", "p99_ms", "p999_ms", "max_ms", "lmean_ms",
                                             "bench_ms", "throughput_rps", "cpu_us_per_req", "peak_rss_mib",
                                             "bench_over_lmean", "errors"}


def test_plots_are_written(tmp_path):
    made = run_plots([row(), row("py-y", gil="released", serial=True)], tmp_path, "test")
    names = sorted(p.name for p in made)
    assert names == ["bench.png", "latency.png", "timeline.png"]
    for p in made:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000


def _results(tmp_path, name, benches):
    d = tmp_path / name
    d.mkdir()
    (d / "results.json").write_text(results_json([row(benches=benches)], {}))
    return d


def test_compare_flags_only_changes_beyond_noise(tmp_path, capsys):
    a = _results(tmp_path, "a", (10.0, 11.0, 11.0, 12.0))
    same = _results(tmp_path, "same", (10.5, 11.5, 11.0, 11.0))
    slow = _results(tmp_path, "slow", (20.0, 21.0, 21.0, 22.0))
    assert compare_mod.compare(a, same) == 0
    out = capsys.readouterr().out
    assert "0 row(s) changed" in out
    assert "largest difference of median Bench: 0.0% (py-x)" in out  # medians 11.0 and 11.0
    compare_mod.compare(a, slow)
    out = capsys.readouterr().out
    assert "1 row(s) changed" in out and "slower" in out


def test_compare_needs_enough_repeats_for_a_verdict(tmp_path, capsys):
    """2 + 2 repeats of an unchanged row have disjoint ranges one time in three: no verdict from so few."""
    a = _results(tmp_path, "a", (10.0, 10.1))
    b = _results(tmp_path, "b", (20.0, 20.1))
    compare_mod.compare(a, b)
    out = capsys.readouterr().out
    assert "0 row(s) changed" in out and "too few repeats" in out
    assert "largest difference of median Bench: 99.5% (py-x)" in out  # the ratio is still printed


def test_compare_missing_file_is_a_setup_error(tmp_path):
    from clientbench.paths import SetupError
    with pytest.raises(SetupError, match="no results"):
        compare_mod.compare(tmp_path / "nope", tmp_path / "nope2")


def test_sweep_points():
    assert points("workers", None) == [1, 2, 4, 8, 10, 16, 32]
    assert points("payload", "13, 1024") == [13, 1024]
    assert points("connection", None) == ["keep-alive", "new"]
    from clientbench.paths import SetupError
    for dim, values in (("workers", "0"), ("payload", "x"), ("connection", "both")):
        with pytest.raises(SetupError):
            points(dim, values)


def _named(name, gil, benches, serial):
    r = row(name, gil, benches, serial)
    return r


def test_gil_reading_follows_the_figures():
    def rows(held_wall, released_wall):
        held = row("py-beast-held", "held", (held_wall,) * 3)
        released = row("py-beast-released", "released", (released_wall,) * 3)
        return [held, released]

    lmean = rows(1, 1)[0].aggregate.median.lmean_ms
    serialized = reading([], rows(lmean * 8, lmean * 1.05), workers=10)
    assert "serialized the workers" in serialized[0]
    overlapped = reading([], rows(lmean * 1.05, lmean * 1.05), workers=10)
    assert "serialized the workers" not in overlapped[0]
    assert "did not slow" in overlapped[0] or "not fully serialized" in overlapped[0]
    assert "no complete held/released pair" in overlapped[1]  # reqwest rows absent: says so, no claim
