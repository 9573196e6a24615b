"""What a ladder of open-loop rates shows (`sweep rate`'s sweep.md, the GIL report's open-loop folder): each
client's highest sustained rate (analysis/rates.py), the corrected P99 and the achieved rate per client and rate,
and the latency-vs-offered-load plot per client."""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.rates import Points, Sustained, at, clients, headline, row_stats, sustained
from ..workload import Workload, number
from .base import Block, Column, Figure, Heading, Image, Report, Table, Text


def _rps(value: float) -> str:
    return f"{value:,.0f}"


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
