"""`clientbench gil`: what holding the GIL during I/O does to W Python threads.

Runs the two bindings with the GIL held and released (and each client library natively, C++ Beast and
Rust reqwest with threads, for scale), first serially
(1 worker doing all W x N requests: the cost of one request with no contention), then with W workers. Writes gil.md: the two tables,
the timeline plot, and a reading whose every statement is computed from the figures of this run."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Sequence

from .cli import workload_from
from .clients import select
from .plots import run_plots, timeline
from .report import markdown_table
from .runner import Row, write_atomic
from .session import Session, link_latest, print_table, write_reports

GIL_CLIENTS = ["cpp-beast", "py-beast-held", "py-beast-released", "rust-reqwest-sync", "py-reqwest-held",
               "py-reqwest-released"]
#: (library, held row, released row, the native row of the same client library in the same mode)
BINDINGS = (("beast", "py-beast-held", "py-beast-released", "cpp-beast"),
            ("reqwest", "py-reqwest-held", "py-reqwest-released", "rust-reqwest-sync"))
#: Bench/LMean above this means the workers did not overlap much (1 = perfectly parallel, W = serial)
SERIAL_THRESHOLD = 2.0


def _agg(rows: Sequence[Row], name: str):  # type: ignore[no-untyped-def]
    row = next((r for r in rows if r.spec.name == name), None)
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
        parts = [f"- **{lib}, GIL held**: Bench {h.bench_ms:.2f} ms vs LMean {h.lmean_ms:.2f} ms "
                 f"(Bench/LMean {hr:.2f}; 1 = all {workers} workers overlap, {workers} = one at a time)."]
        parts.append(f"**GIL released**: Bench {r.bench_ms:.2f} ms vs LMean {r.lmean_ms:.2f} ms "
                     f"(Bench/LMean {rr:.2f}).")
        if serialized:
            parts.append(f"Holding the GIL serialized the workers: the group took {h.bench_ms / r.bench_ms:.1f}x "
                         f"as long as with the GIL released.")
        elif hr > rr:
            parts.append(f"Holding the GIL made the group {h.bench_ms / r.bench_ms:.2f}x as long, but "
                         f"Bench/LMean {hr:.2f} stays below {SERIAL_THRESHOLD:g}: the workers were not fully "
                         f"serialized in this run.")
        else:
            parts.append("In this run holding the GIL did not slow the group down.")
        if serial_held is not None and serial_held.median.mean_ms and h.mean_ms:
            ratio = h.mean_ms / serial_held.median.mean_ms
            parts.append(f"With the GIL held, the mean request ({h.mean_ms:.3f} ms) is {ratio:.2f}x the serial "
                         f"W=1 mean ({serial_held.median.mean_ms:.3f} ms)"
                         + (": each request ran alone, as in a serial loop, which is why the per-request "
                            "figures look fast while the group is slow." if ratio < 1.5 else "."))
        if native is not None:
            x = r.bench_ms / native.median.bench_ms
            native_label = next(r.spec.label for r in parallel if r.spec.name == native_name)
            parts.append(f"Released, the binding's Bench is {x:.2f}x that of the same client used natively, "
                         f"{native_label} ({native.median.bench_ms:.2f} ms)"
                         + (": within 1.2x of native code." if x <= 1.2 else "."))
        out.append(" ".join(parts))
    return out


def gil_report(args: argparse.Namespace, argv: Sequence[str]) -> int:
    specs = select(GIL_CLIENTS)
    workload, repeat = workload_from(args)
    # the same total work as the parallel phase, in one worker: 100 requests alone last a few ms, too short
    # to measure (on 2 cores the native row then came out slower than its own binding)
    serial_wl = dataclasses.replace(workload, workers=1, requests=workload.requests * workload.workers)
    session = Session(args, argv, kind="gil")
    serial: list[Row] = []
    parallel: list[Row] = []
    with session:
        session.console.print(f"[bold]serial baseline[/]: 1 worker x {serial_wl.requests} requests")
        (session.out / "serial").mkdir()
        session.run_rows(specs, serial_wl, repeat, session.out / "serial", serial)
        session.console.print(f"[bold]{workload.workers} workers[/] x {workload.requests} requests")
        session.run_rows(specs, workload, repeat, session.out, parallel)
    out = session.out
    write_reports(serial, session.meta(serial_wl, repeat, phase="serial"), out / "serial")
    write_reports(parallel, session.meta(workload, repeat, phase="parallel"), out)
    plots = run_plots(parallel, out, f"W={workload.workers}, N={workload.requests}",
                      timeline_rows=[r for r in parallel if r.spec.gil])
    if not any(p.name == "timeline.png" for p in plots):
        timeline(parallel, out / "plots" / "timeline.png", "Requests per worker over time")
    text = reading(serial, parallel, workload.workers)
    doc = "\n".join([
        "# The GIL report", "",
        f"Workload: {workload.workers} workers x {workload.requests} sequential GET {workload.path}, "
        f"warmup {workload.warmup}, median of {repeat} run(s). Generated by `{' '.join(session.argv)}`.", "",
        "## Reading (generated from the figures below)", "", *text, "",
        f"## {workload.workers} workers", "", markdown_table(parallel),
        f"## Serial baseline (1 worker x {serial_wl.requests} requests)", "", markdown_table(serial),
        "## Timeline", "", "![timeline](plots/timeline.png)", "",
    ])
    write_atomic(out / "gil.md", doc)
    link_latest(out)
    print_table(serial, f"serial baseline: 1 worker x {serial_wl.requests} requests")
    print_table(parallel, f"{workload.workers} workers")
    session.console.print("\n".join(text), markup=False)
    session.console.print(f"report: {out / 'gil.md'}")
    if session.exit_code is not None:
        return session.exit_code
    return 1 if any(r.failed for r in serial + parallel) else 0
