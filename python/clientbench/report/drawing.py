"""What a report's `Figure` (report/base.py) draws, as plots both renderers take: report/figures.py's plots and
report/timeseries.py's, one `Drawing` per figure (None when it has nothing to draw)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..metrics import axis_title
from . import timeseries
from .base import Figure
from .figures import SWEPT, Drawing, Plot, bars, labels, latency, medians, rate, sweep, timeline


def drawing(figure: Figure) -> Drawing | None:
    """What a report's Figure draws: latency by percentile, the Bench bars, one timeline per row (stacked),
    Bench and throughput against the swept value (side by side), latency against the offered rate, or an open
    loop's rate, latency and errors second by second (stacked)."""
    kind, title = figure.kind, figure.title
    if kind == "latency":
        return _drawing(title, [latency(figure.rows, title)])
    if kind == "bench":
        return _drawing(title, [bars(figure.rows, "bench_ms", title, "ms")])
    if kind == "timeline":
        names = labels(figure.rows)
        plots = [timeline(r, names[r.client.name]) for r in figure.rows]
        return _drawing(title, plots, share_x=True)
    if kind == "sweep":
        points = [(value, medians(rows)) for value, rows in figure.points]
        plots = [sweep(points, n, figure.axis, f"{axis_title(n)} vs {figure.axis}") for n in SWEPT]
        return _drawing(title, plots, columns=2, shared_legend=True)
    if kind == "rate":
        return _drawing(title, [rate(figure.points, title, figure.axis, figure.slo_ms)])
    if kind == "series":  # an open loop second by second (report/timeseries.py)
        return _drawing(title, timeseries.plots(figure.rows), share_x=True)
    raise ValueError(f"unknown figure kind {kind!r}")


def _drawing(title: str, plots: Sequence[Plot | None], **how: Any) -> Drawing | None:
    drawn = tuple(p for p in plots if p is not None)
    return Drawing(title, drawn, **how) if drawn else None
