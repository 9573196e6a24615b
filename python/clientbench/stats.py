"""Every statistic clientbench reports is computed here, from raw driver documents.

Percentiles are nearest-rank, as in the reference write-up: the sample at index ceil(p*n) - 1 of the sorted
samples, which is numpy's ``method="inverted_cdf"``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def row_stats(doc: Mapping[str, Any]) -> RowStats:
    """Statistics of one validated raw document (see docs/raw-format.md).

    Latency figures cover the successful requests of all workers; failed requests are counted in
    `errors`. LMean is the mean of the workers' timed-loop durations, Bench the group's wall time.
    """
    workers = doc["workers"]
    latencies: list[np.ndarray] = []
    requests = errors = body_bytes = 0
    for w in workers:
        lat = np.asarray(w["latencies_ns"], dtype=np.float64)
        ok = np.ones(lat.size, dtype=bool)
        failed = [f["index"] for f in w["failures"] if 0 <= f["index"] < lat.size]
        ok[failed] = False
        latencies.append(lat[ok])
        requests += lat.size
        errors += len(w["failures"])
        body_bytes += int(w["bytes"])
    good = np.concatenate(latencies) / NS_PER_MS if latencies else np.empty(0)
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
    )
