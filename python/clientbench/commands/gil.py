"""`clientbench gil`: what holding the GIL during I/O does to W Python threads.

Runs the two bindings with the GIL held and released (and each client library natively, C++ Beast and
Rust reqwest with threads, for scale) in phases, one loop over a list of them (`phases`): serially (1 worker
doing all W x N requests: the cost of one request with no contention), with W workers (and each binding's
AsyncClient, on asyncio and uvloop, W tasks on one event loop), with W workers at a round trip through
toxiproxy (and the reqwest binding, natively, held and released, over HTTP/3 through the UDP relay at the same
round trip: QUIC's side of the GIL story), with one client shared by the W threads (HTTP/1.1 and HTTP/2),
then the bindings on a ladder of open-loop rates. Writes gil.md: the tables, the timelines, and a reading whose
every statement is computed from the figures of this run (analysis/gil.py, report/gil.py)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import arguments
from ..dimensions import LADDER
from ..environment.interpreters import Interpreter
from ..options import Options, check_together
from ..options.rows import RowFlags, select
from ..options.rows import interpreters as interpreters_of
from ..options.values import non_negative, non_negative_seconds
from ..options.workload import rate_points
from ..workload import Workload

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from ..execution.testbed import Testbed
    from ..model import Row
    from ..network import Network
    from ..registry.spec import ClientSpec
    from ..report import Figure
    from . import Command


def add_parser(sub: Subparsers, command: Command) -> None:
    p = sub.add_parser(
        command.name,
        help=command.help,
        description="Run both bindings with the GIL held and released (and their libraries natively: "
        "C++ Beast, Rust reqwest sync) serially (1 worker x W*N requests), with W workers, and with W "
        "workers at --rtt through toxiproxy (and the reqwest rows over HTTP/3 at --rtt through the UDP relay); "
        "every Python row also under each interpreter `make "
        "freethreaded` built (or --interpreters). Writes gil.md with a reading generated from the "
        "figures, the tables and the request timeline plots.",
    )
    arguments.add_workload_options(p)
    arguments.add_interpreter_options(p.add_argument_group("interpreters"))
    arguments.add_rate_sweep_options(p, "open-loop phase")
    p.add_argument(
        "--open-loop-duration",
        dest="open_loop_duration_s",
        type=non_negative_seconds,
        default=2.0,
        metavar="SECONDS",
        help="the open-loop phase: each rate's schedule lasts this long (default 2; 0: skip the phase)",
    )
    p.add_argument(
        "--shared-client",
        dest="shared_phase",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the shared-client phase: the bindings' held and released rows with one client for all W threads, "
        "over an HTTP/1.1 pool and (the reqwest binding) over HTTP/2 (default: on, but not with --connection new; "
        "--no-shared-client skips it)",
    )
    p.add_argument(
        "--rtt",
        type=non_negative,
        default=1,
        metavar="MS",
        help="also run the W-worker phase at this round trip through toxiproxy, and the reqwest rows over "
        "HTTP/3 at it through the UDP relay (an HTTPS server is started for them without --tls; not over a plain "
        "http --target) (default 1 ms; 0: skip; not with --network, which puts the whole report on that network)",
    )
    arguments.add_session_options(p)


@dataclass(frozen=True)
class GilOptions:
    workload: Workload
    options: Options
    argv: tuple[str, ...]
    rtt_ms: int = 1
    interpreters: tuple[Interpreter | None, ...] = ()  # none given: the runner's and those `make freethreaded` built
    open_loop_s: float = 2.0
    ladder: tuple[float, ...] = LADDER  # the open-loop phase's rates (--rates, checked)
    every_rate: bool = False  # --rates given: every rate is climbed, else a binding leaves once both rows saturate
    slo_ms: float = 10.0
    shared_phase: bool = True


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> GilOptions:
    wl, options = arguments.workload(args, own_rates=True), arguments.testbed(args)
    check_together(wl, options)
    interpreters = interpreters_of(arguments.rows(args))
    ladder = rate_points(args.rates, wl)
    return GilOptions(
        wl,
        options,
        tuple(argv),
        rtt_ms=args.rtt,
        interpreters=tuple(interpreters),
        open_loop_s=args.open_loop_duration_s,
        ladder=tuple(ladder),
        every_rate=args.rates is not None,
        slo_ms=args.slo_ms,
        shared_phase=args.shared_phase,
    )


def run(o: GilOptions) -> int:
    return gil_report(
        o.workload,
        o.options,
        o.argv,
        rtt_ms=o.rtt_ms,
        interpreters=o.interpreters,
        open_loop_s=o.open_loop_s,
        ladder=o.ladder,
        every_rate=o.every_rate,
        slo_ms=o.slo_ms,
        shared_phase=o.shared_phase,
    )


@functools.cache
def phase_rows() -> dict[str, list[str]]:
    """The rows of each phase, by name, from the bindings the reading compares (analysis/gil.py): per binding the
    same client library used natively, then the binding with the GIL held and released (`gil`: the serial, W-worker
    and round-trip phases); each binding's AsyncClient on asyncio and on uvloop (`async`: the W-worker phase adds
    them, W tasks on one event loop); each binding held and released (`open-loop`, climbing the rate ladder
    together, and `shared`, one client for all threads over HTTP/1.1); the reqwest binding's rows again over HTTP/2
    (`shared-h2`: Beast has none); the bindings whose library speaks HTTP/3, natively, held and released
    (`rtt-h3`)."""
    from ..analysis.gil import ASYNC_ROWS, BINDINGS, H3_BINDINGS

    held_released = [name for _, held, released, _ in BINDINGS for name in (held, released)]
    return {
        "gil": [name for _, held, released, native in BINDINGS for name in (native, held, released)],
        "async": [name for _, _, on_asyncio, on_uvloop in ASYNC_ROWS for name in (on_asyncio, on_uvloop)],
        "open-loop": held_released,
        "shared": held_released,
        "shared-h2": [name for lib, held, released, _ in BINDINGS if lib == "reqwest" for name in (held, released)],
        "rtt-h3": [n for lib, held, rel, native in BINDINGS if lib in H3_BINDINGS for n in (native, held, rel)],
    }


def shipped(names: Sequence[str]) -> list[ClientSpec]:
    """These shipped rows, in table order."""
    from ..registry.shipped import CLIENTS

    return select(RowFlags(tuple(names)), CLIENTS)


@dataclass
class Phase:
    """One phase of the report: its rows with one workload, in a folder of its own (`key`; "" for the report's
    own, the W-worker phase), through a network of its own when it has one."""

    key: str
    heading: str  # what the terminal says when it starts
    specs: list[ClientSpec]
    workload: Workload
    network: Network | None = None  # a proxy of its own with this network (the round-trip phase)
    #: what the phase's folder gets besides its tables: (rows, results) -> the Report to export with "plots"
    figures: Callable[[list[Row]], list[Figure]] = field(default=lambda rows: [])
    #: the phase needs HTTPS (HTTP/3): without --tls the report starts a second server, with it, for this phase
    tls: bool = False

    @property
    def name(self) -> str:
        return self.key or "parallel"


def measure_pauses(testbed: Testbed, interpreters: Sequence[Interpreter | None]) -> dict[str, dict[str, Any]]:
    """gc_pause (probes/gc_pause.py) under every free-threaded interpreter, against /delay/300."""
    from ..execution.children import child_preexec

    out: dict[str, dict[str, Any]] = {}
    endpoint = testbed.server_endpoint
    url = endpoint.url + "/delay/300"
    for interp in interpreters:
        if interp is None or not interp.label.endswith("t"):
            continue
        cmd = [interp.executable, "-m", "clientbench.probes.gc_pause", "--url", url, *endpoint.driver_flags()]
        try:
            done = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, **interp.env()},
                preexec_fn=child_preexec,
            )
            if done.returncode == 0:
                out[interp.label] = json.loads(done.stdout.strip().splitlines()[-1])
            else:
                testbed.console.print(f"gc pause probe on {interp.label} failed: {done.stderr.strip()[-200:]}")
        except (subprocess.TimeoutExpired, ValueError, IndexError) as exc:
            testbed.console.print(f"gc pause probe on {interp.label} failed: {exc}")
    return out


def measure_progress(testbed: Testbed, workload: Workload) -> dict[str, Any]:
    """progress (probes/progress.py) under the runner's Python: a Python thread that sleeps 1 ms in a loop beside
    W workers making `GET` requests through each binding, GIL held and released, 0.5 s per case and repeat; {} when
    the workload is not a plain keep-alive HTTP/1.1 GET (the probe sends nothing else) or the probe failed (said on
    the terminal)."""
    import sys

    from ..execution.children import child_preexec

    if workload.method != "GET" or workload.connection == "new" or workload.http != "1.1" or workload.targets:
        return {}
    endpoint = testbed.server_endpoint
    cmd = [
        sys.executable, "-m", "clientbench.probes.progress", "--url", endpoint.url + workload.path,
        "--workers", str(workload.workers), "--seconds", "0.5", "--repeat", str(workload.repeat),
        *endpoint.driver_flags(),
    ]  # fmt: skip
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, preexec_fn=child_preexec)
        if done.returncode == 0:
            return dict(json.loads(done.stdout.strip().splitlines()[-1]))
        testbed.console.print(f"progress probe failed: {done.stderr.strip()[-300:]}")
    except (subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        testbed.console.print(f"progress probe failed: {exc}")
    return {}


def phases(
    workload: Workload,
    options: Options,
    interpreters: Sequence[Interpreter | None],
    rtt_ms: int,
    shared_phase: bool,
) -> list[Phase]:
    """The report's phases, in the order they run. The round-trip phase runs unless --rtt 0 or the whole report
    is on a --network; the shared-client phases unless --no-shared-client or the whole report already shares."""
    from ..network import Network
    from ..registry.spec import under
    from ..report import Figure
    from ..report.gil import RTT_TIMELINE

    rows = phase_rows()
    specs = under(shipped(rows["gil"]), interpreters)
    subtitle = f"W={workload.workers}, N={workload.requests}"
    # the same total work as the parallel phase, in one worker: 100 requests alone last a few ms, too short
    # to measure (on 2 cores the native row would come out slower than its own binding)
    serial = workload.replace(workers=1, requests=workload.requests * workload.workers)
    out = [
        Phase("serial", f"[bold]serial baseline[/]: 1 worker x {serial.requests} requests", specs, serial),
        Phase(
            "",
            f"[bold]{workload.workers} workers[/] x {workload.requests} requests",
            # the async rows under the runner's Python only: their reading compares CPU per request, not the GIL
            specs + under(shipped(rows["async"]), interpreters[:1]),
            workload,
        ),
    ]
    if rtt_ms > 0 and options.network is None:
        out.append(
            Phase(
                "rtt",
                f"[bold]{workload.workers} workers at rtt {rtt_ms} ms[/] (toxiproxy)",
                specs,
                workload,
                Network(rtt_ms=rtt_ms),
                lambda rows: [
                    Figure(
                        "timeline",
                        RTT_TIMELINE,
                        f"Requests per worker over time at rtt {rtt_ms} ms ({subtitle})",
                        [r for r in rows if r.client.gil] or rows,
                    )
                ],
            )
        )
    # QUIC needs TLS: over a plain --target there is no HTTPS server to ask (one started here gets --tls for it)
    h3_reachable = options.target is None or options.target.startswith("https://")
    if rtt_ms > 0 and options.network is None and workload.http != "3" and h3_reachable:
        out.append(
            Phase(
                "rtt-h3",
                f"[bold]{workload.workers} workers at rtt {rtt_ms} ms over HTTP/3[/] (the UDP relay)",
                under(shipped(rows["rtt-h3"]), interpreters[:1]),
                workload.replace(http="3"),
                Network(rtt_ms=rtt_ms),
                tls=True,
            )
        )
    # a shared client is made once, so it has no --connection new: that run has no shared-client phase
    if shared_phase and workload.client_scope == "per-worker" and workload.connection != "new":
        shared = workload.replace(client_scope="shared")
        for key, http in (("shared", "1.1"), ("shared-h2", "2")):
            out.append(
                Phase(
                    key,
                    f"[bold]{workload.workers} workers, one shared client[/] (HTTP/{http})",
                    under(shipped(rows[key]), interpreters[:1]),
                    shared.replace(http=http),
                )
            )
    return out


def gil_report(
    workload: Workload,
    options: Options,
    argv: Sequence[str],
    rtt_ms: int = 1,
    interpreters: Sequence[Interpreter | None] = (),
    open_loop_s: float = 2.0,
    ladder: Sequence[float] = LADDER,
    every_rate: bool = False,
    slo_ms: float = 10.0,
    shared_phase: bool = True,
) -> int:
    """open_loop_s > 0 adds the open-loop phase: both bindings, GIL held and released, on a ladder of rates
    (`ladder`: every one with `every_rate`, else a binding leaves once both its rows saturate), each rate's schedule
    lasting open_loop_s, once."""
    from ..analysis.gil import BINDINGS, GilFigures, open_loop_reading, readings
    from ..environment.interpreters import known
    from ..execution.ladder import RATE, climb
    from ..execution.points import PointLog
    from ..execution.testbed import Endpoint, Testbed, link_latest
    from ..model import Results, SweepPoint
    from ..report import Report
    from ..report import rates as rate_report
    from ..report.export import FILES, export
    from ..report.gil import document, gil_index
    from ..report.parts import gil_part, sweep_part
    from ..report.sweep import index
    from ..report.table import run_table
    from .output import exit_status, show, write_run

    open_wl = workload.replace(duration_s=open_loop_s, repeat=1) if open_loop_s > 0 else None
    # the interpreters `make freethreaded` built join by default: the report's free-threaded section
    interpreters = list(interpreters) or [None, *(Interpreter(k, v) for k, v in known().items())]
    plan = phases(workload, options, interpreters, rtt_ms, shared_phase)
    by_key = {p.key: p for p in plan}
    testbed = Testbed(options, argv, kind="gil", http=(workload.http,))
    out = testbed.out
    subtitle = f"W={workload.workers}, N={workload.requests}"

    written: dict[str, Results] = {}  # each phase's results document, as written
    endpoints: dict[str, Endpoint] = {}  # where each phase that has its own went (a proxy, an HTTPS server)
    https: Endpoint | None = None  # the HTTPS server started for the phases that need one, without --tls
    rate_results: dict[float, Results] = {}

    def write_phase(key: str, rows: list[Row]) -> None:
        phase = by_key[key]
        endpoint = endpoints.get(key)
        results = written[key] = testbed.results(phase.workload, rows, phase.network, endpoint, phase=phase.name)
        if key == "":  # the report's own folder: the run's files, plots and timeline of the GIL rows
            write_run(rows, results, out, subtitle, [r for r in rows if r.client.gil] or rows, html=False)
            return
        figures = phase.figures(rows)
        formats = (*FILES, "plots") if figures else FILES
        export(Report("table", [run_table(rows)], results=results, figures=figures), out / key, formats)

    def write_rate(rate: float, rows: list[Row]) -> None:
        assert open_wl is not None
        wl = open_wl.replace(rate=rate)
        results = rate_results[rate] = testbed.results(wl, rows, phase="open-loop", sweep=SweepPoint("rate", rate))
        folder = out / "open-loop" / "points" / RATE.folder(rate)
        export(Report("table", [run_table(rows)], results=results), folder, FILES)

    done: PointLog[str] = PointLog(write_phase)
    open_points: PointLog[float] = PointLog(write_rate)
    pauses: dict[str, dict[str, Any]] = {}
    progress: dict[str, Any] = {}
    started = False
    try:
        with testbed:
            started = True
            for phase in plan:  # their files are written at the end, each recording whether the report completed
                testbed.console.print(phase.heading)
                (out / phase.key).mkdir(exist_ok=True)
                endpoint = testbed.server_endpoint
                if phase.tls and endpoint.scheme != "https":
                    https = https or testbed.start_server(tls=True)
                    endpoint = https
                if phase.network is not None:
                    endpoint = testbed.via(phase.network, endpoint)
                if endpoint is not testbed.server_endpoint:
                    endpoints[phase.key] = endpoint
                testbed.run_rows(
                    phase.specs, phase.workload, out / phase.key, done.start(phase.key), endpoints.get(phase.key)
                )
            if open_wl is not None:
                testbed.console.print(f"[bold]open loop[/]: the bindings at rising rates, {open_loop_s:g} s each")
                climb(
                    testbed,
                    shipped(phase_rows()["open-loop"]),
                    open_wl,
                    ladder,
                    out / "open-loop",
                    open_points,
                    every_rate=every_rate,
                    groups=[(held, released) for _, held, released, _ in BINDINGS],
                )
            pauses = measure_pauses(testbed, interpreters) if len(interpreters) > 1 else {}
            testbed.console.print("[bold]a Python thread beside the calls[/]: the bindings held and released")
            progress = measure_progress(testbed, workload)
    finally:
        if started:
            if not any(key == "" for key, _ in done.measured):  # the report's folder always has its results.json
                done.start("")
            done.finish()
            open_points.finish()
    open_part = []
    if open_wl is not None and open_points.measured:
        ladder_report = rate_report.summary(open_points.measured, slo_ms, open_wl, every_rate=every_rate)
        measured = [rate for rate, _ in open_points.measured]
        ladder_report.document = index("rate", measured, open_wl.repeat, slo_ms, every_rate)
        export(ladder_report, out / "open-loop", ("json", "markdown", "plots"))
        points = [(rate, rate_results[rate]) for rate in measured]
        open_part = [sweep_part(out / "open-loop", f"{out.name}/open-loop", "rate", points, ladder_report)]
    rtt, rtt_h3 = by_key.get("rtt"), by_key.get("rtt-h3")
    figures = GilFigures(
        workload=workload,
        serial_requests=by_key["serial"].workload.requests,
        serial=done.rows("serial"),
        parallel=done.rows(""),
        network=options.network.describe() if options.network else "loopback",
        command=" ".join(testbed.argv),
        rtt_ms=rtt_ms,
        rtt_network=rtt.network.describe() if rtt is not None and rtt.network is not None else None,
        at_rtt=done.rows("rtt"),
        rtt_h3_network=rtt_h3.network.describe(quic=True) if rtt_h3 and rtt_h3.network else None,
        at_rtt_h3=done.rows("rtt-h3"),
        interpreters=[i.label if i else None for i in interpreters],
        pauses=pauses,
        progress=progress,
        open_points=open_points.measured,
        open_workload=open_wl,
        slo_ms=slo_ms,
        shared=done.rows("shared"),
        shared_h2=done.rows("shared-h2"),
    )
    report = document(figures)
    report.document = gil_index(figures)
    report.parts = [gil_part(out, out.name, report, written, figures), *open_part]
    export(report, out, ("json", "markdown", "html"))
    link_latest(out)
    show(figures.serial, f"serial baseline: 1 worker x {figures.serial_requests} requests")
    show(figures.parallel, f"{workload.workers} workers")
    if figures.rtt_network is not None:
        show(figures.at_rtt, f"{workload.workers} workers at rtt {rtt_ms} ms")
    if figures.rtt_h3_network is not None:
        show(figures.at_rtt_h3, f"{workload.workers} workers at rtt {rtt_ms} ms over HTTP/3")
    testbed.console.print("\n".join(line for part in readings(figures) for line in part), markup=False)
    if open_points.measured:
        testbed.console.print("\n".join(open_loop_reading(open_points.measured, slo_ms)), markup=False)
    testbed.console.print(f"report: {out / 'gil.md'}")
    rows = [r for _, phase_rows in done.measured for r in phase_rows]
    return exit_status(testbed, rows + [r for _, rate_rows in open_points.measured for r in rate_rows])
