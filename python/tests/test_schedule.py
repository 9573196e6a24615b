"""The Python harness's open loop (docs/raw-format.md, "Open loop") on a fake clock: the intended start times
(uniform phases, seeded Poisson streams), late starts charged from the intended time, requests missed at
--duration, the loop's end bounded by D plus one request; and the HdrHistogram buckets of --record histogram
against the spec's examples and the hdrhistogram package."""

from __future__ import annotations

import asyncio
import itertools
import random
import statistics
from collections.abc import Iterator

import pytest
from clientbench.harness import Worker, histogram, intended_ns, lowest_equivalent, open_loop, open_loop_async
from clientbench.harness.schedule import round_half_away, splitmix64
from hdrh.histogram import HdrHistogram

MS = 1_000_000
T0 = 1_000 * MS  # the fake clock's t0: any monotonic reading


def first(n: int, it: Iterator[int]) -> list[int]:
    return list(itertools.islice(it, n))


# -- intended start times ------------------------------------------------------------------------------


def test_uniform_phases_spread_evenly() -> None:
    """R = 1,000/s over W = 4: each worker every 4 ms, worker w shifted by w ms, together one every ms."""
    schedules = [first(5, intended_ns(w, 4, 1000.0, "uniform", 1)) for w in range(4)]
    assert schedules[0] == [0, 4 * MS, 8 * MS, 12 * MS, 16 * MS]
    assert schedules[3] == [3 * MS, 7 * MS, 11 * MS, 15 * MS, 19 * MS]
    assert sorted(itertools.chain(*schedules)) == [k * MS for k in range(20)]


def test_uniform_times_do_not_drift() -> None:
    """Computed from k, not summed: start 300,000 of a 3-worker 7,000/s schedule is exact to the ns."""
    k = 300_000
    (t,) = itertools.islice(intended_ns(2, 3, 7000.0, "uniform", 1), k, k + 1)
    assert t == round((2 + 3 * k) * 1e9 / 7000)
    assert first(3, intended_ns(0, 1, 3.0, "uniform", 1)) == [0, 333_333_333, 666_666_667]


def test_times_round_halves_away_from_zero() -> None:
    """C's round(), as every harness: Python's round() would give 2 for 2.5 (worker 1 of 1,000 at 400,000,000/s
    is due at 2.5 ns)."""
    assert [round_half_away(x) for x in (2.5, 3.5, 2.4999999999999996, 0.5, 0.49999999999999994, -2.5)] == [
        3, 4, 2, 1, 0, -3,
    ]  # fmt: skip
    assert first(2, intended_ns(1, 1000, 4e8, "uniform", 1)) == [3, 2503]


def test_poisson_is_the_contracts_splitmix64_schedule() -> None:
    """docs/raw-format.md's example, which every harness tests: --seed 1, W = 4, R = 2,000/s."""
    assert first(2, splitmix64(1)) == [0x910A2DEC89025CC1, 0xBEEB8DA1658EEC67]  # Vigna's splitmix64.c
    assert first(5, intended_ns(0, 4, 2000.0, "poisson", 1)) == [1_136_339, 1_722_984, 1_781_836, 3_404_080, 5_026_749]
    assert first(5, intended_ns(1, 4, 2000.0, "poisson", 1)) == [1_051_237, 1_628_870, 2_665_114, 3_199_777, 5_531_920]
    # the state is S + w mod 2^64: worker 1 of seed 2^64 - 1 is worker 0 of seed 0
    assert first(100, intended_ns(1, 4, 2000.0, "poisson", (1 << 64) - 1)) == first(
        100, intended_ns(0, 4, 2000.0, "poisson", 0)
    )


def test_poisson_is_seeded_per_worker() -> None:
    """Worker w draws from SplitMix64 seeded S + w: the same run twice gives the same times, other workers and
    other seeds other times; the first arrival is an interval after t0, not t0 itself."""
    a = first(200, intended_ns(1, 4, 2000.0, "poisson", 7))
    assert a == first(200, intended_ns(1, 4, 2000.0, "poisson", 7))
    assert a == first(200, intended_ns(0, 4, 2000.0, "poisson", 8))  # S + w
    assert a != first(200, intended_ns(2, 4, 2000.0, "poisson", 7))
    assert a != first(200, intended_ns(1, 4, 2000.0, "poisson", 8))
    assert 0 < a[0] and all(x <= y for x, y in itertools.pairwise(a))


