"""What a report's `Figure` (report/base.py) draws, as plots both renderers take: report/figures.py's plots and
report/timeseries.py's, one `Drawing` per figure (None when it has nothing to draw)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..metrics import BY_FIELD, axis_title
from ..model import Row
from ..stats import Aggregate
from . import timeseries
from .base import Figure
from .figures import (
    SWEPT,
    Drawing,
    Plot,
    bars,
    compare,
    figure_names,
    labels,
    latency,
    medians,
    ranked,
    rate,
    sweep,
    timeline,
)
from .phases import phases


def drawing(figure: Figure) -> Drawing | None:
    """What a report's Figure draws: latency by percentile, the Bench bars (or another figure's: "bars"; best first
    and coloured by mode: "ranked"), one timeline per row (stacked), Bench and throughput against the swept value
    (side by side; "curve": one figure), latency against the offered rate, an open loop's rate, latency and errors
    second by second (stacked), or Bench in two runs compared."""
    kind, title = figure.kind, figure.title
    if kind == "latency":
        return _drawing(title, [latency(figure.rows, title, figure.shown)])
    if kind == "bench":
        return _drawing(title, [bars(figure.rows, "bench_ms", title, "ms")])
    if kind == "bars":
        return _drawing(title, [bars(figure.rows, figure.metric, title, BY_FIELD[figure.metric].unit)])
    if kind == "ranked":
        return _drawing(title, [ranked(figure.rows, figure.metric, title)])
    if kind == "timeline":
        names = labels(figure.rows)
        plots = [timeline(r, names[r.client.name]) for r in figure.rows]
        return _drawing(title, plots, share_x=True)
    if kind == "sweep":
        points = [(value, medians(rows)) for value, rows in figure.points]
        plots = [_curve(points, n, figure.axis) for n in SWEPT]
        return _drawing(title, plots, columns=2, shared_legend=True)
    if kind == "curve":
        return _drawing(title, [_curve([(v, medians(rows)) for v, rows in figure.points], figure.metric, figure.axis)])
    if kind == "rate":
        return _drawing(title, [rate(figure.points, title, figure.axis, figure.slo_ms)])
    if kind == "phases":  # where a request's time goes (report/phases.py)
        return _drawing(title, [phases(figure.rows, title)])
    if kind == "series":  # an open loop second by second (report/timeseries.py)
        return _drawing(title, timeseries.plots(figure.rows), share_x=True)
    if kind == "compare":
        return _drawing(title, [compare(figure.compared)])
    raise ValueError(f"unknown figure kind {kind!r}")


def curves(figure: Figure) -> dict[str, Plot]:
    """A "curve" figure's plot of every figure (RowStats field) some row has against the swept value, by field in
    the model's order: the page offers any of them."""
    points = [(value, medians(rows)) for value, rows in figure.points]
    found = {n: _curve(points, n, figure.axis) for n in figure_names([m for _, rows in points for m in rows])}
    return {n: p for n, p in found.items() if p is not None}


def _curve(points: Sequence[tuple[Any, Sequence[tuple[str, Row, Aggregate]]]], name: str, axis: str) -> Plot | None:
    return sweep(points, name, axis, f"{axis_title(name)} vs {axis}")


def _drawing(title: str, plots: Sequence[Plot | None], **how: Any) -> Drawing | None:
    drawn = tuple(p for p in plots if p is not None)
    return Drawing(title, drawn, **how) if drawn else None
