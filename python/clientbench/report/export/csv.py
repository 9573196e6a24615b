"""`<name>.csv`: the report's tables as CSV (one file per table: `<name>.csv`, `<name>.2.csv`, ...)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ...files import write_atomic
from ..base import Report, Table
from .registry import register


def render(table: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c.label for c in table.columns])
    writer.writerows(table.rows)
    return buf.getvalue()


@register("csv")
class Csv:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        if out is None:
            return []
        written = []
        for i, table in enumerate(report.tables):
            path = out / (f"{report.name}.csv" if i == 0 else f"{report.name}.{i + 1}.csv")
            write_atomic(path, render(table))
            written.append(path)
        return written
