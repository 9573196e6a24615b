"""Every statistic clientbench reports is computed here, from raw driver documents.

Percentiles are nearest-rank, as in the reference write-up: the sample at index ceil(p*n) - 1 of the sorted
samples, which is numpy's ``method="inverted_cdf"``. Documents with histograms instead of samples (long
runs, docs/raw-format.md) are merged into one HdrHistogram per distribution and read at the same rank,
within the histogram's 3 significant digits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from hdrh.histogram import HdrHistogram

NS_PER_MS = 1e6


def nearest_rank(samples: Iterable[float] | np.ndarray, p: float) -> float:
    """The nearest-rank p-quantile (0 <= p <= 1) of non-empty samples."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be within [0, 1], got {p}")
    return float(nearest_ranks(samples, [p])[0])


def nearest_ranks(samples: Iterable[float] | np.ndarray, ps: Sequence[float] | np.ndarray) -> np.ndarray:
    """The nearest-rank quantiles of non-empty samples at every p of `ps` at once (a latency curve's points)."""
    a = np.asarray(samples if isinstance(samples, np.ndarray) else list(samples), dtype=np.float64)
    if a.size == 0:
        raise ValueError("nearest_rank of no samples")
    return np.asarray(np.quantile(a, ps, method="inverted_cdf"), dtype=np.float64)


def median(values: Sequence[float]) -> float:
    """The median of non-empty values (the mean of the two middle ones for an even count)."""
    if not values:
        raise ValueError("median of no values")
    return float(np.median(values))


