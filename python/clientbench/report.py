"""Reports of one run: the terminal table (rich) and the exporters `table.md`, `table.csv`, `results.json`.

All figures come from `stats` (via `runner.Row.aggregate`); this module only formats them. With repeats,
every figure is the median over the repeats and `Spread` is Bench's min-max range.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from rich.table import Table

from .runner import Row


@dataclass(frozen=True)
class Column:
    label: str
    cell: Callable[[Row, "Context"], str]
    numeric: bool = True
    terminal: bool = True  # shown in the terminal table (all columns go to the files)


@dataclass(frozen=True)
class Context:
    """Figures that relate rows to each other (the floor row's mean, for `xfloor`)."""

    floor_mean_ms: float | None = None


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _median(name: str, digits: int = 2) -> Callable[[Row, Context], str]:
    def cell(row: Row, ctx: Context) -> str:
        agg = row.aggregate
        return "-" if agg is None else _fmt(getattr(agg.median, name), digits)
    return cell


def _errors(row: Row, ctx: Context) -> str:
    agg = row.aggregate
    return "-" if agg is None else str(agg.median.errors)


def _spread(row: Row, ctx: Context) -> str:
    agg = row.aggregate
    if agg is None:
        return "-"
    if agg.repeats == 1:
        return "(1 run)"
    return f"{agg.bench_min_ms:.2f}-{agg.bench_max_ms:.2f}"


def _xfloor(row: Row, ctx: Context) -> str:
    agg = row.aggregate
    if agg is None or agg.median.mean_ms is None or not ctx.floor_mean_ms:
        return "-"
    return f"{agg.median.mean_ms / ctx.floor_mean_ms:.2f}"


def _status(row: Row, ctx: Context) -> str:
    if not row.runs:
        return "not run"
    if row.skipped:
        return row.reason or "skipped"
    if not row.failed:
        return "ok"
    return f"FAILED: {row.reason}" if row.reason else "FAILED"


COLUMNS: tuple[Column, ...] = (
    Column("Language", lambda r, c: r.spec.language, numeric=False),
    Column("Library", lambda r, c: r.spec.library + (f" (W={r.spec.fixed_workers})" if r.spec.fixed_workers else ""),
           numeric=False),
    Column("Mean(ms)", _median("mean_ms")),
    Column("P99(ms)", _median("p99_ms")),
    Column("P999(ms)", _median("p999_ms")),
    Column("Max(ms)", _median("max_ms")),
    Column("LMean(ms)", _median("lmean_ms")),
    Column("Bench(ms)", _median("bench_ms")),
    Column("Spread(ms)", _spread),
    Column("async/sync", lambda r, c: r.spec.mode, numeric=False),
    Column("GIL", lambda r, c: r.spec.gil or "-", numeric=False),
    Column("Errors", _errors),
    Column("Bench/LMean", _median("bench_over_lmean")),
    Column("P50(ms)", _median("p50_ms"), terminal=False),
    Column("req/s", _median("throughput_rps", 0)),
    Column("CPU(us/req)", _median("cpu_us_per_req", 1)),
    Column("RSS(MiB)", _median("peak_rss_mib", 1), terminal=False),
    Column("xfloor", _xfloor),
    Column("Status", _status, numeric=False),
)


def context(rows: Sequence[Row]) -> Context:
    floors = [r.aggregate.median.mean_ms for r in rows
              if r.spec.floor and not r.failed and r.aggregate and r.aggregate.median.mean_ms]
    return Context(floor_mean_ms=min(floors) if floors else None)


def _columns(rows: Sequence[Row], terminal: bool) -> list[Column]:
    ctx = context(rows)
    cols = [c for c in COLUMNS if c.terminal or not terminal]
    if ctx.floor_mean_ms is None:
        cols = [c for c in cols if c.label != "xfloor"]
    return cols


def table_cells(rows: Sequence[Row], terminal: bool = False) -> tuple[list[str], list[list[str]]]:
    ctx = context(rows)
    cols = _columns(rows, terminal)
    return [c.label for c in cols], [[c.cell(r, ctx) for c in cols] for r in rows]


def markdown_table(rows: Sequence[Row]) -> str:
    header, body = table_cells(rows)
    numeric = {c.label for c in COLUMNS if c.numeric}

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    align = ["---:" if h in numeric else ":---" for h in header]
    return "\n".join([line(header), line(align), *(line(r) for r in body)]) + "\n"


def csv_table(rows: Sequence[Row]) -> str:
    header, body = table_cells(rows)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(body)
    return buf.getvalue()


def rich_table(rows: Sequence[Row], title: str | None = None) -> Table:
    header, body = table_cells(rows, terminal=True)
    numeric = {c.label for c in COLUMNS if c.numeric}
    table = Table(title=title, header_style="bold")
    for h in header:
        table.add_column(h, justify="right" if h in numeric else "left", overflow="fold",
                         max_width=48 if h == "Status" else None)
    for row, cells in zip(rows, body):
        table.add_row(*cells, style="red" if row.failed else None)
    return table


def results_json(rows: Sequence[Row], meta: dict[str, Any]) -> str:
    doc = {"schema": "clientbench.results/1", **meta, "rows": [r.to_json() for r in rows]}
    return json.dumps(doc, indent=2) + "\n"


#: file name -> exporter; every run folder gets each of these
EXPORTERS: dict[str, Callable[[Sequence[Row], dict[str, Any]], str]] = {
    "results.json": results_json,
    "table.md": lambda rows, meta: markdown_table(rows),
    "table.csv": lambda rows, meta: csv_table(rows),
}
