"""The HTML report's charts, as plotly.js figures (`{"data": [...], "layout": {...}}`), built from the results
model: Bench and CPU per request with their min-max over the repeats, latency CDFs, request timelines, sweep
curves and the compare view's bars. Every figure comes from `stats` (through `model`); this module only
arranges them. A chart with nothing to draw is None."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

import numpy as np

from ....analysis.compare import RowComparison
from ....model import Row
from ....stats import Aggregate, RowStats, failed_mask, ok_latencies_ms

Chart = dict[str, Any]

#: figures of a row that are not drawn: booleans and counts summed over the repeats
NOT_FIGURES = {"requests", "errors", "body_bytes", "late", "missed"}
#: the percentile axis of the latency CDFs: 1 / (1 - p), labelled as percentiles
PERCENTILE_TICKS = ((1, "p0"), (2, "p50"), (10, "p90"), (100, "p99"), (1e3, "p99.9"), (1e4, "p99.99"), (1e5, "p99.999"))
#: at most this many completed requests drawn per worker in a timeline (evenly spaced)
TIMELINE_TICKS = 2000
FONT = {"family": "system-ui, sans-serif", "size": 12}


def medians(rows: Sequence[Row]) -> list[tuple[str, Row, Aggregate]]:
    """(label, row, aggregate) of the rows a chart shows: those with figures that did not fail (the table says
    why the others are absent), the aggregate computed once."""
    names = labels(rows)
    out = []
    for r in rows:
        agg = r.aggregate
        if agg is not None and not r.failed:
            out.append((names[r.client.name], r, agg))
    return out


def labels(rows: Sequence[Row]) -> dict[str, str]:
    """Each row's label, made unique with its name where two rows share one."""
    seen = [r.client.label for r in rows]
    return {r.client.name: r.client.label if seen.count(r.client.label) == 1 else r.client.name for r in rows}


def figures(rows: Sequence[tuple[str, Row, Aggregate]]) -> list[str]:
    """The numeric figures (RowStats fields) that some row drawn has, in the model's order."""
    present = [agg.median for _, _, agg in rows]
    return [
        f.name
        for f in fields(RowStats)
        if f.name not in NOT_FIGURES
        and any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (getattr(m, f.name) for m in present))
    ]


def repeat_values(row: Row, name: str) -> list[float]:
    """One figure of every repeat that produced figures (the repeats the row's medians are taken over)."""
    values = [getattr(r.stats, name) for r in row.runs if r.stats is not None]
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]


def spread(row: Row, name: str) -> tuple[float, float, int] | None:
    """(min, max, repeats) of one figure over the repeats; None with fewer than two."""
    values = repeat_values(row, name)
    return (min(values), max(values), len(values)) if len(values) > 1 else None


def title_of(name: str) -> str:
    """An axis title for a RowStats field: p99_ms -> "P99 (ms)", cpu_us_per_req -> "CPU (us/req)"."""
    special = {
        "bench_ms": "Bench: wall time of the group (ms)",
        "lmean_ms": "LMean: mean worker loop (ms)",
        "throughput_rps": "throughput (requests/s)",
        "cpu_us_per_req": "client CPU per request (us)",
        "peak_rss_mib": "peak RSS (MiB)",
        "bench_over_lmean": "Bench / LMean",
        "offered_rps": "offered rate (requests/s)",
        "late_pct": "late starts (%)",
    }
    if name in special:
        return special[name]
    if m := re.fullmatch(r"(service_)?(mean|max|p(\d+))_ms", name):
        what = "mean" if m[2] == "mean" else "max" if m[2] == "max" else f"P{_percent(m[3])}"
        return f"{'service time ' if m[1] else 'latency '}{what} (ms)"
    return name.replace("_", " ")


def _percent(digits: str) -> str:
    """ "999" -> "99.9": the percentile a pNNN field holds."""
    return f"{100 * int(digits) / 10 ** len(digits):g}"


def _layout(title: str, height: int, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "height": height,
        "margin": {"l": 10, "r": 20, "t": 50, "b": 50},
        "font": FONT,
        "hovermode": "closest",
        **extra,
    }


