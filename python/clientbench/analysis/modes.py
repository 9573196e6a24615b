"""A run's rows by how they run (their mode), and the reading of a run: per mode, the fastest row, the slowest and
the one that spends the least client CPU per request, against the fastest native row; then the GIL reading of the
bindings whose held and released rows both ran. Every sentence is computed from the figures given.

A row's mode: a native client (C++, Rust), the raw-socket floor, a row pinned to one worker (W=1: another
workload, not compared), or a Python client as W threads (`sync`; a binding with the GIL held or released) or W
tasks on one event loop (`async`: asyncio's own, or the loop its library names after a +, `aiohttp+uvloop`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..metrics import BY_FIELD
from ..model import Client, Row
from . import gil, phases

NATIVE, FLOOR, SERIAL, THREADS, ASYNCIO = "native", "floor", "W=1", "threads", "asyncio"
#: what a mode is called in a sentence and in a chart's legend
NAMES = {
    NATIVE: "native (C++, Rust)",
    FLOOR: "floor (raw socket)",
    SERIAL: "one worker (W=1)",
    THREADS: "Python, sync threads",
    ASYNCIO: "Python, async on asyncio",
}
#: the order modes are read in (an event loop not named here comes after asyncio, W=1 rows last)
ORDER = {NATIVE: 0, FLOOR: 1, THREADS: 2, ASYNCIO: 3, SERIAL: 9}


def mode(client: Client) -> str:
    """How a row runs: NATIVE, FLOOR, SERIAL, THREADS, or the event loop of a Python async row (ASYNCIO,
    "uvloop", "rloop", ...)."""
    if client.floor:
        return FLOOR
    if client.fixed_workers == 1:
        return SERIAL
    if client.language != "Python":
        return NATIVE
    if client.mode != "async":
        return THREADS
    return client.library.partition("+")[2] or ASYNCIO


def name(mode_key: str) -> str:
    """A mode as a sentence and a legend say it."""
    return NAMES.get(mode_key, f"Python, async on {mode_key}")


def group(client: Client) -> str:
    """What a chart colours a row by: its mode, and for a binding's sync row whether it holds the GIL."""
    key = mode(client)
    return f"{key}, GIL {client.gil}" if key == THREADS and client.gil else key


def group_order(key: str) -> tuple[int, str]:
    """Where a group comes among others (a legend's order): its mode's place in ORDER, then its name."""
    return ORDER.get(key.partition(",")[0], 4), key


#: a group as a chart's legend says it, short: the legend's entries share a chart's width
LEGEND = {NATIVE: "native (C++, Rust)", FLOOR: "floor", SERIAL: "W=1", THREADS: "Python threads"}


def group_name(key: str) -> str:
    base, _, gil_state = key.partition(", GIL ")
    return LEGEND.get(base, f"Python {base}") + (f", GIL {gil_state}" if gil_state else "")


def headline(rows: Sequence[Row]) -> str:
    """The figure a run is read by: Bench (the group's wall time), or the corrected P99 for an open loop's rows
    (which have no Bench)."""
    is_open = any(r.aggregate is not None and r.aggregate.median.offered_rps is not None for r in rows)
    return "p99_ms" if is_open else "bench_ms"


def _value(row: Row, field: str) -> float | None:
    agg = None if row.failed else row.aggregate
    value = None if agg is None else getattr(agg.median, field)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Ranked:
    """A row and one of its figures (the median over the repeats)."""

    label: str
    value: float


@dataclass(frozen=True)
class ModeReading:
    """One mode of a run (under one interpreter): its rows ranked by the headline figure and by client CPU."""

    mode: str
    interpreter: str | None
    rows: int  # the rows of this mode that have the figure
    fastest: Ranked
    slowest: Ranked
    least_cpu: Ranked | None

    @property
    def title(self) -> str:
        return name(self.mode) + (f", Python {self.interpreter}" if self.interpreter else "")


def _ranked(rows: Sequence[Row], field: str) -> list[Ranked]:
    found = [(r.client.label, v) for r in rows if (v := _value(r, field)) is not None]
    return [Ranked(label, v) for label, v in sorted(found, key=lambda x: x[1])]


def by_mode(rows: Sequence[Row]) -> list[ModeReading]:
    """Per mode (in ORDER) and interpreter (in the order their first row ran): the fastest and slowest row by the
    headline figure, and the one with the least client CPU per request. A mode none of whose rows has the figure
    (all failed) is left out."""
    field = headline(rows)
    keys: list[tuple[str, str | None]] = []
    for r in rows:
        if (key := (mode(r.client), r.client.interpreter)) not in keys:
            keys.append(key)
    keys.sort(key=lambda k: ORDER.get(k[0], 4))  # stable: the interpreters stay in the order they ran
    out = []
    for key in keys:
        members = [r for r in rows if (mode(r.client), r.client.interpreter) == key]
        ranked = _ranked(members, field)
        if not ranked:
            continue
        cpu = _ranked(members, "cpu_us_per_req")
        out.append(ModeReading(key[0], key[1], len(ranked), ranked[0], ranked[-1], cpu[0] if cpu else None))
    return out


