"""`clientbench soak`: a million requests through each binding and each native client, bounded in time.

Each target is a subprocess that loops W workers over one client each without storing samples, and prints
one JSON line: requests, failures, RSS after warm-up and at the end. A target passes with all requests done,
0 failures and RSS growth after warm-up under the limit."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import arguments
from ..environment.binaries import require
from ..options import Options, SoakSettings
from ..options.rows import select
from ..options.values import mebibytes, non_negative, positive, seconds

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from . import Command


@dataclass(frozen=True)
class Target:
    """A soak target: its name (-c) and the command that runs it (the soak flags follow)."""

    name: str
    command: Callable[[], list[str]]
    tags: tuple[str, ...] = ()
    default: bool = True  # without -c every target runs


def _binding(client: str) -> Callable[[], list[str]]:
    return lambda: [sys.executable, "-m", "clientbench.probes.soak_binding", "--client", client]


TARGETS = (
    Target("py-beast", _binding("beast")),
    Target("py-reqwest", _binding("reqwest")),
    Target("py-reqwest-async", _binding("reqwest-async")),
    Target("cpp-beast", lambda: [str(require("beast-soak"))]),
    Target("rust-reqwest", lambda: [str(require("reqwest-soak"))]),
)


def add_parser(sub: Subparsers, command: Command) -> None:
    soak = sub.add_parser(
        command.name,
        help=command.help,
        description="Send --requests through each binding and each native client (bounded by "
        "--max-seconds) and report failures (must be 0) and the client process's "
        "RSS growth after warm-up (must stay under --max-rss-growth MiB).",
    )
    soak.add_argument("-n", "--requests", type=positive, default=1_000_000, help="requests per target (default 1e6)")
    soak.add_argument(
        "-w", "--workers", type=positive, default=10, help="workers, each with its own client (default 10)"
    )
    soak.add_argument(
        "--warmup",
        type=non_negative,
        default=None,
        help="requests before the warm RSS sample, below --requests (default 50000, or half of --requests when "
        "that is fewer)",
    )
    soak.add_argument("--max-seconds", type=seconds, default=600, help="time bound per target, s (default 600)")
    soak.add_argument(
        "--max-rss-growth",
        type=mebibytes,
        default=20.0,
        metavar="MIB",
        help="a target fails when its RSS grows by this many MiB or more after warm-up (default 20)",
    )
    soak.add_argument(
        "-c",
        "--clients",
        action="append",
        metavar="NAMES",
        help=f"targets: {', '.join(t.name for t in TARGETS)} (default all)",
    )
    arguments.add_session_options(soak, row_timeout=False)  # a soak target is bounded by --max-seconds


@dataclass(frozen=True)
class SoakOptions:
    targets: tuple[Target, ...]
    settings: SoakSettings
    options: Options
    argv: tuple[str, ...]


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> SoakOptions:
    settings = SoakSettings.checked(
        requests=args.requests,
        workers=args.workers,
        warmup=args.warmup,
        max_seconds=args.max_seconds,
        max_rss_growth_mib=args.max_rss_growth,
    )
    targets = select(arguments.rows(args), TARGETS, exact=True, kind="soak target")
    return SoakOptions(tuple(targets), settings, arguments.testbed(args), tuple(argv))


def run(o: SoakOptions) -> int:
    return soak(o.targets, o.settings, o.options, o.argv)


def soak_one(
    target: Target, url: str, settings: SoakSettings, tls_flags: Sequence[str] = (), cpus: frozenset[int] | None = None
) -> dict[str, Any]:
    """Run one target; its soak line (docs/soak-format.md) plus the verdict, or the error. `tls_flags`: what an
    https URL needs, the drivers' --ca-file PATH or --insecure (every target takes them)."""
    from ..execution.children import child_preexec, pinned
    from ..schema import InvalidResult, parse_soak_line

    cmd = [
        *target.command(),
        "--url",
        url,
        "--requests",
        str(settings.requests),
        "--workers",
        str(settings.workers),
        "--warmup",
        str(settings.warmup),
        "--max-seconds",
        f"{settings.max_seconds:g}",
        *tls_flags,
    ]
    doc: dict[str, Any] | None = None
    try:
        out = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=settings.max_seconds + 60,
            preexec_fn=pinned(child_preexec, cpus),
        )
        line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
        if out.returncode != 0 or not line:
            error = f"exit {out.returncode}: {out.stderr.strip()[-300:]}"
        else:
            doc, error = parse_soak_line(line), None
    except subprocess.TimeoutExpired:
        error = "timed out"
    except InvalidResult as exc:
        error = f"invalid output: {exc}"
    fields = {k: v for k, v in (doc or {}).items() if k != "schema"}  # the line's schema: docs/soak-format.md
    res: dict[str, Any] = {"target": target.name, "error": error, **fields}
    if doc:
        growth = (doc["rss_end_kib"] - (doc["rss_warm_kib"] or doc["rss_end_kib"])) / 1024
        res["rss_growth_mib"] = round(growth, 2)
        res["passed"] = (
            doc["failures"] == 0 and doc["requests"] >= settings.requests and growth < settings.max_rss_growth_mib
        )
    else:
        res["passed"] = False
    return res


def soak(targets: Sequence[Target], settings: SoakSettings, options: Options, argv: Sequence[str]) -> int:
    import dataclasses
    import json

    from ..execution.testbed import Testbed, link_latest
    from ..report.export import export
    from ..report.parts import soak_part
    from ..report.soak import summary
    from ..schema import SOAK_REPORT_ID
    from .output import header

    results: list[dict[str, Any]] = []
    testbed = Testbed(options, argv, kind="soak")
    with testbed:
        for target in targets:
            with testbed.console.status(f"soaking {target.name}: {settings.requests} requests"):
                cpus = options.pin.client if options.pin else None
                res = soak_one(target, testbed.base_url + "/", settings, testbed.endpoint.driver_flags(), cpus)
            results.append(res)
            line = json.dumps(
                {k: v for k, v in res.items() if k not in ("target", "error", "passed", "rss_growth_mib")}
            )
            testbed.console.print(
                f"  {target.name:18} {'[green]ok[/]' if res['passed'] else '[red]FAILED[/]'} "
                + (line if res.get("requests") is not None else str(res["error"]))
            )
    document = {
        **header(testbed, SOAK_REPORT_ID, version="clientbench_version"),
        "settings": dataclasses.asdict(settings),
        "complete": testbed.interrupted is None,
        "interrupted": testbed.interrupted,
        "results": results,
    }
    report = summary(document)
    report.parts = [soak_part(testbed.out, testbed.out.name, document, report)]
    export(report, testbed.out, ("json", "markdown", "html", "terminal"))
    link_latest(testbed.out)
    testbed.console.print(f"results: {testbed.out}")
    if testbed.exit_code is not None:
        return testbed.exit_code
    return 0 if all(r["passed"] for r in results) else 1
