"""`clientbench gil`: what holding the GIL during I/O does to W Python threads.

Runs the two bindings with the GIL held and released (and each client library natively, C++ Beast and
Rust reqwest with threads, for scale), first serially (1 worker doing all W x N requests: the cost of one
request with no contention), then with W workers. Writes gil.md: the two tables, the timeline plot, and a
reading whose every statement is computed from the figures of this run (analysis/gil.py)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from typing import Any

from ..analysis import rates as rate_report
from ..analysis.gil import BINDINGS, RTT_TIMELINE, GilFigures, document, open_loop_reading, readings
from ..environment.interpreters import Interpreter, known
from ..execution.children import child_preexec
from ..execution.ladder import LADDER, climb, parse_rates, point_name
from ..execution.testbed import Testbed, link_latest
from ..model import Row, SweepPoint
from ..network import Network
from ..options import Options
from ..registry.shipped import CLIENTS
from ..registry.spec import select, under
from ..report import FILES, Figure, Report, export
from ..report.table import run_table
from ..workload import Workload
from .output import exit_status, show, write_run

#: per binding: the same client library used natively, then the binding with the GIL held and released
GIL_CLIENTS = [name for _, held, released, native in BINDINGS for name in (native, held, released)]
#: the open-loop phase: each binding held and released, climbing the rate ladder together
OPEN_LOOP_CLIENTS = [name for _, held, released, _ in BINDINGS for name in (held, released)]
#: the shared-client phase: the same rows with one client for all threads (HTTP/1.1); the reqwest binding's
#: rows again over HTTP/2 (Beast has none)
SHARED_CLIENTS = OPEN_LOOP_CLIENTS
SHARED_H2_CLIENTS = [name for lib, held, released, _ in BINDINGS if lib == "reqwest" for name in (held, released)]


def measure_pauses(testbed: Testbed, interpreters: Sequence[Interpreter | None]) -> dict[str, dict[str, Any]]:
    """gc_pause (probes/gc_pause.py) under every free-threaded interpreter, against /delay/300."""
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


def gil_report(
    workload: Workload,
    options: Options,
    argv: Sequence[str],
    rtt_ms: int = 1,
    interpreters: Sequence[Interpreter | None] = (),
    open_loop_s: float = 2.0,
    rates: str | None = None,
    slo_ms: float = 10.0,
    shared_phase: bool = True,
) -> int:
    """rtt_ms > 0 adds the W-worker phase once more through toxiproxy at that round trip (not when the whole
    report already runs through --network). open_loop_s > 0 adds the open-loop phase: both bindings, GIL
    held and released, on a ladder of rates (`rates`, or doubling until both rows of a binding saturate),
    each rate's schedule lasting open_loop_s, once. shared_phase adds the bindings' rows with one client shared by
    the W threads, over an HTTP/1.1 pool and over HTTP/2 (unless the whole report already runs shared)."""
    open_wl = workload.replace(duration_s=open_loop_s, repeat=1) if open_loop_s > 0 else None
    ladder = parse_rates(rates, workload) if rates is not None else list(LADDER)
    # the interpreters `make freethreaded` built join by default: the report's free-threaded section
    interpreters = list(interpreters) or [None, *(Interpreter(k, v) for k, v in known().items())]
    specs = under(select(GIL_CLIENTS, CLIENTS), interpreters)
    # the same total work as the parallel phase, in one worker: 100 requests alone last a few ms, too short
    # to measure (on 2 cores the native row would come out slower than its own binding)
    serial_wl = workload.replace(workers=1, requests=workload.requests * workload.workers)
    rtt_net = Network(rtt_ms=rtt_ms) if rtt_ms > 0 and options.network is None else None
    testbed = Testbed(options, argv, kind="gil")
    serial: list[Row] = []
    parallel: list[Row] = []
    at_rtt: list[Row] = []
    shared: list[Row] = []
    shared_h2: list[Row] = []
    # the shared-client phase, unless the whole report already runs that way
    shared_wl = (
        workload.replace(client_scope="shared") if shared_phase and workload.client_scope == "per-worker" else None
    )
    pauses: dict[str, dict[str, Any]] = {}
    open_points: list[tuple[float, list[Row]]] = []
    open_dir = testbed.out / "open-loop"

    def write_rate(rate: float, wl: Workload, rows: Sequence[Row]) -> None:
        res = testbed.results(wl, rows, phase="open-loop", sweep=SweepPoint("rate", rate))
        export(Report("table", [run_table(rows)], results=res), open_dir / "points" / point_name(rate), FILES)

    with testbed:
        testbed.console.print(f"[bold]serial baseline[/]: 1 worker x {serial_wl.requests} requests")
        (testbed.out / "serial").mkdir()
        testbed.run_rows(specs, serial_wl, testbed.out / "serial", serial)
        testbed.console.print(f"[bold]{workload.workers} workers[/] x {workload.requests} requests")
        testbed.run_rows(specs, workload, testbed.out, parallel)
        if rtt_net is not None:
            testbed.console.print(f"[bold]{workload.workers} workers at rtt {rtt_ms} ms[/] (toxiproxy)")
            (testbed.out / "rtt").mkdir()
            testbed.run_rows(specs, workload, testbed.out / "rtt", at_rtt, testbed.via(rtt_net))
        if shared_wl is not None:
            testbed.console.print(f"[bold]{workload.workers} workers, one shared client[/] (HTTP/1.1, HTTP/2)")
            for wl, rows, name, clients in (
                (shared_wl.replace(http="1.1"), shared, "shared", SHARED_CLIENTS),
                (shared_wl.replace(http="2"), shared_h2, "shared-h2", SHARED_H2_CLIENTS),
            ):
                (testbed.out / name).mkdir()
                testbed.run_rows(under(select(clients, CLIENTS), interpreters[:1]), wl, testbed.out / name, rows)
                export(
                    Report("table", [run_table(rows)], results=testbed.results(wl, rows, phase=name)),
                    testbed.out / name,
                    ("json", "markdown", "csv"),
                )
        if open_wl is not None:
            testbed.console.print(f"[bold]open loop[/]: the bindings at rising rates, {open_loop_s:g} s each")
            climb(
                testbed,
                select(OPEN_LOOP_CLIENTS, CLIENTS),
                open_wl,
                ladder,
                open_dir,
                open_points,
                every_rate=rates is not None,
                groups=[(held, released) for _, held, released, _ in BINDINGS],
                after=write_rate,
            )
        pauses = measure_pauses(testbed, interpreters) if len(interpreters) > 1 else {}
    out = testbed.out
    if open_wl is not None and open_points:
        for rate, rows in open_points:  # an interrupted rate still gets its tables
            if not (open_dir / "points" / point_name(rate) / "results.json").exists():
                write_rate(rate, open_wl.replace(rate=rate), rows)
        export(
            rate_report.summary(open_points, slo_ms, open_wl, every_rate=rates is not None),
            open_dir,
            ("markdown", "plots"),
        )
    subtitle = f"W={workload.workers}, N={workload.requests}"
    export(
        Report("table", [run_table(serial)], results=testbed.results(serial_wl, serial, phase="serial")),
        out / "serial",
        ("json", "markdown", "csv"),
    )
    # the timeline shows the GIL rows; every row when none of them ran
    timeline_rows = [r for r in parallel if r.client.gil] or parallel
    write_run(parallel, testbed.results(workload, parallel, phase="parallel"), out, subtitle, timeline_rows)
    if rtt_net is not None:
        export(
            Report(
                "table",
                [run_table(at_rtt)],
                results=testbed.results(workload, at_rtt, rtt_net, phase="rtt"),
                figures=[
                    Figure(
                        "timeline",
                        RTT_TIMELINE,
                        f"Requests per worker over time at rtt {rtt_ms} ms ({subtitle})",
                        [r for r in at_rtt if r.client.gil] or at_rtt,
                    )
                ],
            ),
            out / "rtt",
            ("json", "markdown", "csv", "plots"),
        )
    figures = GilFigures(
        workload=workload,
        serial_requests=serial_wl.requests,
        serial=serial,
        parallel=parallel,
        network=options.network.describe() if options.network else "loopback",
        command=" ".join(testbed.argv),
        rtt_ms=rtt_ms,
        rtt_network=rtt_net.describe() if rtt_net is not None else None,
        at_rtt=at_rtt,
        interpreters=[i.label if i else None for i in interpreters],
        pauses=pauses,
        open_points=open_points,
        open_workload=open_wl,
        slo_ms=slo_ms,
        shared=shared,
        shared_h2=shared_h2,
    )
    export(document(figures), out, ("markdown", "html"))
    link_latest(out)
    show(serial, f"serial baseline: 1 worker x {serial_wl.requests} requests")
    show(parallel, f"{workload.workers} workers")
    if rtt_net is not None:
        show(at_rtt, f"{workload.workers} workers at rtt {rtt_ms} ms")
    testbed.console.print("\n".join(line for part in readings(figures) for line in part), markup=False)
    if open_points:
        testbed.console.print("\n".join(open_loop_reading(open_points, slo_ms)), markup=False)
    testbed.console.print(f"report: {out / 'gil.md'}")
    return exit_status(
        testbed, serial + parallel + at_rtt + shared + shared_h2 + [r for _, rows in open_points for r in rows]
    )
