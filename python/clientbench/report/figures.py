"""Every plot a report draws, defined once for both renderers: what it shows (its series, built from the results
model: `Row.aggregate` and `stats`), its axes (a title with the unit, a linear, log or category scale, the tick
positions and labels), its reference lines (the SLO, the Bench of a timeline) and its title. report/export/plots.py
draws a definition as a PNG (matplotlib), report/export/html/charts.py as a plotly.js figure; neither decides what
a plot shows, so the two agree. A plot with nothing to draw is None, and so is a `Drawing` with no plot.

The plots: the bars of one figure per row (Bench with LMean beside it, client CPU) and of the compare view,
latency by percentile, a row's request timeline, one figure against a swept value, and one client's latency
against the offered rate. report/drawing.py turns a report's `Figure` (report/base.py) into the plots it draws."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..analysis import modes
from ..metrics import BY_FIELD, axis_title, drawn
from ..model import Row
from ..stats import Aggregate, RowStats, failed_mask, nearest_ranks, ok_latencies_ms

if TYPE_CHECKING:
    from ..analysis.compare import RowComparison

Scale = Literal["linear", "log", "category"]
Style = Literal["lines", "lines+markers", "markers", "bars", "ticks"]

#: series colours in order (matplotlib's tab10, plotly.js's default colorway, then tab20's light shades, so that
#: an 11th to 20th row does not repeat a colour): a row's colour in both renderers
PALETTE = (
    *("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"),
    *("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"),
)
COMPLETED, FAILED, REFERENCE = "#4c78a8", "#e45756", "black"
#: a ranked chart's colour per group of rows (analysis/modes.py's `group`): the native rows and the floor grey,
#: Python's threads blue (the GIL held red, released green), each event loop a colour of its own
GROUP_COLOURS = {
    modes.NATIVE: "#525252",
    modes.FLOOR: "#b5b5b5",
    modes.SERIAL: "#bcbd22",
    modes.THREADS: "#1f77b4",
    f"{modes.THREADS}, GIL held": "#d62728",
    f"{modes.THREADS}, GIL released": "#2ca02c",
    modes.ASYNCIO: "#ff7f0e",
    "uvloop": "#9467bd",
    "rloop": "#8c564b",
}
#: the percentile axis: p drawn at 1 / (1 - p), so p90, p99, p99.9 ... are evenly spaced on a log axis
PERCENTILE_TICKS = ((1, "p0"), (2, "p50"), (10, "p90"), (100, "p99"), (1e3, "p99.9"), (1e4, "p99.99"), (1e5, "p99.999"))
#: at most this many completed requests drawn per worker in a timeline (evenly spaced)
TIMELINE_TICKS = 2000
#: at most this many worker lanes labelled on a timeline's axis
LANE_LABELS = 10
#: positive numbers spanning at least this factor are drawn on a log axis
LOG_SPAN = 10
#: what a figure's bars are drawn beside: Bench with LMean (a group far slower than its workers' loops ran them
#: one after another, e.g. under a held GIL)
BESIDE = {"bench_ms": ("lmean_ms",)}
#: what a sweep's plot (plots/sweep-<dimension>.png) draws against the swept value, side by side
SWEPT = ("bench_ms", "throughput_rps")
WHISKERS = "whiskers: min-max over the repeats"


@dataclass(frozen=True)
class Axis:
    title: str  # with the unit (and ", log scale" where the plot says it)
    scale: Scale = "linear"
    ticks: tuple[tuple[float, str], ...] = ()  # positions and labels; none: the renderer places its own
    categories: tuple[str, ...] = ()  # a category axis: its values, in order from the origin
    reversed: bool = False  # categories from the top down (bars)
    from_zero: bool = False
    limits: tuple[float, float] | None = None
    name: str = ""  # what a value is called where a point is described (the page's hover); "" says nothing
    unit: str = ""
    digits: str = ".4g"  # a value's format there (Python's and d3's format spec)


@dataclass(frozen=True)
class Series:
    name: str  # its legend entry
    x: tuple[Any, ...]
    y: tuple[Any, ...]  # bars: the categories; ticks: empty (every x is on `lane`)
    style: Style
    color: str
    dash: Literal["solid", "dot", "dash"] = "solid"
    marker: Literal["circle", "x", "dot"] = "circle"
    low: tuple[float, ...] = ()  # whiskers along the value axis: how far each point's range goes below it ...
    high: tuple[float, ...] = ()  # ... and above it
    notes: tuple[str, ...] = ()  # per point, what the page says of it on hover
    labels: tuple[str, ...] = ()  # per bar, its value written beside it where nothing shows it on hover (PNG)
    lane: int = 0  # ticks: the lane every x is drawn on
    legend: bool = True
    hidden: bool = False  # the page draws it a click away (in the legend only); a PNG draws it


@dataclass(frozen=True)
class Line:
    """A reference line across the plot: at x = value (`axis` "x", a vertical line) or y = value."""

    axis: Literal["x", "y"]
    value: float
    label: str = ""  # in the legend when given; else the plot's title says what it is


@dataclass(frozen=True)
class Plot:
    title: str
    x: Axis
    y: Axis
    series: tuple[Series, ...]
    lines: tuple[Line, ...] = ()
    horizontal: bool = False  # bars along x, one category per row on y
    legend: bool = True
    wide: bool = False  # a dense x axis: the page gives it the whole width
    toggle: bool = False  # one series per row, which the page can show or hide all at once
    overlay: bool = False  # bars: each category is in one series (its group), not side by side with the others
    stacked: bool = False  # bars: each category's series one after the other along the value axis (phases.py)


@dataclass(frozen=True)
class Drawing:
    """A report's Figure: its plots under one title, stacked (sharing the x axis) or side by side."""

    title: str
    plots: tuple[Plot, ...]
    columns: int = 1
    share_x: bool = False
    shared_legend: bool = False  # every plot has the same series: one legend, with the last plot


