"""`bencher.json`: the report's tracked figures (report/metrics.py) in Bencher Metric Format: {benchmark: {measure:
{value, lower_value, upper_value}}}, the row's name the benchmark, the figure's slug (bench-ms, p99-ms,
instructions-per-request, ...) the measure, the min and max over the repeats its bounds
(https://bencher.dev/docs/reference/bencher-metric-format)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...files import write_atomic
from ..base import Report
from ..metrics import metrics
from .registry import register

FILE = "bencher.json"


def document(report: Report) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for m in metrics(report):
        measure: dict[str, Any] = {"value": m.value}
        if m.low is not None and m.high is not None:
            measure |= {"lower_value": m.low, "upper_value": m.high}
        out.setdefault(m.benchmark, {})[m.slug] = measure
    return out


@register("bencher")
class Bencher:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        found = document(report)
        if out is None or not found:
            return []
        path = out / FILE
        write_atomic(path, json.dumps(found, indent=2) + "\n")
        return [path]