def bars(rows: Sequence[Row], name: str, title: str, unit: str) -> Chart | None:
    """One figure per row as a horizontal bar (the median) with its min-max over the repeats as whiskers."""
    shown = [(label, r, float(v)) for label, r, agg in medians(rows) if (v := getattr(agg.median, name)) is not None]
    if not shown:
        return None
    lo, hi, text = [], [], []
    for _, r, m in shown:
        s = spread(r, name)
        low, high = (s[0], s[1]) if s else (m, m)
        lo.append(m - low)
        hi.append(high - m)
        text.append(f"min-max {low:.2f}-{high:.2f} {unit} over {s[2]} repeats" if s else "one repeat")
    trace = {
        "type": "bar",
        "orientation": "h",
        "y": [label for label, _, _ in shown],
        "x": [m for _, _, m in shown],
        "error_x": {"type": "data", "symmetric": False, "array": hi, "arrayminus": lo, "thickness": 1.5, "width": 4},
        "customdata": text,
        "hovertemplate": f"%{{y}}<br>median %{{x:.2f}} {unit}<br>%{{customdata}}<extra></extra>",
        "marker": {"color": "#4c78a8"},
    }
    return {
        "data": [trace],
        "layout": _layout(
            title,
            90 + 26 * len(shown),
            xaxis={"title": {"text": f"{unit}; whiskers: min-max over the repeats"}, "rangemode": "tozero"},
            yaxis={"autorange": "reversed", "automargin": True},
            showlegend=False,
        ),
    }


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
        # nearest-rank, as stats.nearest_rank (numpy's inverted_cdf), for every p at once
        values = np.quantile(samples, ps, method="inverted_cdf")
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


def latency_cdf(rows: Sequence[Row], title: str) -> Chart | None:
    """Latency against percentile, both on log axes (the percentile axis as 1 / (1 - p), so p99, p99.9 ...
    are evenly spaced), one trace per row; the legend toggles rows."""
    traces, top = [], 2.0
    for label, r, agg in medians(rows):
        found = _cdf_points(r, agg)
        if found is None:
            continue
        values, ps, n, from_samples = found
        ys = [1 / max(1 - p, 0.5 / n) for p in ps]
        top = max(top, *ys)
        traces.append(
            {
                "type": "scatter",
                "mode": "lines" if from_samples else "lines+markers",
                "name": label + ("" if from_samples else " (percentiles)"),
                "x": values,
                "y": ys,
                "customdata": [f"p{100 * p:.4g}" for p in ps],
                "hovertemplate": "%{fullData.name}<br>%{customdata}: %{x:.3f} ms<extra></extra>",
                "line": {"width": 1.6, "dash": "solid" if from_samples else "dot"},
            }
        )
    if not traces:
        return None
    ticks = [(v, t) for v, t in PERCENTILE_TICKS if v <= top * 1.5]
    return {
        "wide": True,
        "toggle": True,
        "data": traces,
        "layout": _layout(
            title,
            520,
            xaxis={"type": "log", "title": {"text": "request latency (ms, log scale)"}},
            yaxis={
                "type": "log",
                "title": {"text": "percentile"},
                "automargin": True,
                "tickvals": [v for v, _ in ticks],
                "ticktext": [t for _, t in ticks],
            },
            legend={"font": {"size": 10}},
        ),
    }


def timeline(row: Row, title: str) -> Chart | None:
    """Every request of the row's last repeat with samples, as a tick at the moment it completed, one lane per
    worker: parallel workers fill every lane all along, serialized ones (a held GIL) take turns."""
    raw = next((r.raw for r in reversed(row.runs) if r.raw and all("start_ns" in w for w in r.raw["workers"])), None)
    if raw is None:
        return None
    marker = {"symbol": "line-ns-open", "size": 9, "line": {"width": 1}}
    data: list[dict[str, Any]] = []
    thinned = any_failed = False
    for i, w in enumerate(raw["workers"]):
        done = (np.asarray(w["start_ns"], dtype=np.float64) + np.asarray(w["latencies_ns"], dtype=np.float64)) / 1e6
        failed = failed_mask(w)
        if done.size > TIMELINE_TICKS:
            keep = np.unique(np.linspace(0, done.size - 1, TIMELINE_TICKS).astype(int))
            done, failed, thinned = done[keep], failed[keep], True
        # one trace per worker and outcome on its lane (y0, no y array): the page carries the times alone
        for name, mask, color in (("completed", ~failed, "#4c78a8"), ("failed", failed, "#e45756")):
            if not mask.any():
                continue
            any_failed |= name == "failed"
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": name,
                    "legendgroup": name,
                    "showlegend": False,
                    "x": np.round(done[mask], 3).tolist(),
                    "y0": i,
                    "dy": 0,
                    "marker": {**marker, "color": color},
                    "hovertemplate": f"worker {i}: {name} at %{{x:.2f}} ms<extra></extra>",
                }
            )
    wall = raw["wall_ns"] / 1e6
    workers = len(raw["workers"])
    note = f" ({TIMELINE_TICKS} evenly spaced ticks per worker)" if thinned else ""
    note += "; red ticks failed" if any_failed else ""
    return {
        "wide": True,
        "data": data,
        "layout": _layout(
            f"{title}: Bench {wall:.1f} ms in the repeat shown (dashed line){note}",
            110 + 18 * workers,
            xaxis={"title": {"text": "time since the group started (ms); each tick is one completed request"}},
            yaxis={"title": {"text": "worker"}, "automargin": True, "dtick": 1, "range": [-0.6, workers - 0.4]},
            shapes=[
                {
                    "type": "line",
                    "x0": wall,
                    "x1": wall,
                    "yref": "paper",
                    "y0": 0,
                    "y1": 1,
                    "line": {"dash": "dash", "width": 1, "color": "black"},
                }
            ],
            showlegend=False,
        ),
    }


