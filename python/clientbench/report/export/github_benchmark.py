"""`github-benchmark.json`: the report's tracked figures (report/metrics.py) in github-action-benchmark's
`customSmallerIsBetter` format: a list of {name, unit, value, range?, extra?}, one per row and figure
(https://github.com/benchmark-action/github-action-benchmark, "Examples: custom benchmark")."""

from __future__ import annotations

import json
from pathlib import Path

from ...files import write_atomic
from ..base import Report
from ..metrics import metrics
from .registry import register

FILE = "github-benchmark.json"


def entries(report: Report) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for m in metrics(report):
        entry: dict[str, object] = {"name": f"{m.benchmark}: {m.title}", "unit": m.unit, "value": m.value}
        if m.low is not None and m.high is not None and m.repeats > 1:
            entry["range"] = f"{m.low:.6g} - {m.high:.6g}"  # shown in the chart's tooltip
        entry["extra"] = f"{m.label}; median of {m.repeats} run(s)"
        out.append(entry)
    return out


@register("github-benchmark")
class GithubBenchmark:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        found = entries(report)
        if out is None or not found:
            return []
        path = out / FILE
        write_atomic(path, json.dumps(found, indent=2) + "\n")
        return [path]
