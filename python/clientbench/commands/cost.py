"""`clientbench cost`: what one request costs each client, counted instead of timed (docs/cost.md).

Each selected row's driver runs with one worker, keep-alive and no warm-up, under a tool, at two request
counts, N and a baseline M < N. What differs between the two runs is N - M requests and nothing else (the
process start, imports, connecting and the exit are the same), so (count at N - count at M) / (N - M) is the
cost of one request with the start-up subtracted:

- instructions: valgrind's callgrind, the instructions executed in user space (the client, its libraries,
  the harness's timing loop; the kernel's work behind each syscall is not counted). A count of instructions
  does not depend on the machine's speed or load: it repeats to well within 1% between runs, where CPU
  time on a shared machine drifts by tens of percent.
- syscalls: strace -f, every system call by name.
- allocations: callgrind again, the calls of malloc, calloc, realloc and the aligned allocators (operator
  new calls malloc); Python rows run with PYTHONMALLOC=malloc in this run, so that Python's objects, which
  pymalloc otherwise carves out of its own arenas, are counted as the allocations they are.

Each tool counts by thread. The driver's main thread starts the workers, waits, then writes the raw
document, whose two numbers per request also grow with N: when the requests run on threads of their own
(the sync drivers), only those threads are counted, as the runner's CPU column counts only the timed loop;
a driver that sends its requests from the main thread (asyncio) is counted whole, its document included.
Valgrind runs the threads of a process one at a time, hence W=1; the driver's environment is the same in
every run (PYTHONHASHSEED=0, UNSET unset, the same flags), which is what makes two runs agree."""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import arguments
from ..analysis.cost import CostError, Counts, counted_scope, per_request
from ..errors import SetupError
from ..options import UNSET, CostSettings, Options
from ..options.rows import select
from ..options.values import positive, request_path

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from ..registry.spec import ClientSpec
    from . import Command

#: the tools each measure runs under
TOOLS = {"instructions": "valgrind", "syscalls": "strace", "allocations": "valgrind"}


def add_parser(sub: Subparsers, command: Command) -> None:
    cost = sub.add_parser(
        command.name,
        help=command.help,
        description="Run each selected row's driver (one worker, keep-alive GET) under valgrind's callgrind "
        "and strace at two request counts; their difference per request is the cost of a request without the "
        "start-up. Writes cost.md, cost.csv and cost.json (docs/cost.md).",
    )
    cost.add_argument("-n", "--requests", type=positive, default=2000, help="the larger request count (default 2000)")
    cost.add_argument("--baseline", type=positive, default=200, help="the smaller request count (default 200)")
    cost.add_argument("--path", type=request_path, default="/", help="request path on the server (default '/')")
    cost.add_argument(
        "--measure", default="instructions,syscalls,allocations", metavar="LIST", help="what to count (default all)"
    )
    cost.add_argument(
        "--phases",
        action="store_true",
        help="the drivers record each request's phases, as `run` has them do: what recording them costs (compare "
        "with a cost without it)",
    )
    arguments.add_selection_options(cost)
    arguments.add_session_options(cost)
    arguments.add_export_option(cost)


@dataclass(frozen=True)
class CostOptions:
    specs: tuple[ClientSpec, ...]
    settings: CostSettings
    options: Options
    argv: tuple[str, ...]


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> CostOptions:
    settings = CostSettings(
        args.requests, args.baseline, args.path, CostSettings.parse_measures(args.measure), phases=args.phases
    )
    specs = select(arguments.rows(args), tails=True)
    return CostOptions(tuple(specs), settings, arguments.testbed(args), tuple(argv))


def run(o: CostOptions) -> int:
    return cost(o.specs, o.settings, o.options, o.argv)


# -- measuring ----------------------------------------------------------------------------------------


def tools(measures: Sequence[str]) -> dict[str, str]:
    """The tools these measures need, by name -> path; SetupError naming what is missing."""
    found: dict[str, str] = {}
    for name in dict.fromkeys([*(TOOLS[m] for m in measures), "env"]):
        path = shutil.which(name)
        if path is None:
            needs = ", ".join(m for m in measures if TOOLS[m] == name) or "the allocations' environment"
            raise SetupError(f"{name} is not installed (needed for {needs}); install it with apt-get install {name}")
        found[name] = path
    return found


@dataclass
class RowCost:
    spec: ClientSpec
    status: str = "ok"  # ok | failed | unavailable
    reason: str | None = None
    counts: dict[str, Counts] = field(default_factory=dict)  # measure -> counts

    def to_json(self, settings: CostSettings) -> dict[str, Any]:
        n, m = settings.requests, settings.baseline
        scope = counted_scope(self.counts, n, m)
        return {
            "name": self.spec.name,
            "label": self.spec.label,
            "status": self.status,
            "reason": self.reason,
            "scope": scope,
            **per_request(self.counts, n, m, scope),
            "process": per_request(self.counts, n, m, "process"),
            "totals": {
                measure: {str(k): v for k, v in sorted(c.totals.items(), reverse=True)}
                for measure, c in self.counts.items()
            },
        }


