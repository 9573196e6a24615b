"""Command line: `clientbench run | sweep | gil | compare | list` (`run` is the default)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from . import __version__
from .clients import CLIENTS, select
from .paths import SetupError
from .runner import Row, Workload


@dataclass(frozen=True)
class WorkloadDefaults:
    """What -n, --repeat and --warmup mean when they are not given."""

    requests: int
    repeat: int
    warmup: int = 10


#: The reference's workload (10 workers x 100 requests) with warm-up and 10 interleaved repeats.
#: N stays at 100 on purpose: Bench/LMean shows GIL serialization only while one worker's N requests fit in
#: one GIL switch interval (5 ms; ~3 ms for Beast with the GIL held). With N = 500 the interpreter's forced
#: switches interleave the held workers, LMean grows towards Bench, and Bench/LMean fell from ~10 to 1.4.
DEFAULTS = WorkloadDefaults(requests=100, repeat=10)
#: `--reference`: the reference write-up's method, 10 workers x 100 requests, one run, no warm-up.
REFERENCE = WorkloadDefaults(requests=100, repeat=1, warmup=0)


class Parser(argparse.ArgumentParser):
    """argparse, but errors are one line: `clientbench: error: ...` (and the usage hint)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


def _number(kind: type, minimum: float, what: str, strict: bool = False):  # type: ignore[no-untyped-def]
    def parse(text: str):  # type: ignore[no-untyped-def]
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum or (strict and value == minimum):
            raise argparse.ArgumentTypeError(f"must be {'>' if strict else '>='} {minimum:g}, got {text}")
        return value
    return parse


positive = _number(int, 1, "a whole number")
non_negative = _number(int, 0, "a whole number")
seconds = _number(float, 0, "seconds", strict=True)


def request_path(text: str) -> str:
    if not text.startswith("/"):
        raise argparse.ArgumentTypeError(f"a request path starts with '/', got {text!r}")
    return text


def add_workload_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("workload")
    g.add_argument("-w", "--workers", type=positive, default=10, help="workers per client (default 10)")
    # None = not given: resolved by workload_from(), where --reference changes the defaults
    g.add_argument("-n", "--requests", type=positive, default=None,
                   help=f"timed sequential requests per worker (default {DEFAULTS.requests})")
    g.add_argument("--warmup", type=non_negative, default=None,
                   help=f"untimed requests per worker before timing (default {DEFAULTS.warmup})")
    g.add_argument("-r", "--repeat", type=positive, default=None,
                   help=f"runs of every client, interleaved round-robin; the table shows medians "
                        f"(default {DEFAULTS.repeat})")
    g.add_argument("--reference", action="store_true",
                   help=f"the reference write-up's method: {REFERENCE.requests} requests per worker, one run, "
                        f"no warm-up (-n {REFERENCE.requests} --repeat {REFERENCE.repeat} --warmup "
                        f"{REFERENCE.warmup}; flags given explicitly still win)")
    g.add_argument("--timeout", type=seconds, default=30.0, help="per-request timeout in s (default 30)")
    g.add_argument("--path", type=request_path, default="/", help="request path on the server (default '/')")


def add_selection_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("clients")
    g.add_argument("-c", "--clients", action="append", metavar="NAMES",
                   help="comma-separated client names or globs, e.g. 'py-*' (default: the default set; "
                        "see `clientbench list`)")
    g.add_argument("--all", action="store_true", help="every client, not only the default set")


def add_session_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("session")
    g.add_argument("--target", metavar="URL",
                   help="benchmark an already-running server at URL (e.g. http://127.0.0.1:8080) instead of "
                        "starting server-axum")
    g.add_argument("--server-threads", type=positive, default=None,
                   help="tokio worker threads of the started server (default: tokio's, one per core)")
    g.add_argument("--row-timeout", type=seconds, default=300.0,
                   help="kill a driver that runs longer than this many s (default 300)")
    g.add_argument("-o", "--out", type=Path, default=None, help="results folder (default: results/)")


