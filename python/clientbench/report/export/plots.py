"""`plots/*.png` (matplotlib, headless): each of a Report's figures drawn as report/figures.py defines it
(latency by percentile, Bench with its spread, request timelines, sweep curves, latency vs offered load); the
HTML report draws the same definitions with plotly.js (report/export/html/charts.py). Every plot states what it
shows in its title, axes (with units) and legend."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure as Canvas  # noqa: E402
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator  # noqa: E402

from ...model import Row  # noqa: E402
from ..base import Figure, Report  # noqa: E402
from ..drawing import drawing  # noqa: E402
from ..figures import REFERENCE, Axis, Drawing, Plot, Series  # noqa: E402
from ..timeseries import has_series  # noqa: E402
from .registry import register  # noqa: E402

DPI = 110
MARKERS = {"circle": "o", "x": "x", "dot": "."}
MARKER_SIZES = {"circle": 5.0, "x": 10.0, "dot": 4.0}
DASHES = {"solid": "-", "dot": ":", "dash": "--"}


def render(d: Drawing) -> Canvas:
    """The drawing as a matplotlib figure, not saved (`draw` saves and closes it). The line, bars or ticks of a
    plot's series i carry the gid "s<i>" (not its whiskers), its reference line i "line<i>"."""
    rows = math.ceil(len(d.plots) / d.columns)
    fig, axes = plt.subplots(rows, d.columns, figsize=_size(d), squeeze=False, sharex=d.share_x, layout="constrained")
    flat: list[Axes] = list(axes.flat)
    for i, (ax, plot) in enumerate(zip(flat, d.plots, strict=False)):
        last = i == len(d.plots) - 1
        legend = plot.legend and (last or not d.shared_legend)
        _plot(ax, plot, legend=legend, x_title=last or not d.share_x, one=len(d.plots) == 1)
    for ax in flat[len(d.plots) :]:
        ax.set_visible(False)
    if len(d.plots) > 1:
        fig.suptitle(d.title)
    return fig


def draw(d: Drawing, path: Path) -> Path:
    """The drawing as a PNG at `path`."""
    fig = render(d)
    try:
        fig.savefig(path, dpi=DPI)
    finally:
        plt.close(fig)
    return path


def _size(d: Drawing) -> tuple[float, float]:
    first = d.plots[0]
    if first.horizontal:
        bars = 1 if first.overlay or first.stacked else max(1, sum(s.style == "bars" for s in first.series))
        return 10.0, 0.3 * bars * len(first.y.categories) + 1.8
    if any(s.style == "ticks" for p in d.plots for s in p.series):
        lanes = [max((s.lane for s in p.series), default=0) + 1 for p in d.plots]
        return 11.0, sum(0.2 * max(n, 3) + 1.0 for n in lanes) + 0.8
    if d.columns > 1:
        return 14.0, 5.5
    if len(d.plots) > 1:  # stacked (an open loop's series): room for each plot's axis title
        return 11.0, 3.4 * len(d.plots) + 0.6
    return (11.0, 6.0) if first.wide else (10.0, 5.5)


def _plot(ax: Axes, plot: Plot, *, legend: bool, x_title: bool, one: bool) -> None:
    bars = [s for s in plot.series if s.style == "bars"]
    if plot.stacked:
        _stacked(ax, plot, bars)
    for i, s in enumerate(plot.series):
        label = s.name if s.legend else "_nolegend_"
        if s.style == "bars" and plot.stacked:
            continue
        if s.style == "bars":
            k, n = (0, 1) if plot.overlay else (bars.index(s), len(bars))
            _bars(ax, plot, s, k, n, f"s{i}", label)
        elif s.style == "ticks":
            ax.eventplot(
                [list(s.x)], lineoffsets=[s.lane], linelengths=0.8, linewidths=0.6, colors=[s.color], gid=f"s{i}"
            )
        else:
            _curve(ax, plot, s, f"s{i}", label)
    for i, line in enumerate(plot.lines):
        across = ax.axvline if line.axis == "x" else ax.axhline
        across(
            line.value, color=REFERENCE, linestyle="--", linewidth=1, label=line.label or "_nolegend_", gid=f"line{i}"
        )
    if bars and plot.stacked:
        totals: dict[Any, float] = {}
        for s in bars:
            for c, v in zip(s.y, s.x, strict=True):
                totals[c] = totals.get(c, 0.0) + v
        ax.set_xlim(0, max(totals.values()) * 1.05 or 1.0)
    elif bars:  # room for the values written beside the bars
        ends = [v + (s.high[k] if s.high else 0.0) for s in bars for k, v in enumerate(s.x)]
        if plot.x.scale == "log":
            starts = [v - (s.low[k] if s.low else 0.0) for s in bars for k, v in enumerate(s.x)]
            ax.set_xlim(min((v for v in starts if v > 0), default=min(s.x[0] for s in bars)) / 1.5, max(ends) * 2.5)
        else:
            ax.set_xlim(0, max(ends) * 1.15 or 1.0)
    _axis(ax, "x", plot.x)
    _axis(ax, "y", plot.y)
    if not x_title:
        ax.set_xlabel("")
    ax.set_title(plot.title, fontsize=11 if one else 9, loc="center" if one else "left")
    log = "log" in (plot.x.scale, plot.y.scale)
    lanes = plot.y.scale == "category" or any(s.style == "ticks" for s in plot.series)
    ax.grid(True, which="both" if log else "major", axis="x" if lanes else "both", alpha=0.3)
    handles, names = ax.get_legend_handles_labels()
    if legend and names:
        # in the plot's order (matplotlib lists lines before bars)
        order = [s.name for s in plot.series] + [line.label for line in plot.lines]
        ranked = sorted(zip(handles, names, strict=True), key=lambda h: order.index(h[1]) if h[1] in order else 0)
        ax.legend(
            [h for h, _ in ranked],
            [n for _, n in ranked],
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            borderaxespad=0.0,
            fontsize=8,
        )