def middle(values: Sequence[float]) -> float:
    """The middle one of non-empty values, sorted; for an even count the upper of the two middle ones, so that it
    is a value some row had (compare's summary: the median change over rows)."""
    if not values:
        raise ValueError("middle of no values")
    return sorted(values)[len(values) // 2]


def count(worker: Mapping[str, Any]) -> int:
    """The timed requests one worker sent (raw/1 documents have no `count`: their arrays say it)."""
    return int(worker["count"]) if "count" in worker else len(worker["latencies_ns"])


def failure_count(worker: Mapping[str, Any]) -> int:
    """The failed timed requests of one worker (raw/2 lists at most the first 1,000 of them)."""
    return int(worker["failure_count"]) if "failure_count" in worker else len(worker["failures"])


def is_open(doc: Mapping[str, Any]) -> bool:
    """An open-loop document: requests were sent on a schedule (docs/raw-format.md)."""
    return bool(doc["workload"].get("loop") == "open")


def has_samples(doc: Mapping[str, Any]) -> bool:
    """Per-request arrays (`--record samples`, and every raw/1 document) rather than histograms."""
    return all("latencies_ns" in w for w in doc["workers"])


def failed_mask(worker: Mapping[str, Any]) -> np.ndarray:
    """True at the index of every failed request of one worker of a raw document (with samples)."""
    n = len(worker["latencies_ns"])
    mask = np.zeros(n, dtype=bool)
    mask[[f["index"] for f in worker["failures"] if 0 <= f["index"] < n]] = True
    return mask


def ok_samples_ns(doc: Mapping[str, Any], which: str = "latency") -> np.ndarray:
    """Per-request figures of the successful requests of every worker of a document with samples, in ns:
    `service` (end - actual start), `corrected` (end - intended start; open loop only), or `latency`: the
    corrected one in an open loop, the service time in a closed one."""
    which = ("corrected" if is_open(doc) else "service") if which == "latency" else which
    parts = []
    for w in doc["workers"]:
        values = np.asarray(w["latencies_ns"], dtype=np.float64)
        if which == "corrected":
            values = values + np.asarray(w["start_ns"], dtype=np.float64) - np.asarray(w["intended_ns"], np.float64)
        parts.append(values[~failed_mask(w)])
    return np.concatenate(parts) if parts else np.empty(0)


def ok_latencies_ms(doc: Mapping[str, Any]) -> np.ndarray:
    """Latencies of the successful requests of every worker of a raw document, in ms: the corrected latency
    in an open loop. From histograms, each bucket's value repeated by its count (for plots)."""
    if has_samples(doc):
        return ok_samples_ns(doc) / NS_PER_MS
    hist = merged_histogram(doc, "corrected" if is_open(doc) else "service")
    values, counts = histogram_buckets(hist)
    return np.repeat(values, counts) / NS_PER_MS


# -- histograms ----------------------------------------------------------------------------------

#: the drivers' histograms: HdrHistogram's scheme at 3 significant digits, unit 1 ns (docs/raw-format.md)
HISTOGRAM_DIGITS = 3
#: the largest latency a merged histogram holds: a day, in ns
HISTOGRAM_HIGHEST_NS = 86_400 * 10**9


def new_histogram() -> HdrHistogram:
    return HdrHistogram(1, HISTOGRAM_HIGHEST_NS, HISTOGRAM_DIGITS)


def merged_histogram(doc: Mapping[str, Any], which: str) -> HdrHistogram:
    """Every worker's `which` histogram (service or corrected) of a `--record histogram` document, merged
    into one HdrHistogram."""
    merged = new_histogram()
    for i, w in enumerate(doc["workers"]):
        for value, n in w["histograms"][which]["counts"]:
            if n and not merged.record_value(max(int(value), 1), int(n)):
                raise ValueError(f"worker {i}: a {which} latency of {value} ns does not fit a histogram")
    return merged


def histogram_buckets(hist: HdrHistogram, value: str = "highest") -> tuple[np.ndarray, np.ndarray]:
    """The buckets that hold a value: (each one's highest equivalent value in ns, or its `median` equivalent
    one, its count), by value."""
    counts = np.ctypeslib.as_array(hist.counts)[: hist.counts_len]
    idx = np.flatnonzero(counts)
    lowest = np.fromiter((hist.get_value_from_index(int(i)) for i in idx), np.int64, idx.size)
    highest = np.fromiter((hist.get_highest_equivalent_value(int(v)) for v in lowest), np.int64, idx.size)
    values = highest if value == "highest" else lowest + (highest - lowest + 1) // 2
    return values.astype(np.float64), counts[idx].astype(np.int64)


def histogram_mean(hist: HdrHistogram) -> float:
    """HdrHistogram's mean (each bucket at its median equivalent value), in ns, computed with numpy: the
    package's own get_mean_value walks every bucket in Python."""
    values, counts = histogram_buckets(hist, "median")
    return float((values * counts).sum() / counts.sum()) if counts.size else 0.0


def histogram_quantiles(hist: HdrHistogram, ps: Sequence[float]) -> list[float]:
    """The nearest-rank p-quantiles of a histogram, in ns: the bucket that holds the sample of rank
    ceil(p*n) (at least 1), given by its highest equivalent value (within 0.1% of the exact sample)."""
    values, counts = histogram_buckets(hist)
    if not counts.size:
        raise ValueError("quantiles of an empty histogram")
    cumulative = np.cumsum(counts)
    total = int(cumulative[-1])
    ranks = [max(1, math.ceil(p * total - 1e-9 * total)) for p in ps]
    return [float(values[int(np.searchsorted(cumulative, r))]) for r in ranks]


# -- one distribution's figures ------------------------------------------------------------------

#: the percentiles every distribution reports: P50, P90, P99, P99.9, P99.99
QUANTILES = (0.5, 0.9, 0.99, 0.999, 0.9999)


@dataclass(frozen=True)
class Distribution:
    """One latency distribution's figures over the successful requests, in ms."""

    count: int
    mean_ms: float
    quantiles_ms: tuple[float, ...]  # at QUANTILES
    max_ms: float

    def at(self, p: float) -> float:
        return self.quantiles_ms[QUANTILES.index(p)]


def distribution(doc: Mapping[str, Any], which: str) -> Distribution | None:
    """`service` or `corrected` latency of the successful requests of a document: exact from samples,
    from the merged histogram otherwise. None when no request succeeded."""
    if has_samples(doc):
        a = ok_samples_ns(doc, which)
        if not a.size:
            return None
        qs = np.quantile(a, QUANTILES, method="inverted_cdf")
        return Distribution(
            int(a.size),
            float(a.mean()) / NS_PER_MS,
            tuple(float(q) / NS_PER_MS for q in qs),
            float(a.max()) / NS_PER_MS,
        )
    hist = merged_histogram(doc, which)
    if not hist.get_total_count():
        return None
    return Distribution(
        int(hist.get_total_count()),
        histogram_mean(hist) / NS_PER_MS,
        tuple(q / NS_PER_MS for q in histogram_quantiles(hist, QUANTILES)),
        hist.get_max_value() / NS_PER_MS,
    )


#: an open-loop row whose achieved rate is below this share of the offered rate is saturated
SATURATION = 0.99


def saturated(offered_rps: float | None, achieved_rps: float) -> bool | None:
    """Whether an open-loop row could not keep up with its schedule (None for a closed loop)."""
    return None if offered_rps is None else achieved_rps < SATURATION * offered_rps


@dataclass(frozen=True)
class RowStats:
    """The figures of one driver run. Times in ms; `None` where no request succeeded.

    In an open loop the latency figures (mean_ms ... max_ms, p90_ms, p9999_ms) are the corrected latency,
    from the intended start, and the service_* figures the service time, from the actual start; the
    throughput is the achieved rate. A closed loop has no service_*, offered, late, missed or saturated."""

    requests: int
    errors: int
    mean_ms: float | None
    p50_ms: float | None
    p99_ms: float | None
    p999_ms: float | None
    max_ms: float | None
    lmean_ms: float
    bench_ms: float
    body_bytes: int
    throughput_rps: float
    bench_over_lmean: float | None
    cpu_us_per_req: float | None = None
    peak_rss_mib: float | None = None
    p90_ms: float | None = None
    p9999_ms: float | None = None
    offered_rps: float | None = None
    late: int | None = None
    late_pct: float | None = None
    missed: int | None = None
    saturated: bool | None = None
    service_mean_ms: float | None = None
    service_p50_ms: float | None = None
    service_p90_ms: float | None = None
    service_p99_ms: float | None = None
    service_p999_ms: float | None = None
    service_p9999_ms: float | None = None
    service_max_ms: float | None = None
    #: a garbage-collected driver's (the document's `gc`): collections and objects freed per 1,000 requests
    gc_per_1k_req: float | None = None
    gc_objects_per_1k_req: float | None = None
    #: the driver process's peak RSS over its workers (what a worker, or connection, costs in memory)
    rss_per_worker_mib: float | None = None
    #: request body bytes the timed requests sent (the workload's bodies: the runner knows them)
    sent_bytes: int = 0
    #: request and response body bytes per second of Bench, in MB (10^6 bytes)
    mb_per_s: float | None = None
    #: with --phases, where the driver recorded them: each phase's mean in ms over the successful requests it
    #: recorded, and `own`, their mean latency less the phases (the client's own time; docs/phases.md)
    phases: dict[str, float] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ProcessUsage:
    """What the kernel accounted to a driver process (wait4's rusage): whole-process figures."""

    cpu_s: float
    max_rss_kib: int


def _per_1k(doc: Mapping[str, Any], key: str, requests: int) -> float | None:
    """A `gc` count of the document per 1,000 requests (None when the driver reported none)."""
    gc = doc.get("gc")
    return 1000.0 * gc[key] / requests if gc is not None and requests else None


def row_stats(doc: Mapping[str, Any], usage: ProcessUsage | None = None, sent_bytes: int | None = None) -> RowStats:
    """Statistics of one validated raw document (see docs/raw-format.md).

    Latency figures cover the successful requests of all workers; failed requests are counted in
    `errors`. LMean is the mean of the workers' timed-loop durations, Bench the group's wall time.
    CPU per request uses the driver's own `cpu_ns` (process CPU during the timed group) when it reports
    one, else the whole process's CPU from `usage` (which then includes start-up). An open loop's latency is
    the corrected one, its service time reported apart, its throughput the achieved rate. `sent_bytes`: the
    request body bytes of the timed requests (default: the workload's body size times the requests).
    """
    workers = doc["workers"]
    requests = sum(count(w) for w in workers)
    errors = sum(failure_count(w) for w in workers)
    body_bytes = sum(int(w["bytes"]) for w in workers)
    elapsed = np.asarray([w["elapsed_ns"] for w in workers], dtype=np.float64) / NS_PER_MS
    lmean = float(elapsed.mean())
    bench = doc["wall_ns"] / NS_PER_MS
    throughput = (requests - errors) / (bench / 1e3) if bench > 0 else 0.0
    if sent_bytes is None:
        sent_bytes = int(doc["workload"].get("body_size") or 0) * requests
    open_loop = is_open(doc)
    latency = distribution(doc, "corrected" if open_loop else "service")
    service = distribution(doc, "service") if open_loop else None
    offered = float(doc["workload"]["rate"]) if open_loop else None
    late = sum(int(w["late"]) for w in workers) if open_loop else None

    def q(d: Distribution | None, p: float) -> float | None:
        return d.at(p) if d is not None else None

    return RowStats(
        requests=requests,
        errors=errors,
        mean_ms=latency.mean_ms if latency else None,
        p50_ms=q(latency, 0.5),
        p99_ms=q(latency, 0.99),
        p999_ms=q(latency, 0.999),
        max_ms=latency.max_ms if latency else None,
        lmean_ms=lmean,
        bench_ms=bench,
        body_bytes=body_bytes,
        sent_bytes=sent_bytes,
        mb_per_s=(sent_bytes + body_bytes) / 1e6 / (bench / 1e3) if bench > 0 else None,
        throughput_rps=throughput,
        bench_over_lmean=bench / lmean if lmean > 0 else None,
        cpu_us_per_req=_cpu_per_request(doc, usage, requests),
        peak_rss_mib=(rss := _peak_rss_mib(doc, usage)),
        rss_per_worker_mib=rss / len(workers) if rss is not None and workers else None,
        gc_per_1k_req=_per_1k(doc, "collections", requests),
        gc_objects_per_1k_req=_per_1k(doc, "collected", requests),
        p90_ms=q(latency, 0.9),
        p9999_ms=q(latency, 0.9999),
        offered_rps=offered,
        late=late,
        late_pct=100.0 * late / requests if late is not None and requests else None,
        missed=sum(int(w["missed"]) for w in workers) if open_loop else None,
        saturated=saturated(offered, throughput),
        service_mean_ms=service.mean_ms if service else None,
        service_p50_ms=q(service, 0.5),
        service_p90_ms=q(service, 0.9),
        service_p99_ms=q(service, 0.99),
        service_p999_ms=q(service, 0.999),
        service_p9999_ms=q(service, 0.9999),
        service_max_ms=service.max_ms if service else None,
        phases=phase_means(doc),
    )


#: the client's own time: a request's latency less its phases
OWN = "own"


def phase_means(doc: Mapping[str, Any]) -> dict[str, float] | None:
    """Each phase's mean in ms over the requests whose phases the driver recorded (docs/raw-format.md, "Phases"),
    in the order the driver names them, then `own`: their mean latency less the sum of those means. None when the
    driver recorded none (no --phases, a client that sees none, no successful request)."""
    keys = (doc.get("client") or {}).get("phases")
    if not keys:
        return None
    sums = [w["phases"] for w in doc["workers"]]
    n = sum(s["count"] for s in sums)
    if not n:
        return None
    means = {k: sum(s["sum_ns"][k] for s in sums) / n / NS_PER_MS for k in keys}
    means[OWN] = sum(s["latency_ns"] for s in sums) / n / NS_PER_MS - sum(means.values())
    return means


def _peak_rss_mib(doc: Mapping[str, Any], usage: ProcessUsage | None) -> float | None:
    """The driver's own VmHWM when it reports one: wait4's ru_maxrss also counts the pages of the forked
    runner before exec (tens of MiB of Python), so it is only a fallback (an upper bound)."""
    if isinstance(doc.get("peak_rss_kib"), int):
        return float(doc["peak_rss_kib"]) / 1024
    return usage.max_rss_kib / 1024 if usage else None


def _cpu_per_request(doc: Mapping[str, Any], usage: ProcessUsage | None, requests: int) -> float | None:
    if not requests:
        return None
    if isinstance(doc.get("cpu_ns"), int):
        return float(doc["cpu_ns"]) / 1e3 / requests
    if usage is not None:
        return usage.cpu_s * 1e6 / requests
    return None


@dataclass(frozen=True)
class Range:
    """One figure's spread over a row's repeats: its min and max over the n repeats that have it."""

    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Aggregate:
    """A row over R repeats: the median of every figure, the spread of Bench, and every figure's min-max (`spread`,
    which results.json does not keep: it is computed again from the repeats)."""

    repeats: int
    median: RowStats
    bench_min_ms: float
    bench_max_ms: float
    bench_iqr_ms: float
    ranges: Mapping[str, Range] = field(default_factory=dict, compare=False)

    def spread(self, name: str) -> Range | None:
        """A figure's (RowStats field's) min-max over the repeats that have it; None with fewer than two."""
        found = self.ranges.get(name)
        return found if found is not None and found.n > 1 else None

    @property
    def bench_spread_pct(self) -> float:
        """(max - min) / median of Bench, in percent."""
        return 100.0 * (self.bench_max_ms - self.bench_min_ms) / self.median.bench_ms if self.median.bench_ms else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats,
            "median": self.median.to_json(),
            "bench_min_ms": self.bench_min_ms,
            "bench_max_ms": self.bench_max_ms,
            "bench_iqr_ms": self.bench_iqr_ms,
            "bench_spread_pct": self.bench_spread_pct,
        }