# -- the rows a plot shows, and their figures ------------------------------------------------------


def labels(rows: Sequence[Row]) -> dict[str, str]:
    """Each row's label, made unique with its name where two rows share one."""
    seen = [r.client.label for r in rows]
    return {r.client.name: r.client.label if seen.count(r.client.label) == 1 else r.client.name for r in rows}


def medians(rows: Sequence[Row]) -> list[tuple[str, Row, Aggregate]]:
    """(label, row, aggregate) of the rows a plot shows: those with figures that did not fail (the table says
    why the others are absent), the aggregate computed once."""
    names = labels(rows)
    out = []
    for r in rows:
        agg = r.aggregate
        if agg is not None and not r.failed:
            out.append((names[r.client.name], r, agg))
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def figure_names(rows: Sequence[tuple[str, Row, Aggregate]]) -> list[str]:
    """The figures (RowStats fields) that some row drawn has and a plot can draw (metrics.drawn: not a count
    summed over the repeats), in the model's order."""
    present = [agg.median for _, _, agg in rows]
    return [f.name for f in fields(RowStats) if drawn(f.name) and any(_is_number(getattr(m, f.name)) for m in present)]


# -- axes ------------------------------------------------------------------------------------------


def scale_of(values: Sequence[Any]) -> Scale:
    """Categories unless every value is a number; log for positive numbers spanning at least LOG_SPAN."""
    if not values or not all(_is_number(v) for v in values):
        return "category"
    low, high = min(values), max(values)
    return "log" if low > 0 and high / low >= LOG_SPAN else "linear"


def titled(title: str, scale: Scale) -> str:
    """An axis title that says a log scale: "latency (ms)" -> "latency (ms, log scale)"."""
    if scale != "log":
        return title
    return f"{title[:-1]}, log scale)" if title.endswith(")") else f"{title} (log scale)"


