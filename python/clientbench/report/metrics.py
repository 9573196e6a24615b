"""The figures a dashboard tracks across commits, from a report: per row, its Bench, mean, P99 and CPU per request
(the median over the repeats, with their min and max) from a run's results, or its instructions, syscalls and
allocations per request from a cost document. Every one is smaller-is-better. The dashboard formats
(report/export/github_benchmark.py, bencher.py) render these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..model import Results, Row
from .base import Report

#: a run's tracked figures: RowStats field -> (slug, title, unit)
TIMED = {
    "bench_ms": ("bench-ms", "Bench", "ms"),
    "mean_ms": ("mean-ms", "Mean", "ms"),
    "p99_ms": ("p99-ms", "P99", "ms"),
    "cpu_us_per_req": ("cpu-us-per-request", "CPU per request", "us"),
}
#: a cost document's tracked figures: field -> (slug, title, unit)
COUNTED = {
    "instructions_per_request": ("instructions-per-request", "instructions per request", "instructions"),
    "syscalls_per_request": ("syscalls-per-request", "syscalls per request", "syscalls"),
    "allocations_per_request": ("allocations-per-request", "allocations per request", "allocations"),
}


@dataclass(frozen=True)
class Metric:
    benchmark: str  # the row's name, e.g. py-requests (its label in `label`)
    label: str
    slug: str
    title: str
    unit: str
    value: float
    low: float | None = None  # min over the repeats
    high: float | None = None  # max over the repeats
    repeats: int = 1


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _row(row: Row) -> list[Metric]:
    agg = row.aggregate
    if agg is None or row.status != "ok":
        return []  # a failed, unavailable or unsupported row has no figure to track
    out = []
    for field, (slug, title, unit) in TIMED.items():
        value = _number(getattr(agg.median, field))
        if value is None:
            continue
        values = [v for r in row.runs if r.stats is not None and (v := _number(getattr(r.stats, field))) is not None]
        out.append(
            Metric(row.client.name, row.client.label, slug, title, unit, value, min(values), max(values), len(values))
        )
    return out


def run_metrics(results: Results) -> list[Metric]:
    return [m for row in results.rows for m in _row(row)]


def cost_metrics(document: Mapping[str, Any]) -> list[Metric]:
    out = []
    for row in document.get("rows", []):
        if row.get("status") != "ok":
            continue
        for field, (slug, title, unit) in COUNTED.items():
            value = _number(row.get(field))
            if value is not None:
                out.append(Metric(row["name"], row.get("label") or row["name"], slug, title, unit, value))
    return out


def metrics(report: Report) -> list[Metric]:
    """What a report's results (or its cost document) give a dashboard; empty for any other report."""
    if report.results is not None:
        return run_metrics(report.results)
    if report.document is not None and report.document.get("schema") == "clientbench.cost/1":
        return cost_metrics(report.document)
    return []
