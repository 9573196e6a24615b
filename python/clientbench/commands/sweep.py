"""`clientbench sweep DIMENSION`: the same clients at every point of one dimension.

Writes `points/<dimension>-<value>/` (raw/, table.md, table.csv, results.json) per point, `sweep.md` with
Bench and throughput per client and point, and `plots/sweep-<dimension>.png`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import SetupError
from ..model import Row
from ..report import FILES, Column, Figure, Heading, Report, Table, export
from ..report.table import run_table
from ..run.clients import ClientSpec
from ..run.testbed import Options, Testbed, link_latest
from ..workload import Workload
from .run import exit_status, show

DEFAULTS = {
    "workers": "1,2,4,8,10,16,32",
    "payload": "13,1024,10240,102400,1048576",
    "delay": "0,1,5,20",
    "connection": "keep-alive,new",
}
AXIS = {
    "workers": "workers (W)",
    "payload": "response body size (bytes)",
    "delay": "server delay per request (ms)",
    "connection": "connection mode",
}


def points(dimension: str, values: str | None) -> list[Any]:
    items = [v.strip() for v in (values or DEFAULTS[dimension]).split(",") if v.strip()]
    if not items:
        raise SetupError("--values is empty")
    if dimension == "connection":
        bad = [v for v in items if v not in ("keep-alive", "new")]
        if bad:
            raise SetupError(f"connection values are keep-alive and new, got {', '.join(bad)}")
        return items
    try:
        nums = [int(v) for v in items]
    except ValueError:
        raise SetupError(f"--values for {dimension} must be whole numbers, got {values!r}") from None
    low = 1 if dimension == "workers" else 0
    if any(n < low for n in nums):
        raise SetupError(f"--values for {dimension} must be >= {low}")
    return nums


def workload_at(base: Workload, dimension: str, value: Any) -> Workload:
    if dimension == "workers":
        return base.replace(workers=value)
    if dimension == "payload":
        return base.replace(path=f"/bytes/{value}")
    if dimension == "delay":
        return base.replace(path=f"/delay/{value}")
    return base.replace(connection=value)


def summary(dimension: str, results: Sequence[tuple[Any, Sequence[Row]]]) -> Report:
    """sweep.md: Bench and throughput per client (rows) and point (columns)."""
    labels: list[str] = []
    for _, rows in results:
        labels += [r.client.label for r in rows if r.client.label not in labels]
    columns = [Column("Client", False), *(Column(f"{dimension}={v}") for v, _ in results)]

    def table(metric: str, fmt: str) -> Table:
        body = []
        for label in labels:
            cells = [label]
            for _, rows in results:
                row = next((r for r in rows if r.client.label == label), None)
                agg = row.aggregate if row else None
                cells.append(
                    "failed"
                    if row is not None and row.failed
                    else "-"
                    if agg is None
                    else format(getattr(agg.median, metric), fmt)
                )
            body.append(cells)
        return Table(columns, body)

    return Report(
        "sweep",
        [
            Heading(f"Sweep over {dimension}"),
            Heading("Bench (ms, median over repeats)", 2),
            table("bench_ms", ".2f"),
            Heading("Throughput (requests/s, median over repeats)", 2),
            table("throughput_rps", ".0f"),
        ],
    )


def write_point(testbed: Testbed, wl: Workload, dimension: str, value: Any, rows: Sequence[Row]) -> None:
    results = testbed.results(wl, rows, sweep={"dimension": dimension, "value": value})
    export(Report("table", [run_table(rows)], results=results), testbed.out / "points" / f"{dimension}-{value}", FILES)


def sweep(
    dimension: str,
    values: str | None,
    specs: Sequence[ClientSpec],
    base: Workload,
    options: Options,
    argv: Sequence[str],
) -> int:
    points_ = points(dimension, values)
    testbed = Testbed(options, argv, kind=f"sweep-{dimension}")
    results: list[tuple[Any, list[Row]]] = []
    with testbed:
        for value in points_:
            wl = workload_at(base, dimension, value)
            testbed.console.print(
                f"[bold]{dimension} = {value}[/]: {wl.workers} workers x {wl.requests} "
                f"requests, GET {wl.path}, {wl.connection}"
            )
            point_dir = testbed.out / "points" / f"{dimension}-{value}"
            point_dir.mkdir(parents=True)
            rows: list[Row] = []
            results.append((value, rows))
            testbed.run_rows(specs, wl, point_dir, rows)
            write_point(testbed, wl, dimension, value, rows)
    out = testbed.out
    for value, rows in results:  # an interrupted point still gets its tables
        if not (out / "points" / f"{dimension}-{value}" / "results.json").exists():
            write_point(testbed, workload_at(base, dimension, value), dimension, value, rows)
    numeric = dimension != "connection"
    report = summary(dimension, results)
    report.figures.append(
        Figure(
            "sweep",
            f"sweep-{dimension}.png",
            f"Bench and throughput vs {AXIS[dimension]} (median of {base.repeat} run(s))",
            points=results,
            axis=AXIS[dimension],
            log_x=numeric and dimension in ("workers", "payload"),
        )
    )
    export(report, out, ("markdown", "plots"))
    link_latest(out)
    for value, rows in results:
        show(rows, f"{dimension} = {value}")
    testbed.console.print(f"results: {out}")
    return exit_status(testbed, [r for _, rows in results for r in rows])