def build_parser() -> Parser:
    p = Parser(prog="clientbench",
               description="Benchmark HTTP clients (C++ Beast, Rust reqwest, Python requests/aiohttp and our "
                           "pybind11/PyO3 bindings) against a local axum server with one workload: W workers x "
                           "N sequential requests, each worker with its own connection.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    run = sub.add_parser("run", help="run the clients and print the table (the default command)",
                         description="Start the server, run every selected client with the same workload, print "
                                     "the table and write results/<timestamp>/ (results.json, table.md, "
                                     "table.csv, raw/, plots/, server.log).")
    add_workload_options(run)
    add_selection_options(run)
    add_session_options(run)

    sweep = sub.add_parser("sweep", help="run the clients over one dimension (workers, payload, delay, connection)",
                           description="Run the selected clients at every point of one dimension; writes a "
                                       "table per point, sweep.md and a plot of Bench and throughput vs the "
                                       "dimension.")
    sweep.add_argument("dimension", choices=["workers", "payload", "delay", "connection"],
                       help="workers: 1..32 workers; payload: /bytes/N sizes; delay: /delay/ms; "
                            "connection: keep-alive vs a new connection per request")
    sweep.add_argument("--values", metavar="LIST",
                       help="comma-separated points (default per dimension, e.g. workers 1,2,4,8,10,16,32)")
    add_workload_options(sweep)
    add_selection_options(sweep)
    add_session_options(sweep)

    gil = sub.add_parser("gil", help="the GIL report: serial baseline, GIL held vs released, timeline",
                         description="Run both bindings with the GIL held and released (and C++ Beast), at W=1 "
                                     "and W workers; writes gil.md with a reading generated from the figures, "
                                     "and the request timeline plot.")
    add_workload_options(gil)
    add_session_options(gil)

    cmp_ = sub.add_parser("compare", help="per-row ratios of two runs, flagging changes beyond the noise",
                          description="Compare two results folders (or results.json files): Bench ratio B/A "
                                      "per row, flagged when outside both runs' measured spread.")
    cmp_.add_argument("a", type=Path, help="baseline run folder or results.json")
    cmp_.add_argument("b", type=Path, help="new run folder or results.json")

    soak = sub.add_parser("soak", help="a million requests through each binding and native client: failures, RSS",
                          description="Send --requests through each binding and each native client (bounded by "
                                      "--max-seconds) and report failures (must be 0) and the client process's "
                                      "RSS growth after warm-up (must stay under --max-rss-growth MiB).")
    soak.add_argument("-n", "--requests", type=positive, default=1_000_000, help="requests per target (default 1e6)")
    soak.add_argument("-w", "--workers", type=positive, default=10, help="workers (default 10)")
    soak.add_argument("--warmup", type=non_negative, default=50_000,
                      help="requests before the warm RSS sample (default 50000)")
    soak.add_argument("--max-seconds", type=seconds, default=600, help="time bound per target (default 600)")
    soak.add_argument("--max-rss-growth", type=seconds, default=20.0, help="MiB (default 20)")
    soak.add_argument("-c", "--clients", action="append", metavar="NAMES",
                      help="targets: py-beast, py-reqwest, py-reqwest-async, cpp-beast, rust-reqwest (default all)")
    add_session_options(soak)

    sub.add_parser("list", help="list the clients (table rows) and exit")
    return p


def workload_from(args: argparse.Namespace) -> tuple[Workload, int]:
    """The workload and repeat count: explicit flags, else --reference's method, else the defaults."""
    defaults = REFERENCE if args.reference else DEFAULTS
    for field in ("requests", "repeat", "warmup"):
        if getattr(args, field) is None:
            setattr(args, field, getattr(defaults, field))
    return Workload(args.workers, args.requests, args.warmup, args.timeout, args.path), args.repeat


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv = ["run", *argv]
    args = build_parser().parse_args(argv)
    try:
        if args.command == "list":
            for c in CLIENTS:
                tags = "" if c.default else "  (not in the default set)"
                print(f"{c.name:24} {c.label}{tags}")
            return 0
        if args.command == "compare":
            from .compare import compare
            return compare(args.a, args.b)
        if args.command == "gil":
            from .gil import gil_report
            return gil_report(args, argv)
        if args.command == "soak":
            from .soak import soak
            return soak(args, argv)
        if args.command == "sweep":
            from .sweep import sweep
            return sweep(args, argv)
        return cmd_run(args, argv)
    except SetupError as exc:
        print(f"clientbench: error: {exc}", file=sys.stderr)
        return 2


def cmd_run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from .plots import run_plots
    from .session import Session, link_latest, print_table, write_reports

    specs = select(args.clients, everything=args.all)
    workload, repeat = workload_from(args)
    rows: list[Row] = []
    session = Session(args, argv)
    title = (f"{workload.workers} workers x {workload.requests} requests, GET {workload.path}, "
             f"median of {repeat} run(s), warmup {workload.warmup}")
    with session:
        session.console.print(f"[bold]clientbench[/]: {len(specs)} clients x {repeat} repeats -> "
                              f"{session.base_url}{workload.path}")
        session.run_rows(specs, workload, repeat, session.out, rows)
    out = session.out
    write_reports(rows, session.meta(workload, repeat), out)
    link_latest(out)
    if rows:
        run_plots(rows, out, f"W={workload.workers}, N={workload.requests}, GET {workload.path}")
        print_table(rows, title)
    session.console.print(f"results: {out}")
    if session.exit_code is not None:
        return session.exit_code
    failed = [r.spec.name for r in rows if r.failed]
    if failed:
        session.console.print(f"[red]{len(failed)} row(s) failed:[/] {', '.join(failed)}")
        return 1
    return 0