def _axis(values: Sequence[Any]) -> dict[str, Any]:
    """A sweep's x axis: log for numbers spanning decades, linear for other numbers, else categories in order."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        low, high = min(values), max(values)
        return {"type": "log" if low > 0 and high / low >= 20 else "linear"}
    return {"type": "category", "categoryorder": "array", "categoryarray": [str(v) for v in values]}


def sweep_curve(
    points: Sequence[tuple[Any, Sequence[tuple[str, Row, Aggregate]]]], name: str, axis: str, title: str
) -> dict[str, Any] | None:
    """One figure (RowStats field) of every row against the swept value, with its min-max over the repeats;
    `points`: per swept value, (label, row, its aggregate) of the rows drawn (`medians`)."""
    values = [v for v, _ in points]
    x_axis = _axis(values)
    series: dict[str, tuple[list[Any], list[float], list[float], list[float]]] = {}
    for value, rows in points:
        for label, r, agg in rows:
            median = getattr(agg.median, name)
            if median is None or isinstance(median, bool):
                continue
            s = spread(r, name)
            xs, ys, lo, hi = series.setdefault(label, ([], [], [], []))
            xs.append(value if x_axis["type"] != "category" else str(value))
            ys.append(float(median))
            lo.append(float(median) - (s[0] if s else float(median)))
            hi.append((s[1] if s else float(median)) - float(median))
    if not series:
        return None
    every = [y for _, ys, _, _ in series.values() for y in ys]
    y_log = min(every) > 0 and max(every) / min(every) >= 20
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": label,
            "x": xs,
            "y": ys,
            "error_y": {"type": "data", "symmetric": False, "array": hi, "arrayminus": lo, "thickness": 1},
            "hovertemplate": f"%{{fullData.name}}<br>{axis} %{{x}}: %{{y:.4g}}<extra></extra>",
        }
        for label, (xs, ys, lo, hi) in series.items()
    ]
    return {
        "data": data,
        "layout": _layout(
            title,
            480,
            xaxis={**x_axis, "title": {"text": axis}},
            yaxis={"type": "log" if y_log else "linear", "title": {"text": title_of(name)}, "automargin": True},
            legend={"font": {"size": 10}},
        ),
    }


def with_variants(names: Sequence[str], default: str, build: Callable[[str], dict[str, Any] | None]) -> Chart | None:
    """A chart whose figure is chosen in the page (a menu of `names`), starting at `default`."""
    variants = {n: c for n in names if (c := build(n)) is not None}
    if not variants:
        return None
    first = default if default in variants else next(iter(variants))
    return {**variants[first], "variants": variants, "selected": first, "titles": {n: title_of(n) for n in variants}}


def compare_bars(rows: Sequence[RowComparison]) -> Chart | None:
    """Bench of A and of B per row, the whiskers their min-max over the repeats."""
    both = [r for r in rows if r.a is not None and r.b is not None]
    if not both:
        return None
    data = []
    for side, color in (("A", "#9ecae9"), ("B", "#4c78a8")):
        aggs = [r.a if side == "A" else r.b for r in both]
        med = [a.median.bench_ms for a in aggs if a is not None]
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": side,
                "y": [r.label for r in both],
                "x": med,
                "error_x": {
                    "type": "data",
                    "symmetric": False,
                    "array": [a.bench_max_ms - m for a, m in zip(aggs, med, strict=True) if a is not None],
                    "arrayminus": [m - a.bench_min_ms for a, m in zip(aggs, med, strict=True) if a is not None],
                    "thickness": 1.5,
                    "width": 3,
                },
                "marker": {"color": color},
                "hovertemplate": f"%{{y}}<br>{side}: median Bench %{{x:.2f}} ms<extra></extra>",
            }
        )
    return {
        "data": data,
        "layout": _layout(
            "Bench of A and B (median; whiskers: min-max over the repeats)",
            110 + 40 * len(both),
            barmode="group",
            xaxis={"title": {"text": "Bench (ms)"}, "rangemode": "tozero"},
            yaxis={"autorange": "reversed", "automargin": True},
        ),
    }
