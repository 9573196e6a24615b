"""What the commands that run clients share at their end: a run folder's files, the terminal table, the exit status
and the header of a command's own results document (a module of its own, so that no command imports another)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..execution.testbed import Testbed
from ..model import Results, Row
from ..report import Report
from ..report.export import FILES, export
from ..report.export.plots import standard_figures
from ..report.parts import reading_report, run_part
from ..report.table import run_table


def write_run(
    rows: Sequence[Row],
    results: Results,
    out_dir: Path,
    subtitle: str,
    timeline_rows: Sequence[Row] | None = None,
    *,
    html: bool = True,
    exports: Sequence[str] = (),
) -> None:
    """table.md, table.csv, results.json, the plots and reading.md (the generated reading, under the line naming
    the commit and machine) of one set of rows into out_dir, and (unless a command that writes more writes its own
    at its end, the GIL report) report.html of the run."""
    figures = standard_figures(rows, subtitle, timeline_rows) if rows else []
    report = Report("table", [run_table(rows)], results=results, figures=figures)
    report.parts = [run_part(out_dir, out_dir.name, results)]
    export(report, out_dir, (*FILES, "plots", *exports, *(("html",) if html else ())))
    export(reading_report(results), out_dir, ("markdown",))


def show(rows: Sequence[Row], title: str) -> None:
    """The terminal table of these rows."""
    export(Report("table", [run_table(rows, title, terminal=True)]), None, ("terminal",))


def exit_status(testbed: Testbed, rows: Sequence[Row], explicit: Sequence[str] = ()) -> int:
    """130/143 when interrupted; 1 when one of our rows failed or any row has no good repeat, or when a row named
    with -c (`explicit`) is not installed here. A row that is not installed is otherwise shown, not failed."""
    if testbed.exit_code is not None:
        return testbed.exit_code
    failed = [r.client.name for r in rows if r.counts_against_run]
    missing = sorted({r.client.name for r in rows if r.unavailable and r.client.name in explicit})
    if failed:
        testbed.console.print(f"[red]{len(failed)} row(s) failed:[/] {', '.join(failed)}")
    if missing:
        testbed.console.print(f"[red]not installed here, though named with -c:[/] {', '.join(missing)}")
    return 1 if failed or missing else 0


def header(testbed: Testbed, schema: str, *, version: str = "version") -> dict[str, Any]:
    """The fields every command's own results document (cost.json, profile.json, soak.json) opens with: its schema,
    the runner's version (under the key `version`), when it was made, the command line and the machine."""
    return {
        "schema": schema,
        version: __version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": testbed.argv,
        "environment": testbed.environment,
    }