def test_poisson_mean_interval_is_w_over_r() -> None:
    """Intervals of mean W/R (2 ms here) per worker, so R per second over the group; exponential: their
    standard deviation equals the mean."""
    times = first(20_001, intended_ns(0, 4, 2000.0, "poisson", 1))
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert statistics.fmean(gaps) == pytest.approx(2 * MS, rel=0.03)
    assert statistics.stdev(gaps) == pytest.approx(2 * MS, rel=0.05)
    group = sorted(itertools.chain(*(first(5_000, intended_ns(w, 4, 2000.0, "poisson", 1)) for w in range(4))))
    in_first_2s = sum(1 for t in group if t < 2_000 * MS)
    assert in_first_2s == pytest.approx(4000, rel=0.05)


def test_unknown_arrival_is_refused() -> None:
    with pytest.raises(ValueError, match="arrival"):
        next(intended_ns(0, 1, 1.0, "bursty", 1))


# -- the loop on a fake clock --------------------------------------------------------------------------


class FakeClock:
    """A monotonic clock in ns that moves only when the loop sleeps or a request runs."""

    def __init__(self, now: int = T0):
        self.now = now
        self.sleeps: list[int] = []

    def clock(self) -> int:
        return self.now

    def sleep(self, seconds: float) -> None:
        ns = round(seconds * 1e9)
        assert ns > 0, "the loop never sleeps for nothing"
        self.sleeps.append(ns)
        self.now += ns

    async def sleep_async(self, seconds: float) -> None:
        self.sleep(seconds)

    def server(self, service_ns: list[int], default: int = 100_000) -> tuple[list[int], object]:
        """send(): each request takes the next of service_ns (then `default`) ns; returns the log of the
        times requests were sent and the function."""
        sent: list[int] = []
        times = iter(service_ns)

        def send() -> tuple[int, int]:
            sent.append(self.now - T0)
            self.now += next(times, default)
            return 200, 13

        return sent, send


def run_loop(
    clock: FakeClock,
    service_ns: list[int],
    *,
    rate: float = 1000.0,
    workers: int = 1,
    worker: int = 0,
    requests: int | None = None,
    duration_ns: int | None = None,
    arrival: str = "uniform",
) -> tuple[Worker, list[int]]:
    w = Worker(open_loop=True)
    sent, send = clock.server(service_ns)
    schedule = intended_ns(worker, workers, rate, arrival, 1)
    open_loop(w, send, schedule, T0, requests, duration_ns, clock.clock, clock.sleep)  # type: ignore[arg-type]
    w.count_missed(duration_ns)
    return w, sent


def test_on_time_requests_start_at_their_intended_times() -> None:
    clock = FakeClock()
    w, sent = run_loop(clock, [], workers=4, worker=2, rate=4000.0, requests=5)
    assert sent == [k * MS + 500_000 for k in range(5)]  # worker 2 of 4 at 4,000/s: every ms from 0.5 ms on
    assert list(w.intended) == sent  # type: ignore[arg-type]
    assert [s - T0 for s in w.starts] == sent
    assert list(w.latencies) == [100_000] * 5
    assert (w.late, w.missed, w.failure_count) == (0, 0, 0)
    assert clock.sleeps == [500_000] + [MS - 100_000] * 4  # it waits for each intended time


