"""What `clientbench history` shows: history.csv (one line per run and row: when, which commit, every median figure)
and history.md (Bench, P99 and CPU per request of every row across the runs), with the chart of any figure against
the runs; the runs come read and ordered by folder.py's `history_runs`."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from ..model import Results
from ..stats import RowStats
from .base import Column, Figure, Heading, Report, Table, Text

#: the figures history.md tabulates (any figure is in history.csv and the HTML charts)
SHOWN = (("bench_ms", "Bench (ms)", ".2f"), ("p99_ms", "P99 (ms)", ".2f"), ("cpu_us_per_req", "CPU (us/req)", ".1f"))


def history_csv(runs: Sequence[tuple[str, Path, Results]]) -> str:
    """One line per run and row: when, which commit, which row, its status, and every median figure."""
    names = [f.name for f in fields(RowStats)]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["created", "run", "commit", "workload", "row", "label", "status", "repeats", *names])
    for _, folder, results in runs:
        commit = (results.environment.get("git") or {}).get("commit") or ""
        for row in results.rows:
            agg = row.aggregate
            figures = [("" if agg is None else _cell(getattr(agg.median, n))) for n in names]
            writer.writerow(
                [results.created, str(folder), commit, results.workload.describe(), row.client.name, row.client.label,
                 row.status, agg.repeats if agg else 0, *figures]
            )  # fmt: skip
    return buf.getvalue()


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def document(runs: Sequence[tuple[str, Path, Results]]) -> Report:
    """history.md: per figure, a table of every row (lines) against the runs (columns), and the chart of it."""
    points = [(label, results.rows) for label, _, results in runs]
    labels: list[str] = []
    for _, rows in points:
        labels += [r.client.label for r in rows if r.client.label not in labels]
    blocks: list[Any] = [
        Heading("History"),
        Text([f"{len(runs)} run(s), from {runs[0][2].created} to {runs[-1][2].created}; every figure is the run's "
              "median over its repeats; history.csv has every figure of every row."]),
    ]  # fmt: skip
    for field, title, fmt in SHOWN:
        table = Table([Column("Client", False), *(Column(label) for label, _ in points)], [])
        for label in labels:
            cells = [label]
            for _, rows in points:
                row = next((r for r in rows if r.client.label == label), None)
                agg = row.aggregate if row is not None and not row.failed else None
                value = getattr(agg.median, field) if agg is not None else None
                cells.append("-" if value is None else format(value, fmt))
            table.rows.append(cells)
        blocks += [Heading(title, 2), table]
    figure = Figure("sweep", "history.png", "Bench and throughput across runs", points=points, axis="run")
    return Report("history", blocks, figures=[figure])
