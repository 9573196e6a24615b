"""Command line: `clientbench run | sweep | gil | soak | cost | cold | profile | compare | report | history | list |
serve | check-driver` (`run` is the default)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .arguments import (
    add_export_option,
    add_interpreter_options,
    add_rate_sweep_options,
    add_selection_options,
    add_session_options,
    add_workload_options,
    non_negative,
    non_negative_seconds,
)
from .dimensions import DIMENSIONS, help_text, sweep_points
from .environment.interpreters import Interpreter
from .environment.interpreters import resolve as resolve_interpreters
from .errors import SetupError
from .execution.limits import MAX_THREADS, raise_open_files
from .options import CostSettings, Options, Pinning, SoakSettings, check_together, command_workload
from .registry import external
from .registry.spec import ClientSpec, select, under
from .workload import (
    SWEEP_RATE,
    Workload,
)


class Parser(argparse.ArgumentParser):
    """argparse, but errors are one line: `clientbench: error: ...` (and the usage hint)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


def build_parser() -> Parser:
    p = Parser(
        prog="clientbench",
        description="Benchmark HTTP clients (C++ Beast, Rust reqwest, Python requests/aiohttp, our "
        "pybind11/PyO3 bindings and more Python clients from PyPI) against a local axum server with one "
        "workload: W workers x N sequential requests, each worker with its own client.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    run = sub.add_parser(
        "run",
        help="run the clients and print the table (the default command)",
        description="Start the server, run every selected client with the same workload, print "
        "the table and write results/<timestamp>/ (results.json, table.md, "
        "table.csv, raw/, logs/, plots/, server.log).",
    )
    add_workload_options(run)
    add_selection_options(run)
    add_session_options(run)
    add_export_option(run)

    sweep = sub.add_parser(
        "sweep",
        help=f"run the clients over one dimension ({', '.join(DIMENSIONS)})",
        description="Run the selected clients at every point of one dimension; writes a "
        "table per point, sweep.md and a plot of Bench and throughput vs the "
        "dimension (rate: of latency vs offered load per client, and the highest rate each sustains).",
    )
    sweep.add_argument(
        "dimension",
        choices=list(DIMENSIONS),
        help=f"{help_text()}. A rate point is --duration {SWEEP_RATE.duration_s:g} s, --repeat {SWEEP_RATE.repeat} "
        "unless given",
    )
    sweep.add_argument(
        "--values",
        "--points",
        metavar="LIST",
        help="comma-separated points (default per dimension, e.g. workers 1,2,4,8,10,16,32; workers go to 1024 for "
        f"async rows, {MAX_THREADS} for sync ones, a thread per worker)",
    )
    add_rate_sweep_options(sweep, "rate")
    add_workload_options(sweep)
    add_selection_options(sweep)
    add_session_options(sweep)

    gil = sub.add_parser(
        "gil",
        help="the GIL report: serial baseline, GIL held vs released, timeline",
        description="Run both bindings with the GIL held and released (and their libraries natively: "
        "C++ Beast, Rust reqwest sync) serially (1 worker x W*N requests), with W workers, and with W "
        "workers at --rtt through toxiproxy (and the reqwest rows over HTTP/3 at --rtt through the UDP relay); "
        "every Python row also under each interpreter `make "
        "freethreaded` built (or --interpreters). Writes gil.md with a reading generated from the "
        "figures, the tables and the request timeline plots.",
    )
    add_workload_options(gil)
    add_interpreter_options(gil.add_argument_group("interpreters"))
    add_rate_sweep_options(gil, "open-loop phase")
    gil.add_argument(
        "--open-loop-duration",
        dest="open_loop_duration_s",
        type=non_negative_seconds,
        default=2.0,
        metavar="SECONDS",
        help="the open-loop phase: each rate's schedule lasts this long (default 2; 0: skip the phase)",
    )
    gil.add_argument(
        "--shared-client",
        dest="shared_phase",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the shared-client phase: the bindings' held and released rows with one client for all W threads, "
        "over an HTTP/1.1 pool and (the reqwest binding) over HTTP/2 (default: on; --no-shared-client skips it)",
    )
    gil.add_argument(
        "--rtt",
        type=non_negative,
        default=1,
        metavar="MS",
        help="also run the W-worker phase at this round trip through toxiproxy, and the reqwest rows over "
        "HTTP/3 at it through the UDP relay (an HTTPS server is started for them without --tls; not over a plain "
        "http --target) (default 1 ms; 0: skip; not with --network, which puts the whole report on that network)",
    )
    add_session_options(gil)

    cmp_ = sub.add_parser(
        "compare",
        help="per-row ratios of two runs, flagging changes beyond the noise",
        description="Compare two results folders (or results.json files): Bench ratio B/A "
        "per row, flagged when the two runs' Bench ranges (min-max over the repeats) do not overlap; "
        "a verdict needs at least 4 repeats in each run. Two cost folders: each count per request in A and B; two "
        "cold folders: the cold-start medians in A and B. "
        "With --fail-on, a gate for CI: exit 1 when a row got worse beyond its threshold (docs/gate.md).",
    )
    cmp_.add_argument(
        "a",
        type=Path,
        help="baseline: a run folder (or its results.json), several comma-separated run folders of one workload "
        "(their repeats pooled), or a cost folder",
    )
    cmp_.add_argument("b", type=Path, help="new: as A")
    cmp_.add_argument(
        "--fail-on",
        metavar="SPEC",
        help="a gate: exit 1 when a row got worse than a threshold, e.g. bench=10%%,p99=20%% for runs (beyond the "
        "measured noise too; needs 4 repeats a side) or instructions=1%%,syscalls=0%% for cost folders; figures: "
        "bench lmean mean p50 p99 p999 max cpu rss rps, instructions syscalls allocations, and for cold folders import "
        "construct first second answer exit rss",
    )
    cmp_.add_argument("--rows", metavar="PATTERNS", help="with --fail-on: judge only these rows (names or globs)")
    cmp_.add_argument("-o", "--out", type=Path, metavar="DIR", help="also write the comparison to DIR/compare.md")

    rep = sub.add_parser(
        "report",
        help="the HTML report of a results folder (report.html), or of two runs compared",
        description="Render one self-contained HTML page (no network needed) of a results folder: a run, a "
        "sweep, a GIL report, a soak, or a folder of them. The tables sort by any column and show each "
        "figure's min-max over the repeats; Bench and CPU per request with their min-max, latency by "
        "percentile (rows toggled in the legend), the GIL timeline and reading, sweep curves, the "
        "environment. Every command writes this page into its folder as report.html. With --compare, "
        "the ratio B / A per row, flagged by the rules of `clientbench compare`.",
    )
    rep.add_argument("results", type=Path, metavar="RESULTS_DIR", help="a results folder (A with --compare)")
    rep.add_argument("--compare", type=Path, metavar="OTHER_DIR", help="the run to compare with (B: ratios B / A)")
    add_export_option(rep)
    rep.add_argument(
        "-o",
        "--out",
        type=Path,
        metavar="FILE",
        help="the HTML file to write (default RESULTS_DIR/report.html, with --compare RESULTS_DIR/compare.html)",
    )

    from .commands.cold import add_parser as add_cold
    from .commands.cost import add_parser as add_cost
    from .commands.profile import add_parser as add_profile
    from .commands.soak import add_parser as add_soak

    add_soak(sub)
    add_cost(sub)
    add_cold(sub)
    add_profile(sub)

    lst = sub.add_parser(
        "list",
        help="list the clients (table rows), each installed or how to get it",
        description="Every row: what it measures, and whether it can run here (installed, with the version of "
        "what it runs) or how to get it (the pip extra, or in a checkout the make target).",
    )
    external.add_options(lst)

    from .commands.history import add_parser as add_history
    from .commands.serve import add_parser as add_serve

    add_serve(sub)
    add_history(sub)
    from .commands.check_driver import add_parser as add_check_driver

    add_check_driver(sub)
    return p