def test_a_slow_request_makes_the_next_ones_late_and_they_are_charged_from_their_intended_time() -> None:
    """Request 0 takes 5.5 ms on a 1 ms schedule: requests 1-5 start as soon as the previous one returned
    (late), their service time is 0.1 ms but their corrected latency counts from when they were due."""
    clock = FakeClock()
    w, sent = run_loop(clock, [5_500_000], requests=10)
    assert sent == [0, 5_500_000, 5_600_000, 5_700_000, 5_800_000, 5_900_000, 6 * MS, 7 * MS, 8 * MS, 9 * MS]
    assert w.late == 5  # requests 1-5 (request 6 is due at 6.0 ms, when request 5 has just returned)
    corrected = [s - T0 + lat - i for s, lat, i in zip(w.starts, w.latencies, w.intended, strict=True)]  # type: ignore[arg-type]
    assert corrected[:7] == [5_500_000, 4_600_000, 3_700_000, 2_800_000, 1_900_000, 1_000_000, 100_000]
    assert list(w.latencies)[1:] == [100_000] * 9  # the service time alone would hide the stall
    assert w.missed == 0


def test_the_first_request_is_never_late() -> None:
    """Starting after I(w, 0) (the thread woke up after t0) is not a late start: no request was running."""
    clock = FakeClock(T0 + 3 * MS)
    w, sent = run_loop(clock, [], requests=3)
    assert sent == [3 * MS, 3_100_000, 3_200_000]  # requests 1 and 2 are late: request 0 started late
    assert w.late == 2


def test_a_wake_up_after_the_intended_time_is_not_late() -> None:
    """Late is decided by when request k-1 ended, not by when request k starts: a sleep that overshoots (a busy
    scheduler) is charged to the request's corrected latency, but the request is not late."""
    clock = FakeClock()

    def oversleep(seconds: float) -> None:
        clock.sleep(seconds)
        clock.now += 300_000

    w = Worker(open_loop=True)
    sent, send = clock.server([])
    open_loop(w, send, intended_ns(0, 1, 1000.0, "uniform", 1), T0, 4, None, clock.clock, oversleep)  # type: ignore[arg-type]
    assert sent == [0, 1_300_000, 2_300_000, 3_300_000] and w.late == 0


def test_requests_n_are_all_sent_however_late() -> None:
    clock = FakeClock()
    w, sent = run_loop(clock, [50 * MS] * 10, requests=10)
    assert len(sent) == len(w.latencies) == 10 and w.late == 9 and w.missed == 0


def test_duration_sends_what_can_start_before_d_and_counts_the_rest_as_missed() -> None:
    """D = 10 ms on a 1 ms schedule: 10 requests due. Request 3 stalls for 20 ms, so it returns at 23 ms,
    after D: requests 4-9 cannot start before D and are missed, never sent."""
    clock = FakeClock()
    w, sent = run_loop(clock, [100_000] * 3 + [20 * MS], duration_ns=10 * MS)
    assert sent == [0, MS, 2 * MS, 3 * MS]
    assert len(w.latencies) == 4 and w.missed == 6 and w.late == 0  # a missed request is not a late one
    assert w.loop_end - T0 == 23 * MS  # D plus what the one request in flight at D took


def test_duration_without_a_stall_sends_the_whole_schedule() -> None:
    clock = FakeClock()
    w, sent = run_loop(clock, [], rate=2000.0, workers=2, worker=1, duration_ns=10 * MS)
    assert sent == [MS * k + 500_000 for k in range(10)]  # I < D: 0.5, 1.5, ..., 9.5 ms
    assert (w.missed, w.late) == (0, 0)
    assert w.loop_end - T0 == 9_600_000  # nothing waits for D itself


def test_a_request_started_before_d_finishes_and_nothing_starts_after_d() -> None:
    """Request 8 (due 8 ms) is late, starts at 9.9 ms (< D) and runs past D; request 9 (due 9 ms < D) would
    start at 11.9 ms: missed. The loop ends when the last request returns: D plus at most one request."""
    clock = FakeClock()
    w, sent = run_loop(clock, [100_000] * 7 + [2_900_000, 2_000_000], duration_ns=10 * MS)
    assert sent[-2:] == [7 * MS, 9_900_000]
    assert all(s < 10 * MS for s in sent)
    assert w.missed == 1 and w.late == 1
    assert w.loop_end - T0 == 11_900_000


def test_poisson_schedule_in_the_loop() -> None:
    clock = FakeClock()
    w, sent = run_loop(clock, [1000] * 50, rate=500.0, arrival="poisson", requests=50)
    assert sent == first(50, intended_ns(0, 1, 500.0, "poisson", 1))  # 1 µs requests never make one late
    assert w.late == 0


