"""`clientbench sweep DIMENSION`: the same clients at every point of one dimension (dimensions.py).

Writes `points/<dimension>-<value>/` (raw/, table.md, table.csv, results.json) per point, `sweep.md` with
Bench and throughput per client and point, and `plots/sweep-<dimension>.png` (report/sweep.py). A dimension
of open loops (`sweep rate`) climbs a ladder of rates instead (execution/ladder.py): its sweep.md has each
client's highest sustained rate, the corrected P99 and the achieved rate per rate, and a plot of latency vs
offered load per client (report/rates.py)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import arguments
from ..dimensions import DIMENSIONS, Dimension, help_text
from ..execution.limits import MAX_THREADS
from ..options import Options, check_together
from ..options.rows import select
from ..options.workload import sweep_points, sweep_target
from ..workload import SWEEP_RATE, Workload, number

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from ..registry.spec import ClientSpec
    from . import Command


def add_parser(sub: Subparsers, command: Command) -> None:
    p = sub.add_parser(
        command.name,
        help=command.help,
        description="Run the selected clients at every point of one dimension; writes a "
        "table per point, sweep.md and a plot of Bench and throughput vs the "
        "dimension (rate: of latency vs offered load per client, and the highest rate each sustains).",
    )
    p.add_argument(
        "dimension",
        choices=list(DIMENSIONS),
        help=f"{help_text()}. A rate point is --duration {SWEEP_RATE.duration_s:g} s, --repeat {SWEEP_RATE.repeat} "
        "unless given",
    )
    p.add_argument(
        "--values",
        "--points",
        metavar="LIST",
        help="comma-separated points (default per dimension, e.g. workers 1,2,4,8,10,16,32; workers go to 1024 for "
        f"async rows, {MAX_THREADS} for sync ones, a thread per worker)",
    )
    arguments.add_rate_sweep_options(p, "rate")
    arguments.add_workload_options(p)
    arguments.add_selection_options(p)
    arguments.add_session_options(p)


@dataclass(frozen=True)
class SweepOptions:
    dimension: Dimension
    points: tuple[Any, ...]
    specs: tuple[ClientSpec, ...]
    workload: Workload  # the base workload of every point
    options: Options
    argv: tuple[str, ...]
    every_rate: bool  # a ladder climbs every rate given (--rates or --values), else a client leaves once saturated
    slo_ms: float


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> SweepOptions:
    dim = DIMENSIONS[args.dimension]
    base, options = arguments.workload(args, own_rates=dim.ladder), arguments.testbed(args)
    points = sweep_points(dim, args.values, args.rates, base)
    for value in points:
        check_together(dim.workload(base, value), options)
    specs = select(arguments.rows(args))
    sweep_target(dim, options.target)
    given = args.rates is not None or args.values is not None
    return SweepOptions(dim, tuple(points), tuple(specs), base, options, tuple(argv), given, args.slo_ms)


def run(o: SweepOptions) -> int:
    return sweep(
        o.dimension, o.points, o.specs, o.workload, o.options, o.argv, every_rate=o.every_rate, slo_ms=o.slo_ms
    )


def sweep(
    dim: Dimension,
    points: Sequence[Any],
    specs: Sequence[ClientSpec],
    base: Workload,
    options: Options,
    argv: Sequence[str],
    *,
    every_rate: bool = True,
    slo_ms: float = 10.0,
) -> int:
    """Every point of `dim` in turn. A ladder dimension (rate) climbs `points` (every one with `every_rate`, else
    a client leaves after its first saturated rate) and reads the highest rate each client sustains."""
    from ..analysis.rates import summary_lines
    from ..execution.ladder import climb
    from ..execution.points import PointLog
    from ..execution.testbed import Endpoint, Testbed, link_latest
    from ..model import Results, Row, SweepPoint
    from ..report import Report
    from ..report import rates as rate_report
    from ..report.export import FILES, export
    from ..report.parts import sweep_part
    from ..report.sweep import index, summary
    from ..report.table import run_table
    from .output import exit_status, show

    # a --target must answer in every HTTP version the points ask for (sweep protocol, scenario)
    testbed = Testbed(options, argv, kind=f"sweep-{dim.name}", http=[dim.workload(base, v).http for v in points])
    endpoints: dict[Any, Endpoint] = {}
    written: dict[Any, Results] = {}  # each point's results document, as written

    def write(value: Any, rows: list[Row]) -> None:
        endpoint = endpoints.get(value, testbed.endpoint)
        network = dim.network(options.network, value) if dim.network else options.network
        results = testbed.results(dim.workload(base, value), rows, network, endpoint, sweep=SweepPoint(dim.name, value))
        written[value] = results
        export(Report("table", [run_table(rows)], results=results), testbed.out / "points" / dim.folder(value), FILES)

    log: PointLog[Any] = PointLog(write)
    try:
        with testbed:
            if dim.ladder:
                climb(testbed, specs, base, points, testbed.out, log, every_rate=every_rate)
            else:
                for value in points:
                    wl = dim.workload(base, value)
                    testbed.console.print(
                        f"[bold]{dim.name} = {value}[/]: {wl.workers} workers x {wl.requests} "
                        f"requests, {wl.request()}, {wl.connection}"
                    )
                    (testbed.out / "points" / dim.folder(value)).mkdir(parents=True)
                    rows = log.start(value)
                    endpoints[value] = dim.endpoint(testbed, value) if dim.endpoint else testbed.endpoint
                    testbed.run_rows(specs, wl, testbed.out / "points" / dim.folder(value), rows, endpoints[value])
                    log.done(value)
    finally:
        log.finish()
    out = testbed.out
    if dim.ladder:
        report = rate_report.summary(log.measured, slo_ms, base, every_rate=every_rate)
    else:
        report = summary(dim, log.measured, base.repeat)
    values = [v for v, _ in log.measured]
    report.document = index(dim.name, values, base.repeat, slo_ms if dim.ladder else None, every_rate)
    report.parts = [sweep_part(out, out.name, dim.name, [(v, written[v]) for v in values], report)]
    export(report, out, ("json", "markdown", "plots", "html"))
    link_latest(out)
    for value, rows in log.measured:
        show(rows, f"{number(value)} requests/s offered" if dim.ladder else f"{dim.name} = {value}")
    if dim.ladder:
        for s in summary_lines(log.measured, slo_ms):
            testbed.console.print(s, markup=False)
    testbed.console.print(f"results: {out}")
    return exit_status(testbed, [r for _, rows in log.measured for r in rows], [s.name for s in specs if s.explicit])