def workload(args: argparse.Namespace) -> Workload:
    own_rates = args.command == "gil" or (args.command == "sweep" and args.dimension == "rate")
    return command_workload(args.command, vars(args), reference=args.reference, own_rates=own_rates)


def interpreters(args: argparse.Namespace) -> list[Interpreter | None]:
    if args.python:
        return resolve_interpreters([args.python])
    if args.interpreters:
        return resolve_interpreters([i.strip() for i in args.interpreters.split(",") if i.strip()])
    return []


def registry(args: argparse.Namespace) -> list[ClientSpec]:
    """The shipped rows and those from outside the project: installed plugins, --clients-file, --client,
    --driver."""
    return external.registry(args.driver, args.plugins, args.clients_file)


def selection(args: argparse.Namespace) -> list[ClientSpec]:
    """The rows: --clients (or the defaults, or --all), each Python row under every --interpreters."""
    return under(select(args.clients, registry(args), everything=args.all), interpreters(args))


def testbed_options(args: argparse.Namespace) -> Options:
    return Options.checked(
        target=args.target,
        server_threads=args.server_threads,
        row_timeout_s=getattr(args, "row_timeout_s", Options.row_timeout_s),
        out=args.out,
        network=args.network,
        tls=args.tls,
        tls_version=args.tls_version,
        ca_file=args.ca_file,
        insecure=args.insecure,
        pin=Pinning.parse(args.pin, frozenset(os.sched_getaffinity(0))) if args.pin else None,
        exports=tuple(dict.fromkeys(getattr(args, "export", []))),
        hosts=getattr(args, "hosts", 1),
        targets=Path(args.targets) if getattr(args, "targets", None) else None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv = ["run", *argv]
    args = build_parser().parse_args(argv)
    raise_open_files()  # before any child starts: the server and the drivers inherit it
    try:
        return dispatch(args, argv)
    except SetupError as exc:
        print(f"clientbench: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `clientbench list | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def dispatch(args: argparse.Namespace, argv: Sequence[str]) -> int:
    # commands are imported when used: `list` and `--help` stay fast (no numpy, matplotlib)
    if args.command == "list":
        from .commands.list import list_rows

        return list_rows(registry(args))
    if args.command == "history":
        from .commands.history import history

        return history(args.folders, args.out)
    if args.command == "serve":
        from .commands.serve import Listen, serve

        return serve(
            Listen.parse(args.listen),
            threads=args.threads,
            tls=args.tls,
            tls_version=args.tls_version,
            tls_dir=args.tls_dir,
            tls_names=tuple(args.tls_name),
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
        )
    if args.command == "check-driver":
        from .commands.check_driver import check_driver

        return check_driver(args, registry(args))
    if args.command == "report":
        from .commands.report import report

        return report(args.results, args.compare, args.out, tuple(dict.fromkeys(args.export)))
    if args.command == "compare":
        from .commands.compare import compare

        return compare(args.a, args.b, args.fail_on, args.rows, args.out)
    if args.command == "cost":
        from .commands.cost import cost, expand_names

        counts = CostSettings(args.requests, args.baseline, args.path, CostSettings.parse_measures(args.measure))
        args.clients = expand_names(args.clients, registry(args))
        return cost(selection(args), counts, testbed_options(args), argv)
    if args.command == "cold":
        from .commands.cold import ColdSettings
        from .commands.cold import run as cold

        return cold(selection(args), ColdSettings.from_args(args), testbed_options(args), argv)
    if args.command == "profile":
        from .commands.profile import profile

        return profile(args, selection(args), testbed_options(args), argv)
    if args.command == "soak":
        from .commands.soak import soak, targets

        settings = SoakSettings.checked(
            requests=args.requests,
            workers=args.workers,
            warmup=args.warmup,
            max_seconds=args.max_seconds,
            max_rss_growth_mib=args.max_rss_growth,
        )
        return soak(targets(args.clients), settings, testbed_options(args), argv)
    if args.command == "gil":
        from .commands.gil import gil_report

        wl, options = workload(args), testbed_options(args)
        check_together(wl, options)
        return gil_report(
            wl,
            options,
            argv,
            rtt_ms=args.rtt,
            interpreters=interpreters(args),
            open_loop_s=args.open_loop_duration_s,
            rates=args.rates,
            slo_ms=args.slo_ms,
            shared_phase=args.shared_phase,
        )
    if args.command == "sweep":
        from .commands.sweep import sweep

        dim = DIMENSIONS[args.dimension]
        base, options = workload(args), testbed_options(args)
        points = sweep_points(dim, args.values, args.rates, base)
        for value in points:
            check_together(dim.workload(base, value), options)
        given = args.rates is not None or args.values is not None
        return sweep(dim, points, selection(args), base, options, argv, every_rate=given, slo_ms=args.slo_ms)
    from .commands.run import run

    wl, options = workload(args), testbed_options(args)
    check_together(wl, options)
    return run(selection(args), wl, options, argv)
