"""What a sweep's summary shows (sweep.md): Bench, throughput and CPU per request per client and point, and how
close each Python client comes to the fastest native one (analysis/sweep.py); the plot of Bench and throughput
against the dimension."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..analysis.sweep import RETAINED_FROM, Points, native_reach, protocol_costs, scaling
from ..dimensions import Dimension
from ..schema import SWEEP_ID
from .base import Column, Figure, Heading, Report, Table, Text


def _metric(points: Points, labels: list[str], columns: list[Column], metric: str, fmt: str) -> Table:
    body = []
    for label in labels:
        cells = [label]
        for _, rows in points:
            row = next((r for r in rows if r.client.label == label), None)
            agg = row.aggregate if row else None
            value = getattr(agg.median, metric) if agg is not None else None
            cells.append("failed" if row is not None and row.failed else "-" if value is None else format(value, fmt))
        body.append(cells)
    return Table(columns, body)


def summary(dim: Dimension, points: Points, repeat: int) -> Report:
    """sweep.md: Bench and throughput per client (rows) and point (columns), the native reach, and the plot."""
    labels: list[str] = []
    for _, rows in points:
        labels += [r.client.label for r in rows if r.client.label not in labels]
    columns = [Column("Client", False), *(Column(f"{dim.name}={v}") for v, _ in points)]
    reach = native_reach(points)

    def cell(value: Any) -> str:
        return "-" if value is None else f"{value:.2f}"

    reach_table = Table(
        [Column("Client", False), *(Column(f"{v}") for v, _ in points), Column("within 10% from", False)],
        [[r.label, *(cell(x) for x in r.ratios), "-" if r.reached is None else str(r.reached)] for r in reach],
    )
    figure = Figure(
        "sweep",
        f"sweep-{dim.name}.png",
        f"Bench and throughput vs {dim.axis} (median of {repeat} run(s))",
        points=points,
        axis=dim.axis,
        log_x=dim.log_x,
    )
    extra: list[Any] = []
    if dim.name == "workers":  # what a connection costs in memory, and the throughput kept at the top
        scale = scaling(points)
        extra += [
            Heading("Memory per connection (MiB: the peak RSS over the first point's, per worker added)", 2),
            Table(
                [Column("Client", False), *(Column(f"{v}") for v, _ in points)],
                [[s.label, *(cell(x) for x in s.mib_per_connection)] for s in scale],
            ),
        ]
        if any(s.retention is not None for s in scale):
            top = max(int(v) for v, _ in points)
            extra += [
                Heading(f"Retention (req/s at {top} workers / at {RETAINED_FROM})", 2),
                Table(
                    [Column("Client", False), Column("retention")],
                    [[s.label, "-" if s.retention is None else f"{s.retention:.2f}"] for s in scale],
                ),
            ]
    if dim.name == "scenario" and (costs := protocol_costs(points)):
        scenarios = costs[0].scenarios
        extra += [
            Heading(
                "HTTP/3's client CPU per request over HTTP/2's and HTTP/1.1's (generated from the figures above)", 2
            ),
            Table(
                [Column("Client", False), *(Column(f"{s} vs h{v}") for s in scenarios for v in ("2", "1.1"))],
                [[c.label, *(cell(x) for pair in zip(c.over_h2, c.over_h1, strict=True) for x in pair)] for c in costs],
            ),
            Text([s for c in costs if (s := c.sentence()) is not None]),
        ]
    return Report(
        "sweep",
        [
            Heading(f"Sweep over {dim.name}"),
            Heading("Bench (ms, median over repeats)", 2),
            _metric(points, labels, columns, "bench_ms", ".2f"),
            Heading("Throughput (requests/s, median over repeats)", 2),
            _metric(points, labels, columns, "throughput_rps", ".0f"),
            Heading("Client CPU per request (us, median over repeats)", 2),
            _metric(points, labels, columns, "cpu_us_per_req", ".0f"),
            Heading(f"Bench / fastest native Bench, per {dim.name} (generated from the figures above)", 2),
            reach_table,
            Text([r.sentence(dim.name) for r in reach]),
            *extra,
        ],
        figures=[figure],
    )


def index(
    dimension: str, points: Sequence[Any], repeat: int, slo_ms: float | None = None, every_rate: bool | None = None
) -> dict[str, Any]:
    """sweep.json: the dimension and its points in the order they ran, and a rate ladder's settings (what reading
    the folder back needs besides each point's results.json)."""
    return {
        "schema": SWEEP_ID,
        "dimension": dimension,
        "points": list(points),
        "repeat": repeat,
        "slo_ms": slo_ms,
        "every_rate": every_rate if slo_ms is not None else None,
    }
