"""Statistics (stats.py): nearest-rank percentiles, a row's figures in a closed and an open loop, merged
HdrHistograms against exact percentiles, and the saturation rule."""

import copy
import math

import numpy as np
import pytest
from clientbench.stats import (
    RowStats,
    aggregate,
    histogram_buckets,
    histogram_mean,
    histogram_quantiles,
    merged_histogram,
    nearest_rank,
    new_histogram,
    row_stats,
    saturated,
    sustains,
)
from support.fake_driver import histogram
from support.rows import OPEN, histogram_doc, raw


def test_nearest_rank_hand_computed():
    data = [7, 1, 3, 9, 5, 2, 8, 4, 10, 6]  # sorted: 1..10
    assert nearest_rank(data, 0.5) == 5  # ceil(5) - 1 = index 4
    assert nearest_rank(data, 0.9) == 9
    assert nearest_rank(data, 0.91) == 10  # ceil(9.1) - 1 = index 9
    assert nearest_rank(data, 0.99) == 10
    assert nearest_rank(data, 0.0) == 1
    assert nearest_rank(data, 1.0) == 10
    assert nearest_rank(data, 0.25) == 3  # ceil(2.5) - 1 = index 2


def test_single_sample():
    for p in (0.0, 0.5, 0.99, 0.999, 1.0):
        assert nearest_rank([42.0], p) == 42.0


def test_ties():
    assert nearest_rank([2, 2, 2, 5], 0.5) == 2
    assert nearest_rank([2, 2, 2, 5], 0.75) == 2
    assert nearest_rank([2, 2, 2, 5], 0.76) == 5


def test_p999_on_1000_samples_is_the_999th_smallest():
    rng = np.random.default_rng(1)
    data = rng.permutation(np.arange(1000, 2000))
    assert nearest_rank(data, 0.999) == 1998  # index ceil(999) - 1 = 998
    assert nearest_rank(data, 0.99) == 1989


@pytest.mark.parametrize("n", [1, 2, 3, 17, 100, 999, 1000, 1001, 4321])
@pytest.mark.parametrize("p", [0.5, 0.9, 0.95, 0.99, 0.999])
def test_matches_the_definition_on_random_data(n, p):
    data = np.random.default_rng(n).exponential(size=n)
    assert nearest_rank(data, p) == np.sort(data)[math.ceil(p * n) - 1]


def test_rejects_empty_and_bad_p():
    with pytest.raises(ValueError):
        nearest_rank([], 0.5)
    with pytest.raises(ValueError):
        nearest_rank([1.0], 1.5)


def _doc(workers, wall_ns):
    return {"workload": {"workers": len(workers)}, "wall_ns": wall_ns, "workers": workers}


def test_row_stats_excludes_failed_latencies_and_counts_them():
    w0 = {
        "elapsed_ns": 4_000_000,
        "latencies_ns": [1_000_000, 2_000_000, 9_000_000],
        "start_ns": [0, 1, 2],
        "bytes": 26,
        "failures": [{"index": 2, "reason": "status 500"}],
    }
    w1 = {
        "elapsed_ns": 2_000_000,
        "latencies_ns": [3_000_000, 4_000_000, 5_000_000],
        "start_ns": [0, 1, 2],
        "bytes": 39,
        "failures": [],
    }
    s = row_stats(_doc([w0, w1], 8_000_000))
    assert s.requests == 6 and s.errors == 1
    assert s.mean_ms == pytest.approx(3.0)  # (1+2+3+4+5)/5, the 9 ms failure excluded
    assert s.max_ms == 5.0
    assert s.p50_ms == 3.0
    assert s.lmean_ms == 3.0 and s.bench_ms == 8.0
    assert s.bench_over_lmean == pytest.approx(8 / 3)
    assert s.body_bytes == 65
    assert s.throughput_rps == pytest.approx(5 / 0.008)


