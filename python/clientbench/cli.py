"""Command line: `clientbench run` (the default) and `clientbench list`."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import signal
import sys
from pathlib import Path
from typing import Sequence

from rich.console import Console

from . import __version__
from .clients import CLIENTS, select
from .paths import SetupError, repo_root
from .report import markdown_table, results_json, rich_table
from .runner import RowResult, Workload, run_rows, write_atomic
from .server import Server


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that every `finally` (server stop, partial results) runs."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def _path(text: str) -> str:
    if not text.startswith("/"):
        raise argparse.ArgumentTypeError(f"a request path starts with '/', got {text!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clientbench",
        description="Benchmark HTTP clients (C++ Beast, Rust reqwest, Python requests/aiohttp and the "
                    "pybind11/PyO3 bindings) against a local axum server with one workload.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run the clients and print the table (the default)",
                         description="Start the server, run every selected client with the same workload "
                                     "(W workers x N sequential requests), print the table and write "
                                     "results/<timestamp>/.")
    add_run_options(run)
    sub.add_parser("list", help="list the clients (table rows) and exit")
    return p


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-w", "--workers", type=_positive, default=10, help="workers per client (default 10)")
    p.add_argument("-n", "--requests", type=_positive, default=100,
                   help="timed sequential requests per worker (default 100)")
    p.add_argument("--warmup", type=_non_negative, default=0,
                   help="untimed requests per worker before timing (default 0, as the reference)")
    p.add_argument("--timeout", type=_seconds, default=30.0, help="per-request timeout in s (default 30)")
    p.add_argument("--path", type=_path, default="/", help="request path on the server (default '/')")
    p.add_argument("-c", "--clients", action="append", metavar="NAMES",
                   help="comma-separated client names or globs (default: all); see `clientbench list`")
    p.add_argument("--target", metavar="URL",
                   help="benchmark an already-running server at URL (e.g. http://127.0.0.1:8080) "
                        "instead of starting one")
    p.add_argument("--server-threads", type=_positive, default=None,
                   help="tokio worker threads of the started server (default: tokio's default)")
    p.add_argument("--row-timeout", type=_seconds, default=300.0,
                   help="kill a driver that runs longer than this many s (default 300)")
    p.add_argument("-o", "--out", type=Path, default=None,
                   help="results folder (default: results/ in the checkout)")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["run", *argv]
    args = build_parser().parse_args(argv)
    try:
        if args.command == "list":
            for c in CLIENTS:
                print(f"{c.name:22} {c.label}")
            return 0
        return cmd_run(args, argv)
    except SetupError as exc:
        print(f"clientbench: error: {exc}", file=sys.stderr)
        return 2


def _results_dir(args: argparse.Namespace) -> Path:
    base = args.out if args.out is not None else repo_root() / "results"
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = base / stamp
    n = 1
    while out.exists():
        n += 1
        out = base / f"{stamp}-{n}"
    out.mkdir(parents=True)
    return out


def _link_latest(out: Path) -> None:
    latest = out.parent / "latest"
    tmp = out.parent / ".latest.tmp"
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        tmp.symlink_to(out.name)
        os.replace(tmp, latest)
    except OSError:
        pass


def cmd_run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    specs = select(args.clients)
    workload = Workload(args.workers, args.requests, args.warmup, args.timeout, args.path)
    out = _results_dir(args)
    console = Console(stderr=True)
    rows: list[RowResult] = []
    interrupted: str | None = None
    started = dt.datetime.now(dt.timezone.utc)
    server_url = args.target
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    server = None
    try:
        if not args.target:
            server = Server(threads=args.server_threads, log=out / "server.log")
            with console.status("starting the axum server"):
                server_url = server.start()
        url = server_url.rstrip("/") + workload.path
        console.print(f"[bold]clientbench[/]: {len(specs)} clients x {workload.workers} workers x "
                      f"{workload.requests} requests -> {url}")
        status = console.status("")
        status.start()

        def on_start(spec):  # type: ignore[no-untyped-def]
            status.update(f"running {spec.name} ({len(rows) + 1}/{len(specs)})")

        def on_done(row: RowResult) -> None:
            if row.stats:
                line = f"Bench {row.stats.bench_ms:.2f} ms, {row.stats.errors} errors"
            else:
                line = "no result"
            mark = "[red]FAILED[/]" if row.failed else "[green]ok[/]"
            console.print(f"  {row.spec.name:22} {mark} {line}" + (f" ({row.reason})" if row.reason else ""),
                          highlight=False, markup=True)

        try:
            run_rows(specs, url, workload, row_timeout_s=args.row_timeout, out_dir=out,
                     on_start=on_start, on_done=lambda r: (rows.append(r), on_done(r)))
        finally:
            status.stop()
    except KeyboardInterrupt:
        interrupted = "interrupted (Ctrl-C)"
    except Terminated:
        interrupted = "terminated (SIGTERM)"
    finally:
        if server is not None:
            server.stop()
        signal.signal(signal.SIGTERM, previous)
        meta = {
            "created": started.isoformat(timespec="seconds"),
            "clientbench_version": __version__,
            "command": ["clientbench", *argv],
            "workload": {"workers": workload.workers, "requests": workload.requests,
                         "warmup": workload.warmup, "timeout_s": workload.timeout_s, "path": workload.path},
            "server": {"url": server_url, "started_by_clientbench": not args.target},
            "host": {"python": platform.python_version(), "platform": platform.platform(),
                     "cpus": os.cpu_count()},
            "complete": interrupted is None,
            "interrupted": interrupted,
        }
        write_atomic(out / "results.json", results_json(rows, meta))
        write_atomic(out / "table.md", markdown_table(rows))
        _link_latest(out)

    # not a terminal (CI, a pipe): don't squeeze the table into 80 columns
    Console(width=None if sys.stdout.isatty() else 200).print(rich_table(rows, title=f"{workload.workers} workers x {workload.requests} requests, "
                                           f"GET {workload.path}"))
    console.print(f"results: {out}")
    if interrupted:
        console.print(f"[red]{interrupted}[/]; partial results written")
        return 130 if interrupted.startswith("interrupted") else 143
    failed = [r.spec.name for r in rows if r.failed]
    if failed:
        console.print(f"[red]{len(failed)} row(s) failed:[/] {', '.join(failed)}")
        return 1
    return 0
