"""Every statistic clientbench reports is computed here, from raw driver documents.

Percentiles are nearest-rank, as in the reference write-up: the sample at index ceil(p*n) - 1 of the sorted
samples, which is numpy's ``method="inverted_cdf"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

NS_PER_MS = 1e6


def nearest_rank(samples: Iterable[float] | np.ndarray, p: float) -> float:
    """The nearest-rank p-quantile (0 <= p <= 1) of non-empty samples."""
    a = np.asarray(samples if isinstance(samples, np.ndarray) else list(samples), dtype=np.float64)
    if a.size == 0:
        raise ValueError("nearest_rank of no samples")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be within [0, 1], got {p}")
    return float(np.quantile(a, p, method="inverted_cdf"))


def failed_mask(worker: Mapping[str, Any]) -> np.ndarray:
    """True at the index of every failed request of one worker of a raw document."""
    n = len(worker["latencies_ns"])
    mask = np.zeros(n, dtype=bool)
    mask[[f["index"] for f in worker["failures"] if 0 <= f["index"] < n]] = True
    return mask


def ok_latencies_ms(doc: Mapping[str, Any]) -> np.ndarray:
    """Latencies of the successful requests of every worker of a raw document, in ms."""
    parts = [np.asarray(w["latencies_ns"], dtype=np.float64)[~failed_mask(w)] for w in doc["workers"]]
    return np.concatenate(parts) / NS_PER_MS if parts else np.empty(0)


@dataclass(frozen=True)
class RowStats:
    """The figures of one driver run. Times in ms; `None` where no request succeeded."""

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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ProcessUsage:
    """What the kernel accounted to a driver process (wait4's rusage): whole-process figures."""

    cpu_s: float
    max_rss_kib: int


def row_stats(doc: Mapping[str, Any], usage: ProcessUsage | None = None) -> RowStats:
    """Statistics of one validated raw document (see docs/raw-format.md).

    Latency figures cover the successful requests of all workers; failed requests are counted in
    `errors`. LMean is the mean of the workers' timed-loop durations, Bench the group's wall time.
    CPU per request uses the driver's own `cpu_ns` (process CPU during the timed group) when it reports
    one, else the whole process's CPU from `usage` (which then includes start-up).
    """
    workers = doc["workers"]
    requests = sum(len(w["latencies_ns"]) for w in workers)
    errors = sum(len(w["failures"]) for w in workers)
    body_bytes = sum(int(w["bytes"]) for w in workers)
    good = ok_latencies_ms(doc)
    elapsed = np.asarray([w["elapsed_ns"] for w in workers], dtype=np.float64) / NS_PER_MS
    lmean = float(elapsed.mean())
    bench = doc["wall_ns"] / NS_PER_MS

    def q(p: float) -> float | None:
        return nearest_rank(good, p) if good.size else None

    return RowStats(
        requests=requests,
        errors=errors,
        mean_ms=float(good.mean()) if good.size else None,
        p50_ms=q(0.5),
        p99_ms=q(0.99),
        p999_ms=q(0.999),
        max_ms=float(good.max()) if good.size else None,
        lmean_ms=lmean,
        bench_ms=bench,
        body_bytes=body_bytes,
        throughput_rps=(requests - errors) / (bench / 1e3) if bench > 0 else 0.0,
        bench_over_lmean=bench / lmean if lmean > 0 else None,
        cpu_us_per_req=_cpu_per_request(doc, usage, requests),
        peak_rss_mib=_peak_rss_mib(doc, usage),
    )


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
class Aggregate:
    """A row over R repeats: the median of every figure, and the spread of Bench."""

    repeats: int
    median: RowStats
    bench_min_ms: float
    bench_max_ms: float
    bench_iqr_ms: float

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


def aggregate(runs: Sequence[RowStats]) -> Aggregate:
    """Median of each field over the repeats (None where any repeat has None); errors are summed."""
    if not runs:
        raise ValueError("aggregate of no runs")
    fields: dict[str, Any] = {}
    for name in RowStats.__dataclass_fields__:
        values = [getattr(r, name) for r in runs]
        if name in ("requests", "errors", "body_bytes"):
            fields[name] = int(sum(values))
        elif any(v is None for v in values):
            fields[name] = None
        else:
            fields[name] = float(np.median(values))
    bench = np.asarray([r.bench_ms for r in runs])
    q1, q3 = np.percentile(bench, [25, 75])
    return Aggregate(len(runs), RowStats(**fields), float(bench.min()), float(bench.max()), float(q3 - q1))