def test_row_stats_all_failed_has_no_latency_figures():
    w = {
        "elapsed_ns": 1000,
        "latencies_ns": [10, 20],
        "start_ns": [0, 10],
        "bytes": 0,
        "failures": [{"index": 0, "reason": "x"}, {"index": 1, "reason": "x"}],
    }
    s = row_stats(_doc([w], 1000))
    assert s.errors == 2 and s.mean_ms is None and s.p99_ms is None and s.throughput_rps == 0


# -- the open loop ---------------------------------------------------------------------------------


def test_open_loop_figures_hand_computed():
    """Worker 0: intended 0 and 0.5 ms, started 0 and 0.7 ms (late), took 0.6 and 0.2 ms; worker 1's only
    request failed and one of its schedule was missed. 2 successes in a 1 ms wall at 4,000/s offered."""
    s = row_stats(copy.deepcopy(OPEN))
    assert (s.requests, s.errors, s.late, s.missed) == (3, 1, 1, 1)
    assert s.late_pct == pytest.approx(100 / 3)
    assert s.offered_rps == 4000 and s.throughput_rps == pytest.approx(2000) and s.saturated is True
    # corrected: end - intended = 0.6 and 0.4 ms; service: 0.6 and 0.2 ms (the failure is in neither)
    assert (s.p50_ms, s.p90_ms, s.p99_ms, s.p999_ms, s.p9999_ms, s.max_ms) == (0.4, 0.6, 0.6, 0.6, 0.6, 0.6)
    assert s.mean_ms == pytest.approx(0.5)
    assert (s.service_p50_ms, s.service_p99_ms, s.service_max_ms) == (0.2, 0.6, 0.6)
    assert s.service_mean_ms == pytest.approx(0.4)


def test_a_closed_loop_has_no_open_loop_figures():
    s = row_stats(raw())
    assert s.offered_rps is s.late is s.missed is s.saturated is s.service_p99_ms is None
    assert s.p90_ms is not None and s.p9999_ms is not None


def test_histograms_give_the_same_figures_within_their_precision():
    exact, hist = row_stats(copy.deepcopy(OPEN)), row_stats(histogram_doc())
    for name, value in exact.to_json().items():
        if name.endswith("_ms") and name not in ("lmean_ms", "bench_ms"):
            assert getattr(hist, name) == pytest.approx(value, rel=1e-3), name
        else:
            assert getattr(hist, name) == value, name


def _buckets_by_hdrh(values: np.ndarray) -> list[list[int]]:
    """Samples -> the contract's buckets, by HdrHistogram itself: each non-empty bucket's lowest value."""
    h = new_histogram()
    for v in values:
        h.record_value(int(v))
    return [[int(h.get_lowest_equivalent_value(int(v))), int(n)] for v, n in zip(*np.unique(values, return_counts=True),
                                                                                  strict=True)]  # fmt: skip


def _merge_counts(pairs: list[list[int]]) -> list[list[int]]:
    merged: dict[int, int] = {}
    for v, n in pairs:
        merged[v] = merged.get(v, 0) + n
    return [[v, merged[v]] for v in sorted(merged)]


@pytest.mark.parametrize("n, workers", [(1, 1), (7, 3), (1000, 4), (60_000, 10)])
def test_merged_histograms_give_nearest_rank_percentiles_within_0_1_percent(n, workers):
    """Samples -> each worker's buckets -> one merged HdrHistogram -> percentiles, against the exact
    nearest-rank percentiles of the samples."""
    rng = np.random.default_rng(n)
    samples = (rng.lognormal(mean=13, sigma=1.5, size=n) + 1).astype(np.int64)  # ~0.4 ms, long tail
    parts = np.array_split(samples, workers)
    # the fake driver's formula for the buckets is HdrHistogram's
    for part in parts:
        ours = histogram(part)["counts"]
        assert ours == _merge_counts(_buckets_by_hdrh(part))
    doc = {"workers": [{"histograms": {"service": histogram(p)}} for p in parts]}
    merged = merged_histogram(doc, "service")
    assert merged.get_total_count() == n
    ps = (0.0, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0)
    for p, got in zip(ps, histogram_quantiles(merged, ps), strict=True):
        want = nearest_rank(samples, p)
        assert abs(got - want) <= 1e-3 * want, (p, got, want)
        assert got >= want  # HdrHistogram reports a bucket by its highest equivalent value
    values, counts = histogram_buckets(merged)
    assert counts.sum() == n and (np.diff(values) > 0).all()
    assert histogram_mean(merged) == pytest.approx(merged.get_mean_value(), rel=1e-12)  # HdrHistogram's mean
    assert histogram_mean(merged) == pytest.approx(samples.mean(), rel=1e-3)


