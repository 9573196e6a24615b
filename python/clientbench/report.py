"""Reports of one run: the terminal table (rich), `table.md`, and `results.json`.

All figures come from `stats.RowStats`; this module only formats them.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from rich.table import Table

from .runner import RowResult

COLUMNS: tuple[str, ...] = (
    "Language", "Library", "Mean(ms)", "P99(ms)", "P999(ms)", "Max(ms)", "LMean(ms)", "Bench(ms)",
    "async/sync", "GIL", "Errors", "Bench/LMean", "Status",
)
NUMERIC = {"Mean(ms)", "P99(ms)", "P999(ms)", "Max(ms)", "LMean(ms)", "Bench(ms)", "Errors", "Bench/LMean"}


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def cells(row: RowResult) -> list[str]:
    s, spec = row.stats, row.spec
    status = "ok" if not row.failed else f"FAILED: {row.reason}" if row.reason else "FAILED"
    gil = spec.gil or "-"
    if s is None:
        return [spec.language, spec.library, *["-"] * 6, spec.mode, gil, "-", "-", status]
    return [
        spec.language, spec.library,
        _ms(s.mean_ms), _ms(s.p99_ms), _ms(s.p999_ms), _ms(s.max_ms), _ms(s.lmean_ms), _ms(s.bench_ms),
        spec.mode, gil, str(s.errors),
        "-" if s.bench_over_lmean is None else f"{s.bench_over_lmean:.2f}",
        status,
    ]


def markdown_table(rows: Sequence[RowResult]) -> str:
    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    align = ["---:" if c in NUMERIC else ":---" for c in COLUMNS]
    return "\n".join([line(COLUMNS), line(align), *(line(cells(r)) for r in rows)]) + "\n"


def rich_table(rows: Sequence[RowResult], title: str | None = None) -> Table:
    table = Table(title=title, header_style="bold")
    for c in COLUMNS:
        table.add_column(c, justify="right" if c in NUMERIC else "left",
                         overflow="fold", max_width=60 if c == "Status" else None)
    for r in rows:
        table.add_row(*cells(r), style="red" if r.failed else None)
    return table


def results_json(rows: Sequence[RowResult], meta: dict[str, Any]) -> str:
    doc = {
        "schema": "clientbench.results/1",
        **meta,
        "rows": [r.to_json(f"raw/{r.spec.name}.json" if r.raw is not None else None) for r in rows],
    }
    return json.dumps(doc, indent=2) + "\n"