#: figures of a row that add up over its repeats (the others are medians)
SUMMED = ("requests", "errors", "body_bytes", "sent_bytes", "late", "missed")


def aggregate(runs: Sequence[RowStats]) -> Aggregate:
    """Median of each field over the repeats (None where any repeat has None); counts are summed; an
    open-loop row is saturated when its median achieved rate is below SATURATION of the offered rate."""
    if not runs:
        raise ValueError("aggregate of no runs")
    fields: dict[str, Any] = {}
    for name in RowStats.__dataclass_fields__:
        values = [getattr(r, name) for r in runs]
        if any(v is None for v in values):
            fields[name] = None
        elif name == "phases":  # each phase's median over the repeats
            fields[name] = {
                k: float(np.median([v[k] for v in values])) for k in values[0] if all(k in v for v in values)
            }
        elif name in SUMMED:
            fields[name] = int(sum(values))
        elif name != "saturated":
            fields[name] = float(np.median(values))
    fields["saturated"] = saturated(fields["offered_rps"], fields["throughput_rps"])
    bench = np.asarray([r.bench_ms for r in runs])
    q1, q3 = np.percentile(bench, [25, 75])
    ranges: dict[str, Range] = {}
    for name in RowStats.__dataclass_fields__:
        numbers = [float(v) for r in runs if _is_number(v := getattr(r, name))]
        if numbers:
            ranges[name] = Range(min(numbers), max(numbers), len(numbers))
    for key in fields["phases"] or {}:  # a phase's, as "phases.<key>" (metrics.Metric.field)
        numbers = [r.phases[key] for r in runs if r.phases and key in r.phases]
        ranges[f"phases.{key}"] = Range(min(numbers), max(numbers), len(numbers))
    return Aggregate(len(runs), RowStats(**fields), float(bench.min()), float(bench.max()), float(q3 - q1), ranges)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def sustains(stats: RowStats, slo_ms: float) -> bool:
    """An open-loop row sustains its rate: achieved >= SATURATION x offered and the corrected P99 within the
    SLO (docs/open-loop.md)."""
    return stats.saturated is False and stats.p99_ms is not None and stats.p99_ms <= slo_ms