def test_histogram_ranks_are_nearest_rank_not_rounded():
    """HdrHistogram's own get_value_at_percentile rounds p*n; the contract's rank is ceil(p*n)."""
    doc = {"workers": [{"histograms": {"service": {"counts": [[100, 1], [200, 1], [300, 1]]}}}]}
    merged = merged_histogram(doc, "service")
    assert histogram_quantiles(merged, [0.4, 0.5, 0.67, 0.68]) == [200, 200, 300, 300]  # ranks 2, 2, 3, 3
    assert merged.get_value_at_percentile(40) == 100  # round(1.2) = 1: one rank lower


def test_a_histogram_value_out_of_range_is_an_error_not_dropped():
    doc = {"workers": [{"histograms": {"service": {"counts": [[10**18, 1]]}}}]}
    with pytest.raises(ValueError, match="does not fit"):
        merged_histogram(doc, "service")


@pytest.mark.parametrize(
    "offered, achieved, expected",
    [(None, 10.0, None), (1000.0, 990.0, False), (1000.0, 989.9, True), (1000.0, 1200.0, False)],
)
def test_saturation_is_achieved_below_99_percent_of_offered(offered, achieved, expected):
    assert saturated(offered, achieved) is expected


def _open_stats(offered: float, achieved: float, p99: float | None) -> RowStats:
    return RowStats(
        requests=100, errors=0, mean_ms=p99, p50_ms=p99, p99_ms=p99, p999_ms=p99, max_ms=p99, lmean_ms=1.0,
        bench_ms=1.0, body_bytes=0, throughput_rps=achieved, bench_over_lmean=1.0, offered_rps=offered, late=2,
        missed=1, saturated=saturated(offered, achieved),
    )  # fmt: skip


def test_sustains_needs_the_rate_and_the_slo():
    assert sustains(_open_stats(1000, 995, 9.9), slo_ms=10)
    assert not sustains(_open_stats(1000, 995, 10.1), slo_ms=10)  # P99 above the SLO
    assert not sustains(_open_stats(1000, 980, 1.0), slo_ms=10)  # saturated
    assert not sustains(_open_stats(1000, 995, None), slo_ms=10)  # no request succeeded


def test_aggregate_sums_late_and_missed_and_judges_saturation_on_the_medians():
    agg = aggregate([_open_stats(1000, 995, 1.0), _open_stats(1000, 985, 2.0), _open_stats(1000, 992, 3.0)])
    m = agg.median
    assert (m.late, m.missed, m.requests) == (6, 3, 300)
    assert m.throughput_rps == 992 and m.saturated is False  # one repeat saturated, the median did not
    closed = aggregate([row_stats(raw())])
    assert closed.median.saturated is None and closed.median.late is None


def test_mb_per_s_counts_both_directions_over_bench():
    doc = raw(workers=2, n=10, wall_ms=100.0)  # 13-byte answers: 2 x 10 x 13 bytes received in 0.1 s
    assert row_stats(doc).sent_bytes == 0
    assert row_stats(doc).mb_per_s == pytest.approx(260 / 1e6 / 0.1)
    doc["workload"]["body_size"] = 1000  # the workload's body, sent by every request
    assert row_stats(doc).sent_bytes == 20_000
    assert row_stats(doc).mb_per_s == pytest.approx(20_260 / 1e6 / 0.1)
    assert row_stats(doc, sent_bytes=7).sent_bytes == 7  # what the runner knows of --targets' bodies wins
    runs = [row_stats(doc), row_stats(doc)]
    assert aggregate(runs).median.sent_bytes == 40_000  # summed over repeats, as the bytes received are
