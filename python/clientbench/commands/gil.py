"""`clientbench gil`: what holding the GIL during I/O does to W Python threads.

Runs the two bindings with the GIL held and released (and each client library natively, C++ Beast and
Rust reqwest with threads, for scale), first serially (1 worker doing all W x N requests: the cost of one
request with no contention), then with W workers. Writes gil.md: the two tables, the timeline plot, and a
reading whose every statement is computed from the figures of this run."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from typing import Any

from ..model import Row
from ..report import Block, Figure, Heading, Image, Report, Text, export
from ..report.table import run_table
from ..run.clients import select, under
from ..run.interpreters import Interpreter, known
from ..run.network import Network
from ..run.server import child_preexec
from ..run.testbed import Options, Testbed, link_latest
from ..stats import Aggregate
from ..workload import Workload
from .output import exit_status, show, write_run

GIL_CLIENTS = [
    "cpp-beast",
    "py-beast-held",
    "py-beast-released",
    "rust-reqwest-sync",
    "py-reqwest-held",
    "py-reqwest-released",
]
#: (library, held row, released row, the native row of the same client library in the same mode)
BINDINGS = (
    ("beast", "py-beast-held", "py-beast-released", "cpp-beast"),
    ("reqwest", "py-reqwest-held", "py-reqwest-released", "rust-reqwest-sync"),
)
#: Bench/LMean above this means the workers did not overlap much (1 = perfectly parallel, W = serial)
SERIAL_THRESHOLD = 2.0


def _agg(rows: Sequence[Row], name: str) -> Aggregate | None:
    row = next((r for r in rows if r.client.name == name), None)
    return None if row is None or row.failed else row.aggregate


def reading(serial: Sequence[Row], parallel: Sequence[Row], workers: int) -> list[str]:
    """Sentences derived from the figures; a figure that is missing yields no sentence about it."""
    out: list[str] = []
    for lib, held_name, released_name, native_name in BINDINGS:
        held, released = _agg(parallel, held_name), _agg(parallel, released_name)
        native = _agg(parallel, native_name)
        serial_held = _agg(serial, held_name)
        if held is None or released is None:
            out.append(f"- **{lib}**: no complete held/released pair in this run (see the table's Status).")
            continue
        h, r = held.median, released.median
        hr, rr = h.bench_over_lmean or 0.0, r.bench_over_lmean or 0.0
        serialized = hr >= SERIAL_THRESHOLD and hr > 1.5 * rr
        parts = [
            f"- **{lib}, GIL held**: Bench {h.bench_ms:.2f} ms vs LMean {h.lmean_ms:.2f} ms "
            f"(Bench/LMean {hr:.2f}; 1 = all {workers} workers overlap, {workers} = one at a time)."
        ]
        parts.append(
            f"**GIL released**: Bench {r.bench_ms:.2f} ms vs LMean {r.lmean_ms:.2f} ms (Bench/LMean {rr:.2f})."
        )
        if serialized:
            parts.append(
                f"Holding the GIL serialized the workers: the group took {h.bench_ms / r.bench_ms:.1f}x "
                f"as long as with the GIL released."
            )
        elif hr > rr:
            parts.append(
                f"Holding the GIL made the group {h.bench_ms / r.bench_ms:.2f}x as long, but "
                f"Bench/LMean {hr:.2f} stays below {SERIAL_THRESHOLD:g}: the workers were not fully "
                f"serialized in this run."
            )
        else:
            parts.append("In this run holding the GIL did not slow the group down.")
        if serial_held is not None and serial_held.median.mean_ms and h.mean_ms:
            ratio = h.mean_ms / serial_held.median.mean_ms
            parts.append(
                f"With the GIL held, the mean request ({h.mean_ms:.3f} ms) is {ratio:.2f}x the serial "
                f"W=1 mean ({serial_held.median.mean_ms:.3f} ms)"
                + (
                    ": each request ran alone, as in a serial loop, which is why the per-request "
                    "figures look fast while the group is slow."
                    if ratio < 1.5
                    else "."
                )
            )
        if native is not None:
            x = r.bench_ms / native.median.bench_ms
            native_label = next(r.client.label for r in parallel if r.client.name == native_name)
            parts.append(
                f"Released, the binding's Bench is {x:.2f}x that of the same client used natively, "
                f"{native_label} ({native.median.bench_ms:.2f} ms)"
                + (": within 1.2x of native code." if x <= 1.2 else ".")
            )
        out.append(" ".join(parts))
    return out


def rtt_reading(rows: Sequence[Row], workers: int, rtt_ms: int) -> list[str]:
    """At a real round trip each request waits on the network: with the GIL held the W workers wait one
    after another (Bench held / released tends to W), released they wait together (tends to 1)."""
    out: list[str] = []
    for lib, held_name, released_name, native_name in BINDINGS:
        held, released, native = _agg(rows, held_name), _agg(rows, released_name), _agg(rows, native_name)
        if held is None or released is None:
            out.append(f"- **{lib}** at rtt {rtt_ms} ms: no complete held/released pair in this run.")
            continue
        ratio = held.median.bench_ms / released.median.bench_ms
        verdict = (
            "the workers waited on the network one after another"
            if ratio >= workers / 2
            else "the workers overlapped only partly"
            if ratio >= 1.5
            else "holding the GIL did not slow the group down"
        )
        line = (
            f"- **{lib}** at rtt {rtt_ms} ms: GIL held Bench {held.median.bench_ms:.1f} ms, released "
            f"{released.median.bench_ms:.1f} ms: held/released = {ratio:.1f}x ({workers}x = fully serialized): "
            f"{verdict}."
        )
        if native is not None:
            line += (
                f" Released vs the native client: {released.median.bench_ms / native.median.bench_ms:.2f}x "
                f"({native.median.bench_ms:.1f} ms)."
            )
        out.append(line)
    return out


def _ratio(rows: Sequence[Row], held_name: str, released_name: str) -> float | None:
    held, released = _agg(rows, held_name), _agg(rows, released_name)
    if held is None or released is None or not released.median.bench_ms:
        return None
    return held.median.bench_ms / released.median.bench_ms


def interpreter_reading(
    parallel: Sequence[Row],
    at_rtt: Sequence[Row],
    interpreters: Sequence[Interpreter | None],
    workers: int,
    rtt_ms: int,
    pauses: dict[str, dict[str, Any]],
) -> list[str]:
    """Held vs released on every interpreter (Bench held / released: W = serialized, 1 = parallel), and the
    stop-the-world pause a held call causes on a free-threaded build. Every sentence from the figures."""
    out: list[str] = []
    for interp in interpreters:
        suffix, label = (f"@{interp.label}", f"Python {interp.label}") if interp else ("", "the runner's Python")
        for lib, held_name, released_name, _ in BINDINGS:
            parts = []
            for phase, rows in (("loopback", parallel), (f"rtt {rtt_ms} ms", at_rtt)):
                r = _ratio(rows, held_name + suffix, released_name + suffix)
                if r is not None:
                    parts.append(f"{r:.1f}x on {phase}")
            if not parts:
                out.append(f"- **{lib} on {label}**: no complete held/released pair in this run.")
                continue
            # judged where the workers wait on the network (the loopback rows are CPU-bound on 2 cores)
            judged = _ratio(at_rtt, held_name + suffix, released_name + suffix)
            if judged is None:
                judged = _ratio(parallel, held_name + suffix, released_name + suffix) or 0.0
            verdict = (
                "holding the GIL serialized the workers"
                if judged >= workers / 2
                else "holding the GIL slowed the group down only partly"
                if judged >= 1.5
                else "holding the GIL no longer serialized anything: the threads waited in parallel either way"
            )
            out.append(
                f"- **{lib} on {label}**: Bench held / released = {', '.join(parts)} "
                f"({workers}x = fully serialized): {verdict}."
            )
        pause = pauses.get(interp.label if interp else "system")
        if pause and pause.get("python", {}).get("free_threaded"):
            out.append(
                f"- **What releasing still buys on {label}**: a `gc.collect()` in another thread took "
                f"{pause['held_ms']:.1f} ms while a 300 ms call held the GIL (stayed attached to the interpreter), "
                f"{pause['released_ms']:.1f} ms while the call had released it, {pause['baseline_ms']:.1f} ms "
                "with no call in flight: a stop-the-world pause waits for every attached thread."
            )
    return out


def measure_pauses(testbed: Testbed, interpreters: Sequence[Interpreter | None]) -> dict[str, dict[str, Any]]:
    """gc_pause (probes/gc_pause.py) under every free-threaded interpreter, against /delay/300."""
    out: dict[str, dict[str, Any]] = {}
    url = testbed.server_endpoint.url + "/delay/300"
    if testbed.server_endpoint.scheme != "http":
        return out  # the probe speaks plain http
    for interp in interpreters:
        if interp is None or not interp.label.endswith("t"):
            continue
        cmd = [interp.executable, "-m", "clientbench.probes.gc_pause", "--url", url]
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
) -> int:
    """rtt_ms > 0 adds the W-worker phase once more through toxiproxy at that round trip (not when the whole
    report already runs through --network)."""
    # the interpreters `make freethreaded` built join by default: the report's free-threaded section
    interpreters = list(interpreters) or [None, *(Interpreter(k, v) for k, v in known().items())]
    specs = under(select(GIL_CLIENTS), interpreters)
    # the same total work as the parallel phase, in one worker: 100 requests alone last a few ms, too short
    # to measure (on 2 cores the native row then came out slower than its own binding)
    serial_wl = workload.replace(workers=1, requests=workload.requests * workload.workers)
    rtt_net = Network(rtt_ms=rtt_ms) if rtt_ms > 0 and options.network is None else None
    testbed = Testbed(options, argv, kind="gil")
    serial: list[Row] = []
    parallel: list[Row] = []
    at_rtt: list[Row] = []
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
        pauses = measure_pauses(testbed, interpreters) if len(interpreters) > 1 else {}
    out = testbed.out
    subtitle = f"W={workload.workers}, N={workload.requests}"
    export(
        Report("table", [run_table(serial)], results=testbed.results(serial_wl, serial, phase="serial")),
        out / "serial",
        ("json", "markdown", "csv"),
    )
    # the timeline shows the GIL rows; every row when none of them ran
    timeline_rows = [r for r in parallel if r.client.gil] or parallel
    write_run(parallel, testbed.results(workload, parallel, phase="parallel"), out, subtitle, timeline_rows)
    text = reading(serial, parallel, workload.workers)
    where = options.network.describe() if options.network else "loopback"
    blocks: list[Block] = [
        Heading("The GIL report"),
        Text(
            [
                f"Workload: {workload.workers} workers x {workload.requests} sequential GET {workload.path}, "
                f"warmup {workload.warmup}, median of {workload.repeat} run(s), network: {where}. "
                f"Generated by `{' '.join(testbed.argv)}`."
            ]
        ),
        Heading("Reading (generated from the figures below)", 2),
        Text(text),
    ]
    rtt_text: list[str] = []
    if rtt_net is not None:
        rtt_text = rtt_reading(at_rtt, workload.workers, rtt_ms)
        blocks += [Heading(f"At a {rtt_ms} ms round trip (generated from the figures below)", 2), Text(rtt_text)]
    ft_text: list[str] = []
    if len(interpreters) > 1:
        ft_text = interpreter_reading(parallel, at_rtt, interpreters, workload.workers, rtt_ms, pauses)
        blocks += [
            Heading("Without the GIL: the free-threaded build (generated from the figures below)", 2),
            Text(
                [
                    "The same rows under each interpreter: "
                    + ", ".join(f"Python {i.label}" if i else "the runner's Python" for i in interpreters)
                    + " (the `make freethreaded` builds come from one CPython source with the same flags; the "
                    "only difference between them is the GIL). The Library column names the interpreter and "
                    "whether the GIL stayed off after the client was imported.",
                    "",
                    *ft_text,
                ]
            ),
        ]
    blocks += [Heading(f"{workload.workers} workers ({where})", 2), run_table(parallel)]
    if rtt_net is not None:
        export(
            Report(
                "table",
                [run_table(at_rtt)],
                results=testbed.results(workload, at_rtt, rtt_net, phase="rtt"),
                figures=[
                    Figure(
                        "timeline",
                        "timeline-rtt.png",
                        f"Requests per worker over time at rtt {rtt_ms} ms ({subtitle})",
                        [r for r in at_rtt if r.client.gil] or at_rtt,
                    )
                ],
            ),
            out / "rtt",
            ("json", "markdown", "csv", "plots"),
        )
        blocks += [
            Heading(f"{workload.workers} workers at rtt {rtt_ms} ms ({rtt_net.describe()})", 2),
            run_table(at_rtt),
        ]
    blocks += [
        Heading(f"Serial baseline (1 worker x {serial_wl.requests} requests)", 2),
        run_table(serial),
        Heading("Timeline", 2),
        Image("timeline", "plots/timeline.png"),
    ]
    if rtt_net is not None:
        blocks += [Heading(f"Timeline at rtt {rtt_ms} ms", 2), Image("timeline at rtt", "rtt/plots/timeline-rtt.png")]
    export(Report("gil", blocks), out, ("markdown",))
    link_latest(out)
    show(serial, f"serial baseline: 1 worker x {serial_wl.requests} requests")
    show(parallel, f"{workload.workers} workers")
    if rtt_net is not None:
        show(at_rtt, f"{workload.workers} workers at rtt {rtt_ms} ms")
    testbed.console.print("\n".join(text + rtt_text + ft_text), markup=False)
    testbed.console.print(f"report: {out / 'gil.md'}")
    return exit_status(testbed, serial + parallel + at_rtt)