def test_failures_are_recorded_at_their_place_in_the_schedule() -> None:
    clock = FakeClock()
    w = Worker(open_loop=True)
    calls = itertools.count()

    def send() -> tuple[int, int]:
        clock.now += 200_000
        n = next(calls)
        if n == 1:
            raise ConnectionResetError("reset")
        return (500, 7) if n == 2 else (200, 13)

    open_loop(w, send, intended_ns(0, 1, 1000.0, "uniform", 1), T0, 4, None, clock.clock, clock.sleep)
    assert len(w.latencies) == len(w.intended) == 4  # type: ignore[arg-type]
    assert w.failure_count == 2 and w.nbytes == 13 + 7 + 13
    assert [(f["index"], f["reason"]) for f in w.failures] == [
        (1, "ConnectionError: ConnectionResetError: reset"),
        (2, "status 500"),
    ]


def test_async_loop_keeps_the_same_schedule() -> None:
    clock = FakeClock()
    w = Worker(open_loop=True)
    sent, send_sync = clock.server([100_000] * 3 + [20 * MS])

    async def send() -> tuple[int, int]:
        return send_sync()  # type: ignore[operator, no-any-return]

    schedule = intended_ns(0, 1, 1000.0, "uniform", 1)
    asyncio.run(open_loop_async(w, send, schedule, T0, None, 10 * MS, clock.clock, clock.sleep_async))
    w.count_missed(10 * MS)
    assert sent == [0, MS, 2 * MS, 3 * MS] and w.missed == 6
    clock = FakeClock()
    w = Worker(open_loop=True)
    sent, send_sync = clock.server([5_500_000])
    asyncio.run(
        open_loop_async(w, send, intended_ns(0, 1, 1000.0, "uniform", 1), T0, 10, None, clock.clock, clock.sleep_async)
    )
    assert w.late == 5 and len(sent) == 10


# -- histograms ----------------------------------------------------------------------------------------


def test_bucket_rule_of_the_spec() -> None:
    assert [lowest_equivalent(v) for v in (0, 1, 2047, 2048, 2049, 2050, 4095, 4096)] == [
        0, 1, 2047, 2048, 2048, 2050, 4094, 4096,
    ]  # fmt: skip
    assert lowest_equivalent(1_000_999) == 1_000_960


def test_buckets_agree_with_the_hdrhistogram_package() -> None:
    reference = HdrHistogram(1, 10**13, 3)
    rng = random.Random(19)
    values = [int(rng.lognormvariate(12, 4)) % 10**13 for _ in range(20_000)] + list(range(2040, 2100))
    for v in values:
        assert lowest_equivalent(v) == reference.get_lowest_equivalent_value(v), v


def test_histogram_lists_each_bucket_once_by_increasing_value() -> None:
    h = histogram([2049, 2048, 5, 1_000_999, 1_000_960, 5])
    assert h == {"significant_digits": 3, "counts": [[5, 2], [2048, 2], [1_000_960, 2]]}
    assert histogram([]) == {"significant_digits": 3, "counts": []}


def test_worker_histograms_hold_the_successful_requests() -> None:
    """Service time from the actual start, corrected latency from the intended one, failures left out."""
    w = Worker(compact=True, open_loop=True)
    w.record_open(0, 0, T0 + 1_000, T0 + 6_000, 200, 1, None)  # service 5,000, corrected 6,000
    w.record_open(1, 4_000, T0 + 9_000, T0 + 9_500, 500, 1, None)  # failed: in neither histogram
    w.record_open(2, 8_000, T0 + 9_500, T0 + 1_009_500, 200, 1, None)  # service 1,000,000, corrected 1,001,500
    hist = w.to_json(T0, "histogram")["histograms"]
    assert hist["service"]["counts"] == [[5000, 1], [999_936, 1]]
    assert hist["corrected"]["counts"] == [[6000, 1], [1_001_472, 1]]
    assert w.to_json(T0, "histogram")["count"] == 3