# -- an open loop's time series ------------------------------------------------------------------


@dataclass(frozen=True)
class Second:
    """One bucket of an open loop's schedule: [t_s, t_s + width_s) seconds after t0 (1 s, the last one cut at the
    schedule's end). `requests`, `errors`, `p50_ms` and `p99_ms` are of the requests whose intended start falls in
    it (the percentiles: their corrected latency, over the successful ones; None when none succeeded);
    `completed` is the successful requests that returned within it, `achieved_rps` those per second of it."""

    t_s: float
    width_s: float
    requests: int
    errors: int
    completed: int
    achieved_rps: float
    p50_ms: float | None
    p99_ms: float | None


@dataclass(frozen=True)
class TimeSeries:
    """An open-loop run second by second (docs/open-loop.md#time-series). `drained`: successful requests that
    returned after the schedule's end (in no bucket's rate); `unplaced_errors`: failures beyond the ones a driver
    lists with their index (docs/raw-format.md), counted in the run's Errors but in no second."""

    seconds: tuple[Second, ...]
    drained: int = 0
    unplaced_errors: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "bucket_s": 1.0,
            "by": "intended_start",
            "seconds": [asdict(s) for s in self.seconds],
            "drained": self.drained,
            "unplaced_errors": self.unplaced_errors,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TimeSeries:
        return cls(tuple(Second(**s) for s in doc["seconds"]), int(doc["drained"]), int(doc["unplaced_errors"]))


