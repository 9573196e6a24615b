"""The figures a dashboard tracks across commits, from a report: per row, the run's tracked figures (Bench, mean,
P99 and CPU per request: the median over the repeats, with their min and max), a cost document's (instructions,
syscalls and allocations per request) or a cold-start document's (import, construct, first and second request,
time to the first answer, peak RSS: the median over the samples, with their min and max), as the registry
(metrics.py) names them: its slug, title and unit. Every one is smaller-is-better. The dashboard formats
(report/export/github_benchmark.py, bencher.py) render these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..analysis.cold import median, span
from ..metrics import tracked
from ..model import Results, Row
from .base import Report


@dataclass(frozen=True)
class Tracked:
    """One figure of one row, as a dashboard takes it."""

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


def _row(row: Row) -> list[Tracked]:
    agg = row.aggregate
    if agg is None or row.status != "ok":
        return []  # a failed, unavailable or unsupported row has no figure to track
    out = []
    for m in tracked("run"):
        value = _number(m.value(agg.median))
        found = agg.ranges.get(m.field)
        if value is None or found is None:
            continue
        out.append(
            Tracked(row.client.name, row.client.label, m.slug, m.title, m.unit, value, found.low, found.high, found.n)
        )
    return out


def run_metrics(results: Results) -> list[Tracked]:
    return [m for row in results.rows for m in _row(row)]


def cost_metrics(document: Mapping[str, Any]) -> list[Tracked]:
    out = []
    for row in document.get("rows", []):
        if row.get("status") != "ok":
            continue
        for m in tracked("cost"):
            value = _number(row.get(m.field))
            if value is not None:
                out.append(Tracked(row["name"], row.get("label") or row["name"], m.slug, m.title, m.unit, value))
    return out


def cold_metrics(document: Mapping[str, Any]) -> list[Tracked]:
    out = []
    for row in document.get("rows", []):
        if row.get("status") != "ok":
            continue
        for m in tracked("cold"):
            value, found = median(row, m.field), span(row, m.field)
            if value is not None and found is not None:
                label = row.get("label") or row["name"]
                out.append(Tracked(row["name"], label, m.slug, m.title, m.unit, value, found.low, found.high, found.n))
    return out


def metrics(report: Report) -> list[Tracked]:
    """What a report's results (or its cost or cold-start document) give a dashboard; empty for any other report."""
    if report.results is not None:
        return run_metrics(report.results)
    if report.document is not None and report.document.get("schema") == "clientbench.cost/1":
        return cost_metrics(report.document)
    if report.document is not None and report.document.get("schema") == "clientbench.cold/1":
        return cold_metrics(report.document)
    return []