def _coords(axis: Axis, values: Sequence[Any]) -> list[float]:
    """Where values go on an axis: a category at its index."""
    if axis.scale == "category":
        return [float(axis.categories.index(str(v))) for v in values]
    return [float(v) for v in values]


def _curve(ax: Axes, plot: Plot, s: Series, gid: str, label: str) -> None:
    style: dict[str, Any] = {
        "color": s.color,
        "linestyle": "none" if s.style == "markers" else DASHES[s.dash],
        "linewidth": 1.4,
        "marker": "" if s.style == "lines" else MARKERS[s.marker],
        "markersize": MARKER_SIZES[s.marker],
        "label": label,
        "zorder": 3 if s.style == "markers" else 2,
    }
    xs, ys = _coords(plot.x, s.x), _coords(plot.y, s.y)
    if s.low:
        drawn = ax.errorbar(xs, ys, yerr=[list(s.low), list(s.high)], capsize=3, elinewidth=0.8, **style)
        line = drawn.lines[0]
    else:
        (line,) = ax.plot(xs, ys, **style)
    if line is not None:
        line.set_gid(gid)


def _stacked(ax: Axes, plot: Plot, bars: Sequence[Series]) -> None:
    """Horizontal bars one after the other in each category (a row's phases), each series from where the one
    before it ended."""
    left: dict[Any, float] = {}
    for i, s in enumerate(bars):
        pos = _coords(plot.y, s.y)
        starts = [left.get(c, 0.0) for c in s.y]
        drawn = ax.barh(pos, list(s.x), left=starts, height=0.7, color=s.color, label=s.name)
        for patch in drawn.patches:
            patch.set_gid(f"s{i}")
        for c, v in zip(s.y, s.x, strict=True):
            left[c] = left.get(c, 0.0) + v


def _bars(ax: Axes, plot: Plot, s: Series, k: int, n: int, gid: str, label: str) -> None:
    """Horizontal bars, the k-th of n side by side in each category, their values written beside them."""
    height = 0.8 / n
    pos = [p + (k - (n - 1) / 2) * height for p in _coords(plot.y, s.y)]
    err = [list(s.low), list(s.high)] if s.low else None
    drawn = ax.barh(pos, list(s.x), height=height, xerr=err, capsize=3, color=s.color, label=label)
    for patch in drawn.patches:
        patch.set_gid(gid)
    high = s.high or (0.0,) * len(s.x)
    for p, v, h, text in zip(pos, s.x, high, s.labels, strict=False):
        ax.text(v + h, p, f"  {text}", va="center", fontsize=8)


def _axis(ax: Axes, which: str, a: Axis) -> None:
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_label_text(a.title)
    if a.scale == "log" and which == "x":
        ax.set_xscale("log")
    elif a.scale == "log":
        ax.set_yscale("log")
    ticks = tuple((float(i), c) for i, c in enumerate(a.categories)) if a.scale == "category" else a.ticks
    if ticks:
        axis.set_major_locator(FixedLocator([v for v, _ in ticks]))
        axis.set_major_formatter(FixedFormatter([t for _, t in ticks]))
        axis.set_minor_locator(NullLocator())
    if a.scale == "category":
        axis.set_tick_params(labelsize=8)
        if which == "x" and sum(len(c) for c in a.categories) > 60:  # long names (long-15KB-h1.1, ...): slanted
            for label in axis.get_ticklabels():
                label.set(rotation=35, horizontalalignment="right", rotation_mode="anchor")
    limits = ax.set_xlim if which == "x" else ax.set_ylim
    if a.limits is not None:
        limits(*a.limits)
    if a.from_zero:
        limits(0, None)
    if a.reversed:
        axis.set_inverted(True)


def standard_figures(rows: Sequence[Row], subtitle: str, timeline_rows: Sequence[Row] | None = None) -> list[Figure]:
    """A run's plots: latency percentiles, Bench bars, the timeline of the GIL rows (if any), an open loop's
    series (rate, latency and errors per second) when some row has one, and the phases where some row has them."""
    figures = [
        Figure("latency", "latency.png", f"Request latency by percentile ({subtitle})", rows),
        Figure("bench", "bench.png", f"Bench and LMean per client ({subtitle})", rows),
    ]
    gil_rows = list(timeline_rows) if timeline_rows is not None else [r for r in rows if r.client.gil]
    if gil_rows:
        figures.append(
            Figure(
                "timeline",
                "timeline.png",
                f"Requests per worker over time: GIL held vs released ({subtitle})",
                gil_rows,
            )
        )
    if has_series(rows):
        figures.append(Figure("series", "series.png", f"Open loop, second by second ({subtitle})", rows))
    if any(r.aggregate is not None and r.aggregate.median.phases for r in rows):
        figures.append(Figure("phases", "phases.png", f"Where a request's time goes ({subtitle})", rows))
    return figures


@register("plots")
class Plots:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        """plots/<file> of every figure with something to draw."""
        if out is None or not report.figures:
            return []
        folder = out / "plots"
        folder.mkdir(parents=True, exist_ok=True)
        made = []
        for f in report.figures:
            d = drawing(f)
            if d is not None:
                made.append(draw(d, folder / f.file))
        return made
