"""`clientbench compare A B`: per-row ratios of two runs, flagged when beyond the measured noise (the decision
and its rules: analysis/compare.py, shared with the HTML report's compare view)."""

from __future__ import annotations

from pathlib import Path

from ..analysis.compare import MIN_REPEATS, compare_rows, summary
from ..model import Results
from ..report import Column, Report, Table, Text
from ..report.export import export

__all__ = ["MIN_REPEATS", "compare"]

STYLES = {+1: "red", -1: "green", 0: None}


def compare(a_path: Path, b_path: Path) -> int:
    a, b = Results.load(a_path), Results.load(b_path)
    columns = [
        Column("Client", False),
        Column("Bench A(ms)"),
        Column("Bench B(ms)"),
        Column("B/A"),
        Column("Mean B/A"),
        Column("P99 B/A"),
        Column("verdict", False),
    ]
    table = Table(columns, [], title=f"B / A   (A = {a_path}, B = {b_path})")
    rows = compare_rows(a, b)
    for r in rows:
        if r.a is None or r.b is None:
            table.rows.append([r.name, "-", "-", "-", "-", "-", r.verdict.text])
            table.styles.append(None)
            continue
        ratios = ["-" if (v := r.ratio(key)) is None else f"{v:.2f}" for key in ("bench_ms", "mean_ms", "p99_ms")]
        table.rows.append([r.name, f"{r.a.median.bench_ms:.2f}", f"{r.b.median.bench_ms:.2f}", *ratios, r.verdict.text])
        table.styles.append(STYLES[r.verdict.change])
    export(Report("compare", [table, Text(summary(rows))]), None, ("terminal",))
    return 0