def time_series(doc: Mapping[str, Any]) -> TimeSeries | None:
    """The per-second series of an open-loop document with samples; None for a closed loop or histograms.

    A request belongs to the second of its intended start (the schedule's second, whatever delayed it); the
    achieved rate of a second counts the successful requests that returned within it, so a stall shows as a dip
    in the rate (and a jump in the P99 of the requests that waited), not only in the run's percentiles. The
    schedule lasts `duration_s`, or requests x workers / rate for an open loop of N requests per worker."""
    if not is_open(doc) or not has_samples(doc) or not doc["workers"]:
        return None
    workload, workers = doc["workload"], doc["workers"]
    intended = np.concatenate([np.asarray(w["intended_ns"], dtype=np.float64) for w in workers])
    ends = np.concatenate(
        [np.asarray(w["start_ns"], dtype=np.float64) + np.asarray(w["latencies_ns"], dtype=np.float64) for w in workers]
    )
    failed = np.concatenate([failed_mask(w) for w in workers])
    duration = workload.get("duration_s")
    length_s = float(duration) if duration else sum(count(w) for w in workers) / float(workload["rate"])
    second = np.maximum(np.floor(intended / 1e9), 0).astype(np.int64)
    n = max(math.ceil(length_s - 1e-9), int(second.max()) + 1 if second.size else 0, 1)
    # the edges of the buckets: whole seconds, the last one ending with the schedule (a request intended past it,
    # e.g. in a Poisson schedule of N requests, extends the series by whole seconds)
    end_s = min(length_s, float(n)) if n == math.ceil(length_s - 1e-9) else float(n)
    edges = np.append(np.arange(n, dtype=np.float64), end_s) * 1e9
    ok = ~failed
    completed = np.histogram(ends[ok], bins=edges)[0]
    corrected = (ends - intended)[ok]
    ok_second = second[ok]
    seconds = []
    for b in range(n):
        latency = corrected[ok_second == b]
        p50, p99 = (
            np.quantile(latency, (0.5, 0.99), method="inverted_cdf") / NS_PER_MS if latency.size else (None, None)
        )
        width = (edges[b + 1] - edges[b]) / 1e9
        seconds.append(
            Second(
                t_s=float(b),
                width_s=round(width, 9),
                requests=int((second == b).sum()),
                errors=int((failed & (second == b)).sum()),
                completed=int(completed[b]),
                achieved_rps=float(completed[b]) / width if width > 0 else 0.0,
                p50_ms=None if p50 is None else float(p50),
                p99_ms=None if p99 is None else float(p99),
            )
        )
    drained = int((ends[ok] > edges[-1]).sum())  # np.histogram's last bucket holds its right edge
    listed = int(failed.sum())
    return TimeSeries(tuple(seconds), drained, sum(failure_count(w) for w in workers) - listed)


# -- cold starts: one figure over a row's samples ----------------------------------------------------


@dataclass(frozen=True)
class Spread:
    """One figure over a row's n cold starts (`clientbench cold`): its median, min, max and interquartile range."""

    median: float
    low: float
    high: float
    iqr: float
    n: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def spread(values: Sequence[float]) -> Spread:
    """The median, min, max and interquartile range of non-empty values."""
    if not values:
        raise ValueError("spread of no values")
    a = np.asarray(values, dtype=np.float64)
    q1, q3 = np.percentile(a, [25, 75])
    return Spread(float(np.median(a)), float(a.min()), float(a.max()), float(q3 - q1), int(a.size))
