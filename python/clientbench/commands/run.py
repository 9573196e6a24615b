"""`clientbench run`: every selected client with the same workload; the table, results/<ts>/."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..model import Results, Row
from ..report import FILES, Report, export
from ..report.plots import standard_figures
from ..report.table import run_table
from ..run.clients import ClientSpec
from ..run.testbed import Options, Testbed, link_latest
from ..workload import Workload


def write_run(
    rows: Sequence[Row],
    results: Results,
    out_dir: Path,
    subtitle: str,
    timeline_rows: Sequence[Row] | None = None,
) -> None:
    """table.md, table.csv, results.json and the plots of one set of rows into out_dir."""
    figures = standard_figures(rows, subtitle, timeline_rows) if rows else []
    export(Report("table", [run_table(rows)], results=results, figures=figures), out_dir, (*FILES, "plots"))


def show(rows: Sequence[Row], title: str) -> None:
    export(Report("table", [run_table(rows, title, terminal=True)]), None, ("terminal",))


def exit_status(testbed: Testbed, rows: Sequence[Row]) -> int:
    """130/143 when interrupted; 1 when one of our rows failed or any row has no good repeat."""
    if testbed.exit_code is not None:
        return testbed.exit_code
    failed = [r.client.name for r in rows if r.counts_against_run]
    if failed:
        testbed.console.print(f"[red]{len(failed)} row(s) failed:[/] {', '.join(failed)}")
        return 1
    return 0


def run(specs: Sequence[ClientSpec], workload: Workload, options: Options, argv: Sequence[str]) -> int:
    rows: list[Row] = []
    testbed = Testbed(options, argv)
    with testbed:
        testbed.console.print(
            f"[bold]clientbench[/]: {len(specs)} clients x {workload.repeat} repeats -> "
            f"{testbed.base_url}{workload.path}"
        )
        testbed.run_rows(specs, workload, testbed.out, rows)
    out = testbed.out
    write_run(
        rows, testbed.results(workload, rows), out, f"W={workload.workers}, N={workload.requests}, GET {workload.path}"
    )
    link_latest(out)
    if rows:
        show(rows, testbed.describe(workload))
    testbed.console.print(f"results: {out}")
    return exit_status(testbed, rows)
