import math

import numpy as np
import pytest
from clientbench.stats import nearest_rank, row_stats


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
