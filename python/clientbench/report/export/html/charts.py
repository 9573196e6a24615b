"""The HTML report's charts, as plotly.js figures (`{"data": [...], "layout": {...}}`): the plots report/figures.py
defines (Bench and CPU per request with their min-max over the repeats, latency by percentile, request
timelines, sweep curves, the compare view's bars), drawn as the PNGs draw them (report/export/plots.py). This
module only turns a definition into plotly's terms. A chart with nothing to draw is None.

A chart may also say `wide` (it takes the page's width), `toggle` (buttons show or hide every series), and, from
`with_variants`, `variants` (a chart per figure name), `selected` and `titles` (report.js reads them)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ....metrics import axis_title
from ... import figures as defs
from ...figures import PERCENTILE_TICKS, REFERENCE, TIMELINE_TICKS, Axis, Line, Plot, Series, labels, medians

if TYPE_CHECKING:
    from ....analysis.compare import RowComparison
    from ....model import Row
    from ....stats import Aggregate

__all__ = [
    "PERCENTILE_TICKS",
    "TIMELINE_TICKS",
    "Chart",
    "bars",
    "chart",
    "compare_bars",
    "figures",
    "labels",
    "latency_cdf",
    "medians",
    "menu",
    "sweep_curve",
    "timeline",
    "with_variants",
]

Chart = dict[str, Any]

FONT = {"family": "system-ui, sans-serif", "size": 12}
SYMBOLS = {"circle": "circle", "x": "x", "dot": "circle"}
SIZES = {"circle": 6, "x": 10, "dot": 4}
#: a legend laid out in rows above its plot (a ranked chart's) has about this many entries a row, from this many
#: pixels below the chart's top (under its title)
LEGEND_PER_LINE, LEGEND_TOP = 2, 40
#: the numeric figures (RowStats fields) some row drawn has, in the model's order
figures = defs.figure_names


def bars(rows: Sequence[Row], name: str, title: str, unit: str) -> Chart | None:
    """One figure per row as a horizontal bar (the median) with its min-max over the repeats as whiskers."""
    return chart(defs.bars(rows, name, title, unit))


def compare_bars(rows: Sequence[RowComparison]) -> Chart | None:
    """Bench of A and of B per row, the whiskers their min-max over the repeats."""
    return chart(defs.compare(rows))


def latency_cdf(rows: Sequence[Row], title: str) -> Chart | None:
    """Latency against percentile, both on log axes, one trace per row; the legend toggles rows."""
    return chart(defs.latency(rows, title))


def timeline(row: Row, title: str) -> Chart | None:
    """Every request of the row's last repeat with samples as a tick when it completed, one lane per worker."""
    return chart(defs.timeline(row, title))


def sweep_curve(
    points: Sequence[tuple[Any, Sequence[tuple[str, Row, Aggregate]]]], name: str, axis: str, title: str
) -> dict[str, Any] | None:
    """One figure (RowStats field) of every row against the swept value, with its min-max over the repeats;
    `points`: per swept value, (label, row, its aggregate) of the rows drawn (`medians`)."""
    return chart(defs.sweep(points, name, axis, title))


def with_variants(names: Sequence[str], default: str, build: Callable[[str], dict[str, Any] | None]) -> Chart | None:
    """A chart whose figure is chosen in the page (a menu of `names`), starting at `default`."""
    return _menu({n: c for n in names if (c := build(n)) is not None}, default)


def menu(plots: Mapping[str, Plot], default: str) -> Chart | None:
    """A chart of one of several figures' plots (report/drawing.py's `curves`), chosen in the page, starting at
    `default`."""
    return _menu({n: c for n, plot in plots.items() if (c := chart(plot)) is not None}, default)


def _menu(variants: dict[str, Chart], default: str) -> Chart | None:
    if not variants:
        return None
    first = default if default in variants else next(iter(variants))
    return {**variants[first], "variants": variants, "selected": first, "titles": {n: axis_title(n) for n in variants}}


# -- a definition in plotly's terms ----------------------------------------------------------------


