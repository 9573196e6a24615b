"""What a ladder of open-loop rates measured (`sweep rate`, the GIL report's open-loop phase): per client the
corrected P99 and the achieved rate at every rate, and the highest rate it sustains, with the sentences
that say so, every one computed from the figures given (this module runs nothing).

A client **sustains** a rate when it achieved at least 99% of it and its corrected P99 stayed within the SLO
(`stats.sustains`); its highest sustained rate is the highest rate tried that it sustained.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Row
from ..report.base import Block, Column, Figure, Heading, Image, Report, Table, Text
from ..stats import RowStats, sustains
from ..workload import Workload, number

#: (rate, the rows measured at it), by increasing rate
Points = Sequence[tuple[float, Sequence[Row]]]


def row_stats(row: Row | None) -> RowStats | None:
    """The row's median figures; None when it failed or did not run."""
    agg = None if row is None or row.failed else row.aggregate
    return agg.median if agg is not None else None


def clients(points: Points) -> list[Row]:
    """One row per client (its first appearance), in the order they ran."""
    seen: dict[str, Row] = {}
    for _, rows in points:
        for r in rows:
            seen.setdefault(r.client.name, r)
    return list(seen.values())


def at(points: Points, name: str) -> list[tuple[float, Row]]:
    """The client's row at every rate it ran at."""
    return [(rate, r) for rate, rows in points for r in rows if r.client.name == name]


@dataclass(frozen=True)
class Sustained:
    """A client's highest sustained rate, and what happened at the next rate tried above it."""

    name: str
    label: str
    rate: float | None  # None: it sustained none of the rates tried
    stats: RowStats | None  # at `rate`
    next_rate: float | None  # the next rate tried (None: the highest tried was sustained, or none was run)
    next_stats: RowStats | None  # at next_rate (None: failed there)
    lowest: float | None  # the lowest rate tried


def sustained(points: Points, name: str, slo_ms: float) -> Sustained:
    """The client's highest sustained rate among the rates tried (docs/open-loop.md)."""
    tried = at(points, name)
    label = tried[0][1].client.label if tried else name
    good = [(rate, s) for rate, r in tried if (s := row_stats(r)) is not None and sustains(s, slo_ms)]
    best, best_stats = good[-1] if good else (None, None)
    above = [(rate, r) for rate, r in tried if best is None or rate > best]
    nxt = above[0] if above else None
    return Sustained(
        name,
        label,
        best,
        best_stats,
        nxt[0] if nxt else None,
        row_stats(nxt[1]) if nxt else None,
        tried[0][0] if tried else None,
    )


def _rps(value: float) -> str:
    return f"{value:,.0f}"


def headline(s: Sustained, slo_ms: float) -> str:
    """One sentence per client: its highest sustained rate and what the next rate did to it."""
    slo = f"{slo_ms:g} ms"
    if s.lowest is None:
        return f"- **{s.label}**: not measured."
    if s.rate is None or s.stats is None:
        first = s.next_stats
        why = (
            f"at the lowest, {_rps(s.lowest)} requests/s, it achieved {_rps(first.throughput_rps)} requests/s "
            f"with a corrected P99 of {first.p99_ms:.2f} ms"
            if first is not None and first.p99_ms is not None
            else f"at the lowest, {_rps(s.lowest)} requests/s, it failed"
        )
        return f"- **{s.label}** sustains none of the rates tried (P99 within {slo}): {why}."
    line = (
        f"- **{s.label}** sustains **{_rps(s.rate)} requests/s** (achieved {_rps(s.stats.throughput_rps)}, "
        f"corrected P99 {s.stats.p99_ms:.2f} ms, within {slo})"
    )
    if s.next_rate is None:
        return line + ": the highest rate tried; it may sustain more."
    n = s.next_stats
    if n is None:
        return line + f"; at {_rps(s.next_rate)} requests/s it failed."
    why = "saturated" if n.saturated else f"P99 above {slo}" if n.p99_ms is not None else "no request succeeded"
    p99 = f", corrected P99 {n.p99_ms:.2f} ms" if n.p99_ms is not None else ""
    return line + f"; at {_rps(s.next_rate)} requests/s it achieved {_rps(n.throughput_rps)}{p99} ({why})."


