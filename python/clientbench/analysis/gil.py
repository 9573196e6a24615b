"""The GIL report's document (gil.md) and its reading, every sentence computed from the measured figures.

`commands/gil.py` measures (the serial, W-worker and round-trip phases, the gc pauses) and writes the phases'
files; this module turns what it measured (`GilFigures`) into the report, running nothing, so that the text
can be checked against figures given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model import Row
from ..stats import Aggregate, RowStats
from ..workload import Workload
from . import rates

#: (library, held row, released row, the native row of the same client library in the same mode)
BINDINGS = (
    ("beast", "py-beast-held", "py-beast-released", "cpp-beast"),
    ("reqwest", "py-reqwest-held", "py-reqwest-released", "rust-reqwest-sync"),
)
#: per binding of BINDINGS: its Python module and its AsyncClient's rows, on asyncio's own loop and on uvloop (the
#: W-worker phase runs them beside the sync rows: W tasks on one event loop)
ASYNC_ROWS = (
    ("beast", "beast_client", "py-beast-async", "py-beast-uvloop"),
    ("reqwest", "reqwest_client", "py-reqwest-async", "py-reqwest-uvloop"),
)
#: the bindings whose client library speaks HTTP/3 (reqwest 0.13's h3 over quinn; Beast has HTTP/1.1 only): the
#: round-trip phase runs them again over QUIC, through the UDP relay
H3_BINDINGS = ("reqwest",)
#: Bench/LMean above this means the workers did not overlap much (1 = perfectly parallel, W = serial)
SERIAL_THRESHOLD = 2.0


def _agg(rows: Sequence[Row], name: str) -> Aggregate | None:
    row = next((r for r in rows if r.client.name == name), None)
    return None if row is None or row.failed else row.aggregate


def reading(
    serial: Sequence[Row],
    parallel: Sequence[Row],
    workers: int,
    bindings: Sequence[tuple[str, str, str, str]] = BINDINGS,
) -> list[str]:
    """Sentences derived from the figures, per binding of `bindings` (BINDINGS' form); a figure that is missing
    yields no sentence about it."""
    out: list[str] = []
    for lib, held_name, released_name, native_name in bindings:
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
        if h.gc_per_1k_req is not None and r.gc_per_1k_req is not None:
            parts.append(
                f"The interpreter's garbage collector ran {h.gc_per_1k_req:.2f} times per 1,000 requests with the GIL "
                f"held and {r.gc_per_1k_req:.2f} released (freeing {h.gc_objects_per_1k_req:.0f} and "
                f"{r.gc_objects_per_1k_req:.0f} objects per 1,000 requests)."
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


def _cpu(agg: Aggregate | None) -> float | None:
    return None if agg is None else agg.median.cpu_us_per_req


def async_reading(rows: Sequence[Row], workers: int) -> list[str]:
    """The bindings' AsyncClients in the W-worker phase: per binding, Bench and CPU per request on asyncio and on
    uvloop, each CPU figure against the native row's and the GIL-released sync row's; then the AsyncClients
    against each other. A binding none of whose async rows ran here (an older folder) gets no sentence; a row that
    failed, was unsupported or is not installed is named with its status."""
    out: list[str] = []
    compared: list[tuple[str, float, str]] = []  # (module, asyncio CPU per request, its ratio to native)
    names = {lib: (released, native) for lib, _, released, native in BINDINGS}
    for lib, module, async_name, uvloop_name in ASYNC_ROWS:
        released_name, native_name = names[lib]
        present = {r.client.name: r for r in rows if r.client.name in (async_name, uvloop_name)}
        if not present:
            continue
        native, released = _agg(rows, native_name), _agg(rows, released_name)
        native_cpu, released_cpu = _cpu(native), _cpu(released)
        native_label = next((r.client.label for r in rows if r.client.name == native_name), native_name)
        head = f"- **{lib}, asyncio** ({module}'s AsyncClient, {workers} tasks on one event loop): "
        parts = []
        for loop, name in (("asyncio", async_name), ("uvloop", uvloop_name)):
            row = present.get(name)
            agg = None if row is None else _agg([row], name)
            if row is None:
                parts.append(f"on {loop} `{name}` did not run")
            elif agg is None:
                parts.append(f"on {loop} `{name}` has no figures ({row.reason or row.status})")
            elif (cpu := agg.median.cpu_us_per_req) is None:
                parts.append(f"on {loop} Bench {agg.median.bench_ms:.2f} ms, its CPU not measured")
            else:
                against = [
                    f"{cpu / of:.2f}x {what}'s {of:.1f} us"
                    for what, of in ((native_label, native_cpu), ("the GIL-released sync binding", released_cpu))
                    if of
                ]
                parts.append(
                    f"on {loop} Bench {agg.median.bench_ms:.2f} ms, {cpu:.1f} us CPU per request"
                    + (f" ({', '.join(against)})" if against else "")
                )
                if loop == "asyncio":
                    compared.append((module, cpu, f", {cpu / native_cpu:.2f}x {native_label}'s" if native_cpu else ""))
        out.append(head + "; ".join(parts) + ".")
    if len(compared) > 1:
        (first, cpu, _), *others = compared
        out.append(
            "- **The AsyncClients side by side** (asyncio, CPU per request): "
            + "; ".join(f"{module}'s AsyncClient {c:.1f} us{vs}" for module, c, vs in compared)
            + "."
            + "".join(f" {first}'s costs {cpu / c:.2f}x {module}'s." for module, c, _ in others if c)
        )
    return out


def rtt_reading(rows: Sequence[Row], workers: int, rtt_ms: int, over: str = "") -> list[str]:
    """At a real round trip each request waits on the network: with the GIL held the W workers wait one
    after another (Bench held / released tends to W), released they wait together (tends to 1). `over`
    (e.g. "HTTP/3") names the protocol of a phase that ran only the bindings of H3_BINDINGS."""
    out: list[str] = []
    where = f"at rtt {rtt_ms} ms" + (f" over {over}" if over else "")
    for lib, held_name, released_name, native_name in BINDINGS:
        if over and lib not in H3_BINDINGS:
            continue
        held, released, native = _agg(rows, held_name), _agg(rows, released_name), _agg(rows, native_name)
        if held is None or released is None:
            out.append(f"- **{lib}** {where}: no complete held/released pair in this run.")
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
            f"- **{lib}** {where}: GIL held Bench {held.median.bench_ms:.1f} ms, released "
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


def shared_reading(rows: Sequence[Row], workers: int, over: str) -> list[str]:
    """W threads over one shared client: whether they overlapped (Bench/LMean near 1) with the GIL released
    and queued (near W) with it held; a row that could not run this way says why."""
    out: list[str] = []
    for lib, held_name, released_name, _ in BINDINGS:
        pair = [next((r for r in rows if r.client.name == n), None) for n in (held_name, released_name)]
        if all(r is None for r in pair):
            continue
        parts = [f"- **{lib}, one client shared by {workers} threads over {over}**:"]
        for gil, row in zip(("held", "released"), pair, strict=True):
            if row is None:
                continue
            agg = row.aggregate
            if row.unsupported or agg is None:
                parts.append(f"GIL {gil}: {row.reason or row.status}.")
                continue
            m = agg.median
            ratio = m.bench_over_lmean or 0.0
            verdict = (
                "the threads overlapped"
                if ratio < 1.5
                else "they ran one at a time"
                if ratio >= SERIAL_THRESHOLD
                else "they overlapped only partly"
            )
            protocol = (row.info or {}).get("protocol") or "the protocol not reported"
            counts = [r.server_counts["connections"] for r in row.runs if r.server_counts]
            conns = f", {max(counts)} connection(s) at most per run" if counts else ""
            errors = f", {m.errors} of {m.requests} requests failed" if m.errors else ""
            parts.append(
                f"GIL {gil}: Bench {m.bench_ms:.2f} ms vs LMean {m.lmean_ms:.2f} ms (Bench/LMean {ratio:.2f}): "
                f"{verdict} ({protocol}{conns}{errors})."
            )
        out.append(" ".join(parts))
    return out


def _ratio(rows: Sequence[Row], held_name: str, released_name: str) -> float | None:
    held, released = _agg(rows, held_name), _agg(rows, released_name)
    if held is None or released is None or not released.median.bench_ms:
        return None
    return held.median.bench_ms / released.median.bench_ms


def interpreter_reading(
    parallel: Sequence[Row],
    at_rtt: Sequence[Row],
    interpreters: Sequence[str | None],
    workers: int,
    rtt_ms: int,
    pauses: Mapping[str, Mapping[str, Any]],
) -> list[str]:
    """Held vs released on every interpreter (Bench held / released: W = serialized, 1 = parallel), and the
    stop-the-world pause a held call causes on a free-threaded build. Every sentence from the figures."""
    out: list[str] = []
    for interp in interpreters:
        suffix, label = (f"@{interp}", f"Python {interp}") if interp else ("", "the runner's Python")
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
        pause = pauses.get(interp or "system")
        if pause and pause.get("python", {}).get("free_threaded"):
            out.append(
                f"- **What releasing still buys on {label}**: a `gc.collect()` in another thread took "
                f"{pause['held_ms']:.1f} ms while a 300 ms call held the GIL (stayed attached to the interpreter), "
                f"{pause['released_ms']:.1f} ms while the call had released it, {pause['baseline_ms']:.1f} ms "
                "with no call in flight: a stop-the-world pause waits for every attached thread."
            )
    return out


#: the open-loop reading compares the bindings' P99 at a rate the released binding sustains easily: at most this
#: share of its highest sustained rate
EASY = 0.5


def _rps(value: float) -> str:
    return f"{value:,.0f}"


def _p99(s: RowStats | None) -> str:
    if s is None or s.p99_ms is None:
        return "failed"
    sat = f", saturated: achieved {_rps(s.throughput_rps)} requests/s" if s.saturated else ""
    return f"{s.p99_ms:.2f} ms{sat}"


def open_loop_reading(points: rates.Points, slo_ms: float) -> list[str]:
    """Per binding: the highest rate sustained with the GIL held and released, and both P99s at the highest
    rate tried within EASY of what the released binding sustains. Every figure from `points`."""
    out: list[str] = []
    for lib, held_name, released_name, _ in BINDINGS:
        held, released = rates.sustained(points, held_name, slo_ms), rates.sustained(points, released_name, slo_ms)
        if held.lowest is None or released.lowest is None:
            out.append(f"- **{lib}, open loop**: the held and released rows did not both run.")
            continue

        def says(s: rates.Sustained) -> str:
            return "none of the rates tried" if s.rate is None else f"{_rps(s.rate)} requests/s"

        line = (
            f"- **{lib}, open loop** (P99 within {slo_ms:g} ms, achieved >= 99% of offered): with the GIL released "
            f"the binding sustains {says(released)}, with it held {says(held)}"
        )
        if released.rate is not None and held.rate is not None:
            line += f" ({released.rate / held.rate:.1f}x as much released)."
        elif released.rate is not None:
            line += "."
        else:
            out.append(line + ": no rate that the released binding sustains to compare them at.")
            continue
        easy = [rate for rate, _ in points if rate <= EASY * released.rate]
        both = [
            (rate, rel, hld)
            for rate in easy
            if (rel := _at(points, released_name, rate)) is not None
            and (hld := _at(points, held_name, rate)) is not None
        ]
        if not both:
            out.append(line + f" No rate at or below {EASY:.0%} of that was tried for both.")
            continue
        rate, rel_row, held_row = both[-1]
        rel_s, held_s = rates.row_stats(rel_row), rates.row_stats(held_row)
        line += (
            f" At {_rps(rate)} requests/s (within {EASY:.0%} of what the released binding sustains) the corrected P99 "
            f"is {_p99(rel_s)} released and {_p99(held_s)} held"
        )
        if rel_s is not None and held_s is not None and rel_s.p99_ms and held_s.p99_ms is not None:
            line += f": {held_s.p99_ms / rel_s.p99_ms:.1f}x with the GIL held."
        else:
            line += "."
        out.append(line)
    return out


def _at(points: rates.Points, name: str, rate: float) -> Row | None:
    return next((r for p, rows in points if p == rate for r in rows if r.client.name == name), None)


def progress_reading(progress: Mapping[str, Any]) -> list[str]:
    """Per binding, how a Python thread that sleeps 1 ms in a loop fared beside the W workers (probes/progress.py),
    GIL held and released, against itself alone; nothing when the probe did not run."""
    out: list[str] = []
    workers = progress.get("workers")
    for lib, _, _, _ in BINDINGS:
        p = progress.get(lib)
        if not p or workers is None:
            continue
        alone, held, released = p["alone"], p["held"], p["released"]
        base = alone["beats_per_s"] or 1.0
        line = (
            f"- **{lib}, a Python thread beside the calls**: a thread that sleeps 1 ms in a loop woke late by a "
            f"median of {held['late_p50_ms']:.2f} ms (P99 {held['late_p99_ms']:.2f} ms) beside the {workers} workers' "
            f"calls with the GIL held, {released['late_p50_ms']:.2f} ms (P99 {released['late_p99_ms']:.2f} ms) with "
            f"it released and {alone['late_p50_ms']:.2f} ms alone, and made {held['beats_per_s'] / base:.0%} and "
            f"{released['beats_per_s'] / base:.0%} of the beats it makes alone, while the workers made "
            f"{held['requests_per_s']:,.0f} and {released['requests_per_s']:,.0f} requests/s"
        )
        kept_out = (
            held["late_p50_ms"] >= 2 * released["late_p50_ms"] and held["beats_per_s"] <= 0.5 * released["beats_per_s"]
        )
        if kept_out:
            line += (
                ". Holding the GIL kept the rest of the program waiting for the interpreter's switch interval, "
                "however fast the machine answered."
            )
        else:
            line += ": in this run holding the GIL did not keep it waiting."
        out.append(line)
    return out


@dataclass(frozen=True)
class GilFigures:
    """What `clientbench gil` measured, as the report needs it."""

    workload: Workload  # of the W-worker phases
    serial_requests: int  # what the serial phase's one worker sent
    serial: Sequence[Row]
    parallel: Sequence[Row]
    network: str  # where every phase ran: "loopback", or the --network description
    command: str  # the command line that generated the report
    rtt_ms: int = 0
    rtt_network: str | None = None  # the round-trip phase's network; None: that phase did not run
    at_rtt: Sequence[Row] = ()
    #: the round-trip phase over HTTP/3 (the H3_BINDINGS' held and released rows and their native row, through
    #: the UDP relay with the same round trip); None: that phase did not run
    rtt_h3_network: str | None = None
    at_rtt_h3: Sequence[Row] = ()
    #: the interpreters of the Python rows (labels; None: the runner's own); with more than one, the report
    #: compares them (the free-threaded section)
    interpreters: Sequence[str | None] = (None,)
    #: gc_pause's line (probes/gc_pause.py) per free-threaded interpreter's label
    pauses: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: probes/progress.py's line: a Python thread beside the bindings' calls, held and released ({}: not run)
    progress: Mapping[str, Any] = field(default_factory=dict)
    #: the open-loop phase: (rate, rows) of the bindings' rate ladder; empty: the phase did not run
    open_points: rates.Points = ()
    open_workload: Workload | None = None  # the ladder's workload (its rate is each point's)
    slo_ms: float = 10.0
    #: the bindings' held and released rows with one client shared by the W threads: over an HTTP/1.1 pool,
    #: and (the reqwest binding) over HTTP/2; empty: the phase did not run
    shared: Sequence[Row] = ()
    shared_h2: Sequence[Row] = ()

    @property
    def compares_interpreters(self) -> bool:
        return len(self.interpreters) > 1


def readings(f: GilFigures) -> tuple[list[str], list[str], list[str]]:
    """The reading of the W-worker phase (its sync rows, then its asyncio rows), of the round-trip phase and of
    the interpreters (each may be empty)."""
    workers = f.workload.workers
    at_rtt = rtt_reading(f.at_rtt, workers, f.rtt_ms) if f.rtt_network is not None else []
    if f.rtt_h3_network is not None:
        at_rtt += rtt_reading(f.at_rtt_h3, workers, f.rtt_ms, "HTTP/3")
    interpreters = (
        interpreter_reading(f.parallel, f.at_rtt, f.interpreters, workers, f.rtt_ms, f.pauses)
        if f.compares_interpreters
        else []
    )
    parallel = reading(f.serial, f.parallel, workers) + progress_reading(f.progress)
    return parallel + async_reading(f.parallel, workers), at_rtt, interpreters
