"""`clientbench run`: every selected client with the same workload; the table, results/<ts>/."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import arguments
from ..options import Options, check_together
from ..options.rows import select
from ..workload import Workload

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from ..registry.spec import ClientSpec
    from . import Command


def add_parser(sub: Subparsers, command: Command) -> None:
    p = sub.add_parser(
        command.name,
        help=command.help,
        description="Start the server, run every selected client with the same workload, print "
        "the table and write results/<timestamp>/ (results.json, table.md, "
        "table.csv, raw/, logs/, plots/, server.log).",
    )
    arguments.add_workload_options(p)
    arguments.add_selection_options(p)
    arguments.add_session_options(p)
    arguments.add_export_option(p)


@dataclass(frozen=True)
class RunOptions:
    specs: tuple[ClientSpec, ...]
    workload: Workload
    options: Options
    argv: tuple[str, ...]  # the command line, as results.json records it


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> RunOptions:
    wl, options = arguments.workload(args), arguments.testbed(args)
    check_together(wl, options)
    return RunOptions(tuple(select(arguments.rows(args))), wl, options, tuple(argv))


def run(o: RunOptions) -> int:
    from ..execution.testbed import Testbed, link_latest
    from ..model import Row
    from ..workload import number
    from .output import exit_status, show, write_run

    rows: list[Row] = []
    workload = o.workload
    testbed = Testbed(o.options, o.argv, http=(workload.http,))
    with testbed:
        testbed.console.print(
            f"[bold]clientbench[/]: {len(o.specs)} clients x {workload.repeat} repeats -> "
            f"{testbed.base_url}{workload.path}"
        )
        testbed.run_rows(o.specs, workload, testbed.out, rows)
    out = testbed.out
    loop = f"{number(workload.rate)}/s" if workload.rate is not None else f"N={workload.requests}"
    subtitle = f"W={workload.workers}, {loop}, {workload.request()}"
    write_run(rows, testbed.results(workload, rows), out, subtitle, exports=o.options.exports)
    link_latest(out)
    if rows:
        show(rows, testbed.describe(workload))
    testbed.console.print(f"results: {out}")
    return exit_status(testbed, rows, [s.name for s in o.specs if s.explicit])