def measure_once(
    spec: ClientSpec,
    measure: str,
    requests: int,
    *,
    url: str,
    path: str,
    paths: dict[str, str],
    out: Path,
    row_timeout_s: float,
    expected_body_bytes: int | None,
    driver_flags: Sequence[str],
    phases: bool = False,
) -> dict[str, dict[str, int]]:
    """One run of the row's driver under the measure's tool; what the tool counted, by thread."""
    from ..analysis.cost import callgrind_allocations, callgrind_instructions, callgrind_threads, strace_threads
    from ..execution.driver_process import run_driver
    from ..model import RunStatus
    from ..workload import Workload

    raw = out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    stem = raw / f"{spec.name}.{measure}.{requests}"
    valgrind_log = f"--log-file={stem}.valgrind.log"
    env = [paths["env"], *(a for name in UNSET for a in ("-u", name))]
    if measure == "syscalls":
        tool = [paths["strace"], "-f", "-o", f"{stem}.strace"]
    else:
        if measure == "allocations" and spec.is_python:
            env.append("PYTHONMALLOC=malloc")
        tool = [
            paths["valgrind"],
            "--tool=callgrind",
            "--separate-threads=yes",
            f"--callgrind-out-file={stem}.callgrind",
            valgrind_log,
        ]
    prefix = [*env, *tool]
    workload = Workload(workers=1, requests=requests, warmup=0, path=path, repeat=1, phases=phases)
    result = run_driver(
        spec.wrapped(prefix),
        url,
        workload,
        row_timeout_s=row_timeout_s,
        log_dir=out / "logs",
        expected_body_bytes=expected_body_bytes,
        tag=f".{measure}.{requests}",
        hash_seed=0,
        driver_flags=driver_flags,
    )
    if result.status is RunStatus.UNAVAILABLE:
        raise _Unavailable(result.reason or "unavailable")
    if result.status is not RunStatus.OK:
        raise CostError(f"{measure} at {requests} requests: {result.reason}")
    try:
        if measure == "syscalls":
            return strace_threads(Path(f"{stem}.strace").read_text())
        if measure == "instructions":
            return callgrind_threads(Path(f"{stem}.callgrind"), callgrind_instructions, "instructions")
        return callgrind_threads(Path(f"{stem}.callgrind"), callgrind_allocations, "allocations")
    except OSError as exc:
        raise CostError(f"{measure} at {requests} requests: cannot read the tool's output: {exc}") from None


class _Unavailable(Exception):
    """An optional row whose library is not installed here."""


# -- the report ---------------------------------------------------------------------------------------


def cost(specs: Sequence[ClientSpec], settings: CostSettings, options: Options, argv: Sequence[str]) -> int:
    from ..execution.probe import probe_body_bytes
    from ..execution.testbed import Testbed, link_latest
    from ..report import Report, Text
    from ..report.cost import method, table
    from ..report.export import export
    from ..report.parts import cost_part
    from ..schema import COST_ID
    from .output import header

    paths = tools(settings.measures)  # before the server starts: a missing tool is a one-line error
    results: list[RowCost] = [RowCost(spec) for spec in specs]
    testbed = Testbed(options, argv, kind="cost")
    steps = len(specs) * len(settings.measures) * 2
    with testbed:
        endpoint = testbed.endpoint
        url = endpoint.url + settings.path
        expected = probe_body_bytes(url, 30, endpoint.trust)
        testbed.console.print(
            f"[bold]clientbench cost[/]: {len(specs)} clients x {', '.join(settings.measures)} at "
            f"{settings.requests} and {settings.baseline} requests -> {url}"
        )
        done = 0
        for row in results:
            for measure in settings.measures:
                counts = row.counts.setdefault(measure, Counts())
                for n in (settings.requests, settings.baseline):
                    done += 1
                    if row.status != "ok":
                        continue
                    with testbed.console.status(f"[{done}/{steps}] {row.spec.name}: {measure}, {n} requests"):
                        try:
                            counts.totals[n] = measure_once(
                                row.spec,
                                measure,
                                n,
                                url=url,
                                path=settings.path,
                                paths=paths,
                                out=testbed.out,
                                row_timeout_s=options.row_timeout_s,
                                expected_body_bytes=expected,
                                driver_flags=endpoint.driver_flags(),
                                phases=settings.phases,
                            )
                        except _Unavailable as exc:
                            row.status, row.reason = "unavailable", str(exc)
                        except CostError as exc:
                            row.status, row.reason = "failed", str(exc)
            mark = {"ok": "[green]ok[/]", "unavailable": "[dim]unavailable[/]"}.get(row.status, "[red]FAILED[/]")
            testbed.console.print(f"  {row.spec.name:26} {mark}" + (f"  [dim]{row.reason}[/]" if row.reason else ""))
    rows = [r.to_json(settings) for r in results]
    document = {
        **header(testbed, COST_ID),
        "server": testbed.endpoint.url or None,
        "path": settings.path,
        "requests": settings.requests,
        "baseline": settings.baseline,
        "measures": list(settings.measures),
        "phases": settings.phases,
        "interrupted": testbed.interrupted,
        "rows": rows,
    }
    title = f"Cost per request (W=1, keep-alive GET {settings.path}; {settings.requests} - {settings.baseline})"
    report = Report("cost", [table(rows), Text(method(settings, UNSET))], document=document)
    report.parts = [cost_part(testbed.out, testbed.out.name, document, report)]
    export(report, testbed.out, ("json", "markdown", "csv", *options.exports, "html"))
    export(Report("cost", [table(rows, title)]), None, ("terminal",))
    link_latest(testbed.out)
    testbed.console.print(f"results: {testbed.out}")
    if testbed.exit_code is not None:
        return testbed.exit_code
    return 1 if any(r["status"] == "failed" for r in rows) else 0