def grid(points: Points, cell: str) -> Table:
    """Clients (rows) x rates (columns): the corrected P99 (`p99`) or the achieved rate (`achieved`, with
    the saturated ones marked); `-` where the client did not run at that rate."""
    rows = clients(points)
    columns = [Column("Client", False), *(Column(f"{number(rate)}/s") for rate, _ in points)]
    body = []
    for first in rows:
        cells = [first.client.label]
        for _, measured in points:
            row = next((r for r in measured if r.client.name == first.client.name), None)
            s = row_stats(row)
            if row is None or not row.runs:
                cells.append("-")
            elif s is None:
                cells.append("failed" if row.failed else "-")
            elif cell == "p99":
                cells.append("-" if s.p99_ms is None else f"{s.p99_ms:.2f}")
            else:
                cells.append(_rps(s.throughput_rps) + (" (saturated)" if s.saturated else ""))
        body.append(cells)
    return Table(columns, body)


def sustained_table(results: Sequence[Sustained]) -> Table:
    columns = [
        Column("Client", False),
        Column("Sustains(req/s)"),
        Column("P99 there(ms)"),
        Column("Next rate(req/s)"),
        Column("Achieved there(req/s)"),
        Column("P99 there(ms)"),
    ]
    body = []
    for s in results:
        n = s.next_stats
        body.append(
            [
                s.label,
                "none" if s.rate is None else _rps(s.rate),
                "-" if s.stats is None or s.stats.p99_ms is None else f"{s.stats.p99_ms:.2f}",
                "-" if s.next_rate is None else _rps(s.next_rate),
                "-" if n is None else _rps(n.throughput_rps) + (" (saturated)" if n.saturated else ""),
                "-" if n is None or n.p99_ms is None else f"{n.p99_ms:.2f}",
            ]
        )
    return Table(columns, body)


def plot_file(name: str) -> str:
    return f"rate-{name.replace('/', '_')}.png"


def figures(points: Points, slo_ms: float, workload: Workload) -> list[Figure]:
    """Per client, its corrected P50 and P99 (and service-time P99) against the offered rate."""
    return [
        Figure(
            "rate",
            plot_file(r.client.name),
            f"{r.client.label}: latency vs offered load ({workload.workers} workers, {workload.request()})",
            points=[(rate, [row]) for rate, row in at(points, r.client.name)],
            axis="offered rate (requests/s)",
            log_x=True,
            slo_ms=slo_ms,
        )
        for r in clients(points)
    ]


def summary_lines(points: Points, slo_ms: float) -> list[str]:
    """The headline, for the terminal."""
    return [headline(sustained(points, r.client.name, slo_ms), slo_ms) for r in clients(points)]


def summary(points: Points, slo_ms: float, workload: Workload, *, every_rate: bool) -> Report:
    """sweep.md of `sweep rate`: the headline (each client's highest sustained rate), the tables, the plots."""
    results = [sustained(points, r.client.name, slo_ms) for r in clients(points)]
    how = (
        "every client at every rate given"
        if every_rate
        else "doubling rates; a client leaves the ladder after the first rate it saturated at"
    )
    length = f"{number(workload.duration_s)} s" if workload.duration_s is not None else f"{workload.requests} requests"
    blocks: list[Block] = [
        Heading("Sweep over the offered rate (open loop)"),
        Text(
            [
                f"{workload.workers} workers, {workload.request()}, {workload.arrival} arrivals, {length} per rate, "
                f"median of {workload.repeat} run(s); {how}. A client sustains a rate when it achieves at least "
                f"99% of it with a corrected P99 (from each request's intended start) within {slo_ms:g} ms."
            ]
        ),
        Heading("Highest sustained rate (generated from the figures below)", 2),
        Text([headline(s, slo_ms) for s in results]),
        sustained_table(results),
        Heading("Corrected P99 (ms, median over repeats)", 2),
        grid(points, "p99"),
        Heading("Achieved rate (requests/s, median over repeats)", 2),
        grid(points, "achieved"),
        Heading("Latency vs offered load", 2),
        *(Image(f"{r.client.label}", f"plots/{plot_file(r.client.name)}") for r in clients(points)),
    ]
    return Report("sweep", blocks, figures=figures(points, slo_ms, workload))