def number(v: float) -> str:
    """A tick label: 1048576, 0.5, 2.5e-05."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _value_axis(
    title: str, values: Sequence[float], unit: str = "", name: str = "", digits: str = ".4g", say_log: bool = True
) -> Axis:
    """A numeric axis, log where `values` span LOG_SPAN; its title says so unless `say_log` is off (a sweep's
    axes, whose menu names a figure by its title alone)."""
    scale: Scale = "log" if scale_of(values) == "log" else "linear"
    return Axis(titled(title, scale) if say_log else title, scale, name=name, unit=unit, digits=digits)


def _swept_axis(title: str, values: Sequence[Any], say_log: bool = True) -> Axis:
    """The axis of swept values (a sweep's points, the offered rates): a tick at every value, or categories in
    the order they ran."""
    scale = scale_of(values)
    if scale == "category":
        categories = tuple(dict.fromkeys(str(v) for v in values))
        return Axis(title, "category", categories=categories, name=title)
    ticks = tuple((v, number(v)) for v in sorted(set(values)))
    return Axis(titled(title, scale) if say_log else title, scale, ticks=ticks, name=title)


# -- bars ------------------------------------------------------------------------------------------


def bars(rows: Sequence[Row], name: str, title: str, unit: str) -> Plot | None:
    """One figure per row that did not fail as a horizontal bar (the median) with its min-max over the repeats
    as whiskers; Bench with LMean beside it (BESIDE)."""
    shown = [(label, r, agg) for label, r, agg in medians(rows) if getattr(agg.median, name) is not None]
    if not shown:
        return None
    categories = tuple(label for label, _, _ in shown)
    series = []
    for i, n in enumerate((name, *BESIDE.get(name, ()))):
        values = [getattr(agg.median, n) for _, _, agg in shown]
        if any(v is None for v in values):
            continue
        low, high, notes = [], [], []
        for (_, _, agg), m in zip(shown, values, strict=True):
            s = agg.spread(n)
            lo, hi = (s.low, s.high) if s else (m, m)
            low.append(float(m) - lo)
            high.append(hi - float(m))
            notes.append(f"min-max {lo:.2f}-{hi:.2f} {unit} over {s.n} repeats" if s else "one repeat")
        series.append(
            Series(
                axis_title(n),
                tuple(float(v) for v in values),
                categories,
                "bars",
                PALETTE[i],
                low=tuple(low),
                high=tuple(high),
                notes=tuple(notes),
                labels=tuple(f"{float(v):.1f}" for v in values),
            )
        )
    return Plot(
        title,
        Axis(f"{unit}, median; {WHISKERS}", from_zero=True, name="median", unit=unit, digits=".2f"),
        Axis("", "category", categories=categories, reversed=True),
        tuple(series),
        horizontal=True,
        legend=len(series) > 1,
    )


def ranked(rows: Sequence[Row], name: str, title: str) -> Plot | None:
    """One figure per row that did not fail as a horizontal bar, the best first (metrics.py: which way is better;
    a row pinned to one worker last), coloured by the row's group (analysis/modes.py: native, floor, Python's sync
    threads with the GIL held or released, async on each event loop; one legend entry each), on a log axis where
    the values span LOG_SPAN, with its min-max over the repeats as whiskers; what BESIDE names as a mark on the
    row (Bench's LMean)."""
    metric = BY_FIELD[name]
    shown = [(label, r, agg) for label, r, agg in medians(rows) if _is_number(getattr(agg.median, name))]
    if not shown:
        return None
    sign = 1.0 if metric.smaller else -1.0
    # a row of another workload (W=1) goes last, whatever its figure
    shown.sort(key=lambda item: (modes.mode(item[1].client) == modes.SERIAL, sign * getattr(item[2].median, name)))
    categories = tuple(label for label, _, _ in shown)
    top = float(getattr(shown[0][2].median, name))
    groups: dict[str, list[tuple[str, Row, Aggregate]]] = {}
    for item in shown:
        groups.setdefault(modes.group(item[1].client), []).append(item)
    order = sorted(groups, key=modes.group_order)
    series = [_ranked_bars(modes.group_name(key), groups[key], name, _group_colour(key, order), top) for key in order]
    every: list[float] = [v for s in series for v in s.x]
    for n in BESIDE.get(name, ()):
        marks = [(label, float(v)) for label, _, agg in shown if _is_number(v := getattr(agg.median, n))]
        if marks:
            every += [v for _, v in marks]
            short = BY_FIELD[n].label.split("(")[0]  # LMean: the legend's entries share the chart's width
            xs, ys = tuple(v for _, v in marks), tuple(lb for lb, _ in marks)
            series.append(Series(short, xs, ys, "markers", REFERENCE, marker="dot"))
    scale: Scale = "log" if scale_of(every) == "log" else "linear"
    unit = metric.unit
    return Plot(
        f"{title}; {WHISKERS}",
        Axis(
            f"{titled(axis_title(name), scale)}, median",
            scale,
            from_zero=scale == "linear",
            name="median",
            unit=unit,
            digits=".2f",
        ),
        Axis("", "category", categories=categories, reversed=True),
        tuple(series),
        horizontal=True,
        overlay=True,
    )


def _group_colour(key: str, order: Sequence[str]) -> str:
    return GROUP_COLOURS.get(key) or PALETTE[(10 + order.index(key)) % len(PALETTE)]


def _ranked_bars(legend: str, items: Sequence[tuple[str, Row, Aggregate]], name: str, color: str, top: float) -> Series:
    """One group's bars of a ranked plot, each with its min-max and how far it is from the top row."""
    unit = BY_FIELD[name].unit
    values = [float(getattr(agg.median, name)) for _, _, agg in items]
    low, high, notes = [], [], []
    for (_, _, agg), m in zip(items, values, strict=True):
        s = agg.spread(name)
        lo, hi = (s.low, s.high) if s else (m, m)
        low.append(m - lo)
        high.append(hi - m)
        spread = f"min-max {lo:.2f}-{hi:.2f} {unit} over {s.n} repeats" if s else "one repeat"
        notes.append(f"{m / top:.2f}x the top row; {spread}" if top else spread)
    return Series(
        legend,
        tuple(values),
        tuple(label for label, _, _ in items),
        "bars",
        color,
        low=tuple(low),
        high=tuple(high),
        notes=tuple(notes),
        labels=tuple(f"{v:.1f}" for v in values),
    )


def compare(rows: Sequence[RowComparison]) -> Plot | None:
    """Bench of run A and of run B per row found in both, the whiskers their min-max over the repeats."""
    both = [(r.label, r.a, r.b) for r in rows if r.a is not None and r.b is not None]
    if not both:
        return None
    categories = tuple(label for label, _, _ in both)
    series = []
    for side, color, aggs in (("A", "#9ecae9", [a for _, a, _ in both]), ("B", "#4c78a8", [b for _, _, b in both])):
        med = [a.median.bench_ms for a in aggs]
        series.append(
            Series(
                side,
                tuple(med),
                categories,
                "bars",
                color,
                low=tuple(m - a.bench_min_ms for a, m in zip(aggs, med, strict=True)),
                high=tuple(a.bench_max_ms - m for a, m in zip(aggs, med, strict=True)),
                notes=tuple(f"{side}: {a.repeats} repeats" for a in aggs),
                labels=tuple(f"{m:.1f}" for m in med),
            )
        )
    return Plot(
        "Bench of A and B (median; whiskers: min-max over the repeats)",
        Axis(f"Bench (ms), median; {WHISKERS}", from_zero=True, name="median Bench", unit="ms", digits=".2f"),
        Axis("", "category", categories=categories, reversed=True),
        tuple(series),
        horizontal=True,
    )


# -- latency by percentile -------------------------------------------------------------------------


def _cdf_points(row: Row, agg: Aggregate) -> tuple[list[float], list[float], float, bool] | None:
    """(latency ms, p, samples per curve, from samples) along the row's latency distribution: from the pooled
    samples of its repeats when the raw documents are here, else through the table's percentiles (medians over
    the repeats, each repeat's own samples)."""
    docs = [run.raw for run in row.runs if run.raw is not None and run.stats is not None]
    parts = [ok_latencies_ms(d) for d in docs]
    samples = np.concatenate(parts) if parts else np.empty(0)
    if samples.size >= 2:
        n = samples.size
        tail = 1 - np.logspace(-1, math.log10(1 / n), 160)  # dense towards the tail: p90 .. the last sample
        ps = np.unique(np.clip(np.concatenate([np.linspace(0.0, 0.9, 91), tail, [1.0]]), 0.0, 1.0))
        values = nearest_ranks(samples, ps)
        return [float(v) for v in values], [float(p) for p in ps], float(n), True
    points: list[tuple[float, float]] = []
    for f in fields(RowStats):
        value = getattr(agg.median, f.name)
        if value is None or not (m := re.fullmatch(r"p(\d+)_ms", f.name)):
            continue
        points.append((int(m[1]) / 10 ** len(m[1]), float(value)))
    if agg.median.max_ms is not None:
        points.append((1.0, float(agg.median.max_ms)))
    points.sort()
    per_repeat = (agg.median.requests - agg.median.errors) / max(agg.repeats, 1)
    return ([v for _, v in points], [p for p, _ in points], max(per_repeat, 1.0), False) if len(points) >= 2 else None


def latency(rows: Sequence[Row], title: str, shown: Collection[str] = ()) -> Plot | None:
    """Latency against percentile, both on log axes (the percentile axis as 1 / (1 - p)), one series per row
    that did not fail: from the pooled samples of its repeats, else dotted through the table's percentiles. With
    `shown` (rows' names), the others are hidden (a click away on the page)."""
    series, top = [], 2.0
    for i, (label, r, agg) in enumerate(medians(rows)):
        found = _cdf_points(r, agg)
        if found is None:
            continue
        values, ps, n, from_samples = found
        ys = tuple(1 / max(1 - p, 0.5 / n) for p in ps)
        top = max(top, *ys)
        series.append(
            Series(
                label + ("" if from_samples else " (percentiles)"),
                tuple(values),
                ys,
                "lines" if from_samples else "lines+markers",
                PALETTE[i % len(PALETTE)],
                dash="solid" if from_samples else "dot",
                notes=tuple(f"p{100 * p:.4g}" for p in ps),
                hidden=bool(shown) and r.client.name not in shown,
            )
        )
    if not series:
        return None
    ticks = tuple((float(v), t) for v, t in PERCENTILE_TICKS if v <= top * 1.5)
    return Plot(
        title,
        Axis("request latency (ms, log scale)", "log", name="latency", unit="ms", digits=".3f"),
        Axis("percentile (log scale of 1 / (1 - p))", "log", ticks=ticks),
        tuple(series),
        wide=True,
        toggle=True,
    )


# -- a row's request timeline ----------------------------------------------------------------------


def timeline(row: Row, title: str) -> Plot | None:
    """Every request of the row's last repeat with samples, as a tick at the moment it completed (red when it
    failed), one lane per worker, the group's Bench a dashed line: parallel workers fill every lane all along,
    serialized ones (a held GIL) take turns. At most TIMELINE_TICKS evenly spaced ticks per worker."""
    raw = next((r.raw for r in reversed(row.runs) if r.raw and all("start_ns" in w for w in r.raw["workers"])), None)
    if raw is None:
        return None
    series = []
    thinned = any_failed = False
    for i, w in enumerate(raw["workers"]):
        done = (np.asarray(w["start_ns"], dtype=np.float64) + np.asarray(w["latencies_ns"], dtype=np.float64)) / 1e6
        failed = failed_mask(w)
        if done.size > TIMELINE_TICKS:
            keep = np.unique(np.linspace(0, done.size - 1, TIMELINE_TICKS).astype(int))
            done, failed, thinned = done[keep], failed[keep], True
        for name, mask, color in (("completed", ~failed, COMPLETED), ("failed", failed, FAILED)):
            if mask.any():
                any_failed |= name == "failed"
                times = tuple(np.round(done[mask], 3).tolist())
                series.append(Series(name, times, (), "ticks", color, lane=i, legend=False))
    wall = raw["wall_ns"] / 1e6
    workers = len(raw["workers"])
    note = f" ({TIMELINE_TICKS} evenly spaced ticks per worker)" if thinned else ""
    note += "; red ticks failed" if any_failed else ""
    step = math.ceil(workers / LANE_LABELS)
    return Plot(
        f"{title}: Bench {wall:.1f} ms in the repeat shown (dashed line){note}",
        Axis("time since the group started (ms); each tick is one completed request", unit="ms", digits=".2f"),
        Axis(
            "worker",
            ticks=tuple((float(i), str(i)) for i in range(0, workers, step)),
            limits=(-0.6, workers - 0.4),
            name="worker",
        ),
        tuple(series),
        lines=(Line("x", wall),),
        legend=False,
        wide=True,
    )


# -- a figure against a swept value ----------------------------------------------------------------


def sweep(
    points: Sequence[tuple[Any, Sequence[tuple[str, Row, Aggregate]]]], name: str, axis: str, title: str
) -> Plot | None:
    """One figure (RowStats field) of every row against the swept value, with its min-max over the repeats;
    `points`: per swept value, (label, row, its aggregate) of the rows drawn (`medians`)."""
    x_axis = _swept_axis(axis, [v for v, _ in points], say_log=False)
    series: dict[str, tuple[list[Any], list[float], list[float], list[float]]] = {}
    for value, rows in points:
        for label, _, agg in rows:
            median = getattr(agg.median, name)
            if not _is_number(median):
                continue
            s = agg.spread(name)
            xs, ys, lo, hi = series.setdefault(label, ([], [], [], []))
            xs.append(str(value) if x_axis.scale == "category" else value)
            ys.append(float(median))
            lo.append(float(median) - (s.low if s else float(median)))
            hi.append((s.high if s else float(median)) - float(median))
    if not series:
        return None
    every = [y for _, ys, _, _ in series.values() for y in ys]
    return Plot(
        title,
        x_axis,
        _value_axis(axis_title(name), every, name=axis_title(name), say_log=False),
        tuple(
            Series(
                label,
                tuple(xs),
                tuple(ys),
                "lines+markers",
                PALETTE[i % len(PALETTE)],
                low=tuple(lo),
                high=tuple(hi),
            )
            for i, (label, (xs, ys, lo, hi)) in enumerate(series.items())
        ),
    )


# -- one client's latency against the offered rate -------------------------------------------------


def rate(points: Sequence[tuple[Any, Sequence[Row]]], title: str, axis: str, slo_ms: float | None) -> Plot | None:
    """One client's corrected P50 and P99 and its service-time P99 against the offered rate; the rates it
    saturated at are marked, the SLO is a dashed line."""
    data = [
        (float(offered), agg.median)
        for offered, rows in points
        for r in rows
        if not r.failed and (agg := r.aggregate) is not None and agg.median.p99_ms is not None
    ]
    if not data:
        return None

    def of(field: str, when: bool = True) -> tuple[tuple[float, ...], tuple[float, ...]]:
        found = [(x, v) for x, s in data if (v := getattr(s, field)) is not None and (s.saturated or when)]
        return tuple(x for x, _ in found), tuple(float(v) for _, v in found)

    series = [
        Series("P50, corrected (from the intended start)", *of("p50_ms"), "lines+markers", PALETTE[0]),
        Series("P99, corrected", *of("p99_ms"), "lines+markers", PALETTE[1]),
        Series("P99 of the service time (from the actual start)", *of("service_p99_ms"), "lines+markers", PALETTE[2],
               dash="dot", marker="dot"),
        Series("saturated (achieved < 99% of offered)", *of("p99_ms", False), "markers", PALETTE[3], marker="x"),
    ]  # fmt: skip
    series = [s for s in series if s.x]
    lines = (Line("y", slo_ms, f"SLO: P99 {slo_ms:g} ms"),) if slo_ms is not None else ()
    every = [y for s in series for y in s.y] + [line.value for line in lines]
    return Plot(
        title,
        _swept_axis(axis, [x for x, _ in data]),
        _value_axis("latency (ms)", every, name="latency", unit="ms", digits=".3f"),
        tuple(series),
        lines=lines,
    )
