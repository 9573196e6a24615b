"""`clientbench sweep DIMENSION`: the same clients at every point of one dimension.

Writes `points/<dimension>-<value>/` (raw/, table.md, table.csv, results.json) per point, `sweep.md` with
Bench and throughput per client and point, and `plots/sweep-<dimension>.png`."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Sequence

from .cli import workload_from
from .clients import select
from .paths import SetupError
from .plots import sweep_curves
from .runner import Row, Workload, write_atomic
from .session import Session, link_latest, print_table, write_reports

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
        return dataclasses.replace(base, workers=value)
    if dimension == "payload":
        return dataclasses.replace(base, path=f"/bytes/{value}")
    if dimension == "delay":
        return dataclasses.replace(base, path=f"/delay/{value}")
    return dataclasses.replace(base, connection=value)


def _summary(dimension: str, results: Sequence[tuple[Any, Sequence[Row]]]) -> str:
    labels: list[str] = []
    for _, rows in results:
        labels += [r.spec.label for r in rows if r.spec.label not in labels]
    head = [f"{dimension}={v}" for v, _ in results]

    def table(metric: str, fmt: str) -> list[str]:
        lines = ["| Client | " + " | ".join(head) + " |", "| :--- |" + " ---: |" * len(head)]
        for label in labels:
            cells = []
            for _, rows in results:
                row = next((r for r in rows if r.spec.label == label), None)
                agg = row.aggregate if row else None
                cells.append("failed" if row is not None and row.failed else
                             "-" if agg is None else format(getattr(agg.median, metric), fmt))
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        return lines

    return "\n".join([f"# Sweep over {dimension}", "", "## Bench (ms, median over repeats)", "",
                      *table("bench_ms", ".2f"), "", "## Throughput (requests/s, median over repeats)", "",
                      *table("throughput_rps", ".0f"), ""])


def sweep(args: argparse.Namespace, argv: Sequence[str]) -> int:
    specs = select(args.clients, everything=args.all)
    base, repeat = workload_from(args)
    values = points(args.dimension, args.values)
    session = Session(args, argv, kind=f"sweep-{args.dimension}")
    results: list[tuple[Any, list[Row]]] = []
    with session:
        for value in values:
            wl = workload_at(base, args.dimension, value)
            session.console.print(f"[bold]{args.dimension} = {value}[/]: {wl.workers} workers x {wl.requests} "
                                  f"requests, GET {wl.path}, {wl.connection}")
            point_dir = session.out / "points" / f"{args.dimension}-{value}"
            point_dir.mkdir(parents=True)
            rows: list[Row] = []
            results.append((value, rows))
            session.run_rows(specs, wl, repeat, point_dir, rows)
            write_reports(rows, session.meta(wl, repeat, sweep={"dimension": args.dimension, "value": value}),
                          point_dir)
    out = session.out
    for value, rows in results:  # an interrupted point still gets its tables
        point_dir = out / "points" / f"{args.dimension}-{value}"
        if not (point_dir / "results.json").exists():
            write_reports(rows, session.meta(workload_at(base, args.dimension, value), repeat), point_dir)
    write_atomic(out / "sweep.md", _summary(args.dimension, results))
    (out / "plots").mkdir(exist_ok=True)
    numeric = args.dimension != "connection"
    sweep_curves(results, AXIS[args.dimension], out / "plots" / f"sweep-{args.dimension}.png",
                 f"Bench and throughput vs {AXIS[args.dimension]} (median of {repeat} run(s))",
                 log_x=numeric and args.dimension in ("workers", "payload"))
    link_latest(out)
    for value, rows in results:
        print_table(rows, f"{args.dimension} = {value}")
    session.console.print(f"results: {out}")
    if session.exit_code is not None:
        return session.exit_code
    return 1 if any(r.failed for _, rows in results for r in rows) else 0
