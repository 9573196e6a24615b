"""What `clientbench compare` shows: two runs row by row (Bench A and B with their
ranges over the repeats, the ratios of the medians, the verdict of
analysis/compare.py's rule), two cost folders row by row (the counts per request and their ratios), two cold-start
folders (their medians and ratios), and the gate's verdicts (analysis/gate.py): which row and figure failed, and by
how much."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.cold import median as cold_median
from ..analysis.compare import RowComparison, summary
from ..analysis.gate import COUNTED, Check, cost_counts
from ..metrics import COLD_ANSWER, COLD_FIRST, COLD_IMPORT, COLD_RSS
from ..stats import Aggregate
from .base import Column, Comparison, Figure, Table

STYLES = {+1: "red", -1: "green", 0: None}


def _range(agg: Aggregate) -> str:
    """Bench's spread over the repeats, the figure the verdict compares."""
    return f"{agg.bench_min_ms:.2f}-{agg.bench_max_ms:.2f}" + (f" ({agg.repeats} runs)" if agg.repeats > 1 else "")


def runs_table(rows: Sequence[RowComparison], title: str, *, labels: bool = False) -> Table:
    """Per row: Bench in A and B with their ranges over the repeats, B / A of the medians, the verdict; the row by
    its name, or (`labels`, the HTML page's) by its label and then its name."""
    columns = [Column("Client", False), *([Column("name", False)] if labels else [])]
    columns += [
        Column("Bench A(ms)"),
        Column("A min-max"),
        Column("Bench B(ms)"),
        Column("B min-max"),
        Column("B/A"),
        Column("Mean B/A"),
        Column("P99 B/A"),
        Column("verdict", False),
    ]
    table = Table(columns, [], title=title)
    for r in rows:
        named = [r.label, r.name] if labels else [r.name]
        if r.a is None or r.b is None:
            table.rows.append([*named, "-", "-", "-", "-", "-", "-", "-", r.verdict.text])
            table.styles.append(None)
            continue
        ratios = ["-" if (v := r.ratio(key)) is None else f"{v:.2f}" for key in ("bench_ms", "mean_ms", "p99_ms")]
        a, b = r.a, r.b
        figures = [f"{a.median.bench_ms:.2f}", _range(a), f"{b.median.bench_ms:.2f}", _range(b)]
        table.rows.append([*named, *figures, *ratios, r.verdict.text])
        table.styles.append(STYLES[r.verdict.change])
    return table


def comparison(a: str, b: str, rows: Sequence[RowComparison]) -> Comparison:
    """Two runs compared, as the HTML page shows them: the table above with the rows' labels, its summary
    (analysis/compare.py), and the chart of Bench in A and in B."""
    table = runs_table(rows, f"B / A   (A = {a}, B = {b})", labels=True)
    return Comparison(a, b, table, summary(rows), Figure("compare", "bench", "", compared=rows))


def _count(value: Any) -> str:
    return "-" if value is None else f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def costs_table(a: Mapping[str, Any], b: Mapping[str, Any], title: str, scope: str = "counted") -> Table:
    """Per row of either cost.json: each count per request in A and B (in `scope`: as counted, or the whole
    process's), and B / A."""
    columns = [Column("Client", False)]
    for figure in COUNTED:
        columns += [Column(f"{figure} A"), Column(f"{figure} B"), Column("B/A")]
    table = Table(columns, [], title=title)
    rows_a = {r["name"]: r for r in a["rows"]}
    rows_b = {r["name"]: r for r in b["rows"]}
    for name in [*rows_a, *(n for n in rows_b if n not in rows_a)]:
        ra, rb = rows_a.get(name) or {}, rows_b.get(name) or {}
        cells = [name]
        for metric in COUNTED.values():
            va, vb = cost_counts(ra, scope).get(metric.field), cost_counts(rb, scope).get(metric.field)
            cells += [_count(va), _count(vb), f"{vb / va:.3f}" if va and vb is not None else "-"]
        table.rows.append(cells)
        table.styles.append(None)
    return table


def colds_table(a: Mapping[str, Any], b: Mapping[str, Any], title: str) -> Table:
    """Per row of either cold.json: the medians of the import, the first request, the answer and the peak RSS in A
    and B, and B / A (every figure is in the gate's table when --fail-on names it)."""
    shown = (COLD_IMPORT, COLD_FIRST, COLD_ANSWER, COLD_RSS)
    columns = [Column("Client", False)]
    for figure in shown:
        columns += [Column(f"{figure.label} A"), Column(f"{figure.label} B"), Column("B/A")]
    table = Table(columns, [], title=title)
    rows_a = {r["name"]: r for r in a["rows"]}
    rows_b = {r["name"]: r for r in b["rows"]}
    for name in [*rows_a, *(n for n in rows_b if n not in rows_a)]:
        ra, rb = rows_a.get(name) or {}, rows_b.get(name) or {}
        cells = [name]
        for figure in shown:
            va, vb = cold_median(ra, figure.field), cold_median(rb, figure.field)
            cells += [_count(va), _count(vb), f"{vb / va:.2f}" if va and vb is not None else "-"]
        table.rows.append(cells)
        table.styles.append(None)
    return table


def gate_table(checks: Sequence[Check]) -> Table:
    """The gate's verdict per row and figure; the failures in red."""
    columns = [
        Column("Client", False),
        Column("figure", False),
        Column("A"),
        Column("B"),
        Column("change"),
        Column("limit"),
        Column("verdict", False),
    ]
    table = Table(columns, [], title="the gate (--fail-on)")
    for c in checks:
        change = "-" if c.change_pct is None else f"{c.change_pct:+.1f}%"
        table.rows.append(
            [c.row, f"{c.figure} ({c.unit})", _count(c.a), _count(c.b), change, f"{c.threshold:g}%",
             ("FAIL: " if c.failed else "") + c.verdict]
        )  # fmt: skip
        table.styles.append("red" if c.failed else None)
    return table


def gate_summary(checks: Sequence[Check]) -> list[str]:
    failed = [c for c in checks if c.failed]
    if not failed:
        return [f"the gate passed: {len(checks)} check(s), none worse beyond its limit and the noise"]
    lines = [f"the gate failed: {len(failed)} of {len(checks)} check(s)"]
    for c in failed:
        change = "" if c.change_pct is None else f" by {c.change_pct:+.1f}%"
        lines.append(f"- {c.row}: {c.figure} {c.verdict}{change} (limit {c.threshold:g}%)")
    return lines