def chart(plot: Plot | None) -> Chart | None:
    """A plot as a plotly.js figure; None for none."""
    if plot is None:
        return None
    bar_series = sum(s.style == "bars" for s in plot.series)
    data = [_trace(plot, s) for s in plot.series]
    data += [_line_trace(plot, line) for line in plot.lines if line.label]
    layout: dict[str, Any] = {
        "title": {"text": plot.title, "font": {"size": 14}},
        "height": _height(plot, bar_series),
        "margin": {"l": 10, "r": 20, "t": 50, "b": 50},
        "font": FONT,
        "hovermode": "closest",
        "xaxis": _axis(plot.x),
        "yaxis": _axis(plot.y),
        "showlegend": plot.legend,
    }
    if plot.legend:
        layout["legend"] = {"font": {"size": 10}}
    if plot.legend and plot.overlay:
        # a ranked chart's groups in rows between its title and its bars (plotly makes the room), so that the bars
        # keep the chart's width; the chart grows by about the rows they take
        layout["height"] += 20 * math.ceil(len(data) / LEGEND_PER_LINE)
        layout["title"] |= {"y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 14}}
        below = 1 - LEGEND_TOP / layout["height"]
        layout["legend"] |= {"orientation": "h", "x": 0, "xanchor": "left", "yref": "container", "y": below}
        layout["legend"]["yanchor"] = "top"
    if plot.overlay and plot.x.scale == "log" and not plot.x.ticks:
        layout["xaxis"]["dtick"] = "D2"  # a label at 1, 2 and 5 of each decade: the bars' labels are dense already
    if bar_series > 1:
        layout["barmode"] = "stack" if plot.stacked else "overlay" if plot.overlay else "group"
    shapes = [_shape(line) for line in plot.lines if not line.label]
    if shapes:
        layout["shapes"] = shapes
    out: Chart = {"data": data, "layout": layout}
    if plot.wide:
        out["wide"] = True
    if plot.toggle:
        out["toggle"] = True
    return out


def _height(plot: Plot, bar_series: int) -> int:
    if plot.horizontal:
        per_row = 20 if plot.overlay or plot.stacked else 22 * max(bar_series, 1)
        return 90 + (20 if plot.legend else 0) + per_row * len(plot.y.categories)
    if any(s.style == "ticks" for s in plot.series):
        limits = plot.y.limits or (0.0, 1.0)
        return 110 + 18 * round(limits[1] - limits[0])
    return 520 if plot.wide else 480


def _axis(a: Axis) -> dict[str, Any]:
    out: dict[str, Any] = {"type": a.scale, "title": {"text": a.title}, "automargin": True}
    if a.scale == "category":
        out["categoryorder"] = "array"
        out["categoryarray"] = list(a.categories)
    if a.ticks:
        out["tickvals"] = [v for v, _ in a.ticks]
        out["ticktext"] = [t for _, t in a.ticks]
    if a.limits is not None:
        lo, hi = a.limits
        out["range"] = [math.log10(lo), math.log10(hi)] if a.scale == "log" else [lo, hi]
    if a.from_zero:
        out["rangemode"] = "tozero"
    if a.reversed:
        out["autorange"] = "reversed"
    return out


def _value(a: Axis, coordinate: str) -> str:
    """How the page describes a point's coordinate on hover."""
    if a.scale == "category":
        return f"%{{{coordinate}}}"
    if not a.name:
        return ""
    unit = f" {a.unit}" if a.unit else ""
    return f"{a.name} %{{{coordinate}:{a.digits}}}{unit}"


def _trace(plot: Plot, s: Series) -> dict[str, Any]:
    if s.style == "ticks":
        # on its lane (y0, no y array): the page carries the times alone
        return {
            "type": "scatter",
            "mode": "markers",
            "name": s.name,
            "legendgroup": s.name,
            "showlegend": False,
            "x": list(s.x),
            "y0": s.lane,
            "dy": 0,
            "marker": {"symbol": "line-ns-open", "size": 9, "line": {"width": 1}, "color": s.color},
            "hovertemplate": f"{plot.y.name} {s.lane}: {s.name} at %{{x:{plot.x.digits}}} {plot.x.unit}<extra></extra>",
        }
    lines = [f"{s.name}: {_value(plot.x, 'x')}" if s.style == "bars" else "%{fullData.name}"]
    if s.style == "bars":
        lines.insert(0, _value(plot.y, "y"))
    else:
        lines += [_value(plot.x, "x"), _value(plot.y, "y")]
    if s.notes:
        lines.append("%{customdata}")
    trace: dict[str, Any] = {
        "type": "bar" if s.style == "bars" else "scatter",
        "name": s.name,
        "x": list(s.x),
        "y": list(s.y),
        "marker": {"color": s.color},
        "hovertemplate": "<br>".join(line for line in lines if line) + "<extra></extra>",
    }
    if s.notes:
        trace["customdata"] = list(s.notes)
    if not s.legend:
        trace["showlegend"] = False
    if s.hidden:
        trace["visible"] = "legendonly"
    if s.style == "bars":
        if plot.horizontal:
            trace["orientation"] = "h"
    else:
        trace["mode"] = s.style
        trace["line"] = {"width": 1.6, "dash": s.dash, "color": s.color}
        trace["marker"] = {"color": s.color, "symbol": SYMBOLS[s.marker], "size": SIZES[s.marker]}
    if s.low:
        whiskers = {"type": "data", "symmetric": False, "array": list(s.high), "arrayminus": list(s.low)}
        bar_width = {"thickness": 1.5, "width": 4} if s.style == "bars" else {"thickness": 1}
        trace["error_x" if s.style == "bars" and plot.horizontal else "error_y"] = {**whiskers, **bar_width}
    return trace


def _shape(line: Line) -> dict[str, Any]:
    """A reference line across the whole plot."""
    across = {"x0": line.value, "x1": line.value, "yref": "paper", "y0": 0, "y1": 1}
    if line.axis == "y":
        across = {"y0": line.value, "y1": line.value, "xref": "paper", "x0": 0, "x1": 1}
    return {"type": "line", **across, "line": {"dash": "dash", "width": 1, "color": REFERENCE}}


def _line_trace(plot: Plot, line: Line) -> dict[str, Any]:
    """A labelled reference line, as a trace from end to end of the series (so that the legend names it)."""
    other = plot.y if line.axis == "x" else plot.x
    if other.scale == "category":
        ends: list[Any] = [other.categories[0], other.categories[-1]]
    else:
        values = [v for s in plot.series for v in (s.y if line.axis == "x" else s.x)]
        ends = [min(values), max(values)]
    at = [line.value, line.value]
    return {
        "type": "scatter",
        "mode": "lines",
        "name": line.label,
        "x": at if line.axis == "x" else ends,
        "y": ends if line.axis == "x" else at,
        "line": {"dash": "dash", "width": 1, "color": REFERENCE},
        "hoverinfo": "skip",
    }