def _short(field: str) -> str:
    """A figure as a sentence names it: its column's label without the unit (Bench, P99)."""
    return BY_FIELD[field].label.split("(")[0]


def _times(value: float, base: float) -> str:
    return f"{value / base:.2f}x"


def reading(rows: Sequence[Row], workers: int) -> list[str]:
    """The run's reading, one Markdown list item per mode, then per binding with both GIL rows the GIL reading
    (analysis/gil.py), then the phases' (analysis/phases.py); nothing for rows none of which has figures."""
    field = headline(rows)
    figure, unit = _short(field), BY_FIELD[field].unit
    modes = by_mode(rows)
    natives = [m for m in modes if m.mode == NATIVE and m.interpreter is None]
    native = natives[0].fastest if natives else None
    out = []
    for m in modes:
        best = m.fastest
        text = f"- **{m.title}**"
        if m.mode in (FLOOR, SERIAL):
            text += f": {best.label}, {figure} {best.value:.2f} {unit}"
            floor = " (no client library: what the wire and the server cost)."
            text += floor if m.mode == FLOOR else f" (one worker instead of {workers}: not compared)."
            out.append(text)
            continue
        text += f", {m.rows} row{'s' if m.rows > 1 else ''}: "
        text += "the fastest is " if m.rows > 1 else ""
        text += f"{best.label}, {figure} {best.value:.2f} {unit}"
        if native is not None and m.mode != NATIVE:
            text += f" ({_times(best.value, native.value)} {native.label}, the fastest native row)"
        if m.rows > 1:
            slow = m.slowest
            text += f"; the slowest, {slow.label}, {slow.value:.2f} {unit}, is {_times(slow.value, best.value)} that"
        text += "."
        if m.least_cpu is not None and m.rows > 1:
            cpu = m.least_cpu
            who = "It spends" if cpu.label == best.label else f"{cpu.label} spends"
            text += f" {who} the least client CPU per request: {cpu.value:.1f} us."
        out.append(text)
    out += against_peers(rows)
    if field == "bench_ms":  # the GIL reading reads a closed loop's Bench and LMean
        out += _gil(rows, workers)
    return out + phases.reading(rows)


#: our bindings' client libraries (a row's library before any "+loop")
OURS = frozenset(lib for lib, _, _, _ in gil.BINDINGS)


def ours(client: Client) -> bool:
    """A row of one of our bindings, as an application would use it (not with the GIL held: that row is the
    demonstration), under the runner's Python."""
    return (
        client.language == "Python"
        and client.library.partition("+")[0] in OURS
        and client.gil != "held"
        and client.interpreter is None
    )


def against_peers(rows: Sequence[Row]) -> list[str]:
    """Per Python mode that has both, our bindings' client CPU per request against the cheapest peer's (a Python
    row that is neither ours nor a floor), and whether one of ours is the cheapest Python row of the mode."""
    out = []
    modes = [m for m in by_mode(rows) if m.mode not in (NATIVE, FLOOR, SERIAL) and m.interpreter is None]
    for m in modes:
        members = [r for r in rows if mode(r.client) == m.mode and r.client.interpreter is None]
        mine = [(r.client.label, v) for r in members if ours(r.client) and (v := _value(r, "cpu_us_per_req"))]
        peers = sorted(
            ((r.client.label, v) for r in members
             if not ours(r.client) and not r.client.floor and r.client.gil != "held"
             and (v := _value(r, "cpu_us_per_req"))),
            key=lambda x: x[1],
        )  # fmt: skip
        if not mine or not peers:
            continue
        best, best_cpu = peers[0]
        text = (
            f"- **Our bindings against the best peer, {m.title}**: "
            + ", ".join(f"{label} {cpu:.1f} us" for label, cpu in mine)
            + f" of client CPU per request; the cheapest peer, {best}, {best_cpu:.1f} us (ours "
            + " and ".join(_times(cpu, best_cpu) for _, cpu in mine)
            + " of it)."
        )
        cheapest, cheapest_cpu = min(mine, key=lambda x: x[1])
        if cheapest_cpu <= best_cpu:
            text += f" {cheapest} is the cheapest Python row here (held rows and floors aside)."
        else:
            text += f" The cheapest Python row here (held rows and floors aside) is a peer's: {best}."
        out.append(text)
    return out


def _gil(rows: Sequence[Row], workers: int) -> list[str]:
    """The GIL reading of the bindings whose held and released rows both ran (under the runner's interpreter)."""
    names = {r.client.name for r in rows}
    pairs = [b for b in gil.BINDINGS if b[1] in names and b[2] in names]
    return gil.reading([], rows, workers, pairs) if pairs else []
