"""`clientbench check-driver`: the driver contract's conformance suite for driver authors, usable in their CI
(docs/bring-your-own-client.md). One line per check, pass or fail with why (or not supported: an open loop
or uploads refused with a usage error); exit status 1 when any check failed.

    clientbench check-driver -- ./my-driver --its-own-flag
    clientbench check-driver --client mybench:plugin
    clientbench check-driver -c cpp-beast,py-requests
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import arguments
from ..errors import SetupError
from ..options.rows import select
from ..registry import external
from ..registry.spec import ClientSpec

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from . import Command


def add_parser(sub: Subparsers, command: Command) -> None:
    p = sub.add_parser(
        command.name,
        help=command.help,
        description="Run a driver through the contract's checks (docs/raw-format.md) against the axum server, "
        "its HTTPS twin and a fault server: usage errors, the document and its samples, connections kept "
        "alive or new, body integrity, uploads, each failure's class (500, a stall past --timeout, a reset "
        "mid-body, a truncated body, a refused connection, an untrusted CA), histograms and the open loop. "
        "One line per check; exit status 1 when one failed.",
    )
    p.add_argument(
        "driver_command",
        nargs="*",
        metavar="-- COMMAND ARGS",
        help="the driver program and its own flags (the checks append the contract's flags)",
    )
    p.add_argument(
        "-c",
        "--clients",
        action="append",
        metavar="NAMES",
        help="check these rows of the registry (names or globs, as for run), e.g. 'py-*'",
    )
    external.add_options(p)
    p.add_argument("--python", metavar="PATH", help="run Python plugins under this python")
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=2,
        metavar="N",
        help="driver runs at a time (default 2; the checks that count connections run one at a time)",
    )
    p.add_argument(
        "--row-timeout",
        dest="row_timeout_s",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="kill a driver run that takes longer than this (default 60)",
    )


@dataclass(frozen=True)
class CheckDriverOptions:
    specs: tuple[ClientSpec, ...]  # what to check: the command after --, the --driver and --client rows, the -c rows
    jobs: int = 2
    row_timeout_s: float = 60.0


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> CheckDriverOptions:
    refusal = "check-driver: give the driver: -- COMMAND ARGS, --client MODULE:OBJECT, --driver or -c NAMES"
    specs = select(arguments.rows(args), named=refusal)
    return CheckDriverOptions(tuple(specs), args.jobs, args.row_timeout_s)


def run(o: CheckDriverOptions) -> int:
    return check_driver(o.specs, o.jobs, o.row_timeout_s)


def check_driver(
    specs: Sequence[ClientSpec], jobs: int = 2, row_timeout_s: float = 60.0, out: Callable[[str], None] = print
) -> int:
    """Check every driver; 1 when one of them failed a check."""
    import socket

    from ..conformance.checks import FAIL, NEW, PASS, Outcome, Servers, check
    from ..conformance.faults import FaultServer
    from ..contract import VERSION, schema_id
    from ..execution.server import Server

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/"

    def show(o: Outcome) -> None:
        label = {PASS: "pass", FAIL: "FAIL", NEW: "new "}.get(o.status, "skip")
        out(f"  {label}  {o.check}: {o.why if o.status in (PASS, FAIL, NEW) else 'not supported: ' + o.why}")
        sys.stdout.flush()

    out(f"check-driver: the driver contract {schema_id()} (docs/raw-format.md)")

    failed: list[str] = []
    with Server() as http, Server() as counting, Server(tls=True) as https, FaultServer() as faults:
        bed = Servers(http, counting, https, faults, closed, row_timeout_s)
        for spec in specs:
            out(f"{spec.name}: {_what(spec)}")
            outcomes = check(spec, bed, show, jobs)
            counts = {k: sum(o.status == k for o in outcomes) for k in (PASS, FAIL, NEW)}
            skipped = len(outcomes) - sum(counts.values())
            older = outcomes.declared is not None and outcomes.declared < VERSION
            news = f", {counts[NEW]} new in {schema_id()}" if older else ""
            out(f"{spec.name}: {counts[PASS]} passed, {counts[FAIL]} failed, {skipped} not supported{news}")
            if older:
                out(
                    f"{spec.name}: its documents declare {schema_id(outcomes.declared or 0)}: checked by that "
                    f"version's rules; the {counts[NEW]} checks marked new are of rules a later version added "
                    '(docs/raw-format.md, "Versions")'
                )
            if counts[FAIL]:
                failed.append(spec.name)
    if failed:
        out(f"check-driver: {', '.join(failed)} failed the contract")
        return 1
    return 0


def _what(spec: ClientSpec) -> str:
    try:
        return " ".join(spec.argv())
    except SetupError as exc:
        return f"({exc})"
