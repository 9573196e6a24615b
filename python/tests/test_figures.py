"""One definition per plot (report/figures.py), two renderers: every plot built from rows is drawn by the PNG
renderer (report/export/plots.py, matplotlib) and the HTML one (report/export/html/charts.py, plotly.js) with the
same title, axis titles, scales, ticks, series (their points and whiskers), legend and reference lines; and a plot
with nothing to draw gives no chart and no file."""

from __future__ import annotations

import copy
import dataclasses
import math

import matplotlib.pyplot as plt
import pytest
from clientbench.analysis.compare import compare_rows
from clientbench.model import DriverRun, Row, RunStatus
from clientbench.report import Figure, Report
from clientbench.report import figures as defs
from clientbench.report.drawing import drawing
from clientbench.report.export import export, plots
from clientbench.report.export.html import charts
from clientbench.stats import ok_latencies_ms, row_stats
from matplotlib.collections import EventCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedFormatter, FixedLocator
from support.rows import client, histogram_doc, make_row, open_row, raw, results, row


def same(a, b):
    """Equal, numbers within 1e-9 of each other (the renderers add and subtract whiskers in their own order)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


# -- what each renderer drew, in the same terms ----------------------------------------------------


def _mpl_axis(ax, which):
    axis = ax.xaxis if which == "x" else ax.yaxis
    locator, formatter = axis.get_major_locator(), axis.get_major_formatter()
    ticks = None
    if isinstance(locator, FixedLocator) and isinstance(formatter, FixedFormatter):
        ticks = [(float(v), t) for v, t in zip(locator.locs, formatter.seq, strict=True)]
    scale = ax.get_xscale() if which == "x" else ax.get_yscale()
    return {"title": axis.get_label_text(), "scale": scale, "ticks": ticks, "reversed": bool(axis.get_inverted())}


def _mpl_whiskers(ax, gid):
    for c in ax.containers:
        bars = isinstance(c, BarContainer) and c.patches[0].get_gid() == gid
        if bars and c.errorbar is not None:
            c = c.errorbar
        elif not (isinstance(c, ErrorbarContainer) and c.lines[0] is not None and c.lines[0].get_gid() == gid):
            continue
        segments = c.lines[2][0].get_segments()
        along = 0 if bars else 1
        return [(float(s[0][along]), float(s[1][along])) for s in segments]
    return None


def _mpl(ax, horizontal=False):
    """The plot matplotlib drew on `ax`: a category is at its index."""
    series = {}
    for a in ax.findobj(lambda a: str(a.get_gid() or "").startswith("s")):
        gid = a.get_gid()
        if isinstance(a, Line2D):
            series[gid] = {"x": [float(v) for v in a.get_xdata()], "y": [float(v) for v in a.get_ydata()]}
        elif isinstance(a, EventCollection):
            series[gid] = {"x": [float(v) for v in a.get_positions()], "lane": a.get_lineoffset()}
        elif isinstance(a, Rectangle):
            bar = series.setdefault(gid, {"x": [], "y": []})
            bar["x"].append(float(a.get_width()))
            bar["y"].append(float(round(a.get_y() + a.get_height() / 2)))
    for gid, s in series.items():
        s["whiskers"] = _mpl_whiskers(ax, gid)
    lines = []
    for a in ax.findobj(lambda a: str(a.get_gid() or "").startswith("line")):
        vertical = a.get_xdata()[0] == a.get_xdata()[1]
        at = a.get_xdata()[0] if vertical else a.get_ydata()[0]
        lines.append(("x" if vertical else "y", float(at), a.get_label().replace("_nolegend_", "")))
    legend = ax.get_legend()
    return {
        "title": ax.get_title("center") or ax.get_title("left"),
        "x": _mpl_axis(ax, "x"),
        "y": _mpl_axis(ax, "y"),
        "series": [series[k] for k in sorted(series, key=lambda k: int(k[1:]))],
        "lines": sorted(lines),
        "legend": [t.get_text() for t in legend.get_texts()] if legend is not None else [],
    }


def _plotly_axis(a):
    if a["type"] == "category":
        ticks = [(float(i), c) for i, c in enumerate(a["categoryarray"])]
    else:
        ticks = [(float(v), t) for v, t in zip(a["tickvals"], a["ticktext"], strict=True)] if "tickvals" in a else None
    scale = "log" if a["type"] == "log" else "linear"
    return {"title": a["title"]["text"], "scale": scale, "ticks": ticks, "reversed": a.get("autorange") == "reversed"}


def _plotly(chart):
    """The chart plotly.js draws, in the terms of `_mpl`: categories by their index."""
    layout = chart["layout"]
    at = {k: {c: float(i) for i, c in enumerate(layout[f"{k}axis"].get("categoryarray", []))} for k in "xy"}

    def coords(values, k):
        return [at[k][v] if at[k] else float(v) for v in values]

    series, lines, legend = [], [], []
    for t in chart["data"]:
        if t.get("hoverinfo") == "skip":  # a labelled reference line
            vertical = t["x"][0] == t["x"][1]
            lines.append(("x" if vertical else "y", float(t["x"][0] if vertical else t["y"][0]), t["name"]))
            legend.append(t["name"])
            continue
        if t.get("showlegend", True) and layout["showlegend"]:
            legend.append(t["name"])
        if "y0" in t:
            series.append({"x": [float(v) for v in t["x"]], "lane": t["y0"], "whiskers": None})
            continue
        s = {"x": coords(t["x"], "x"), "y": coords(t["y"], "y"), "whiskers": None}
        err = t.get("error_x") or t.get("error_y")
        if err:
            values = s["x"] if "error_x" in t else s["y"]
            s["whiskers"] = [
                (float(v - lo), float(v + hi))
                for v, lo, hi in zip(values, err["arrayminus"], err["array"], strict=True)
            ]
        series.append(s)
    for shape in layout.get("shapes", []):
        vertical = shape.get("yref") == "paper"
        lines.append(("x" if vertical else "y", float(shape["x0"] if vertical else shape["y0"]), ""))
    return {
        "title": layout["title"]["text"],
        "x": _plotly_axis(layout["xaxis"]),
        "y": _plotly_axis(layout["yaxis"]),
        "series": series,
        "lines": sorted(lines),
        "legend": legend,
    }


def drawn(plot):
    """What both renderers drew of one plot, once each: (PNG, HTML)."""
    fig = plots.render(defs.Drawing(plot.title, (plot,)))
    try:
        png = _mpl(fig.axes[0])
    finally:
        plt.close(fig)
    return png, _plotly(charts.chart(plot))


def agree(plot):
    png, html = drawn(plot)
    assert same(png, html), (png, html)
    return png


# -- rows --------------------------------------------------------------------------------------------


def _rows():
    rows = [row("py-held", gil="held", serial=True), row("py-released", gil="released"), row("native", gil=None)]
    for r, c in zip(rows, ("C", "B", "A"), strict=True):  # three distinct labels
        r.client = client(r.client.name, gil=r.client.gil, interpreter=c)
    return rows


def _without_raw(r):
    """The row as results.json has it: figures, no raw documents."""
    r = copy.deepcopy(r)
    for run in r.runs:
        run.raw = None
    return r


# -- the plots ---------------------------------------------------------------------------------------


def test_latency_by_percentile_from_the_samples():
    rows = [*_rows(), make_row("ok", "crash")]  # the failed row is not drawn
    plot = defs.latency(rows, "Request latency")
    png = agree(plot)
    assert [s.name for s in plot.series] == [r.client.label for r in rows[:3]] == png["legend"]
    assert png["x"]["scale"] == png["y"]["scale"] == "log"
    assert png["x"]["title"] == "request latency (ms, log scale)" and png["x"]["ticks"] is None
    # 300 samples per row: the last one is drawn at 1 / (0.5 / 300) = 600, p99.9 (1,000) is past the top
    assert [t for _, t in png["y"]["ticks"]] == ["p0", "p50", "p90", "p99"]
    assert png["y"]["ticks"][3] == (100.0, "p99")
    pooled = sorted(v for run in rows[0].runs for v in ok_latencies_ms(run.raw))
    first = png["series"][0]
    assert (first["x"][0], first["x"][-1]) == (float(pooled[0]), float(pooled[-1]))  # from the fastest to the slowest
    assert first["y"][0] == 1.0 and first["y"][-1] == 2 * len(pooled)  # p0 .. the last sample (1 / (0.5 / n))
    assert plot.wide and plot.toggle and charts.latency_cdf(rows, "t")["toggle"]


def test_latency_without_raw_documents_goes_through_the_tables_percentiles():
    plot = defs.latency([_without_raw(r) for r in _rows()], "t")
    png = agree(plot)
    assert png["legend"][0].endswith(" (percentiles)")
    assert all(s.dash == "dot" and s.style == "lines+markers" for s in plot.series)
    median = _rows()[0].aggregate.median
    table = (median.p50_ms, median.p90_ms, median.p99_ms, median.p999_ms, median.p9999_ms, median.max_ms)
    assert png["series"][0]["x"] == list(table)
    # 100 samples a repeat: nothing is drawn above the last one's 1 / (0.5 / 100)
    assert same(png["series"][0]["y"], [2.0, 10.0, 100.0, 200.0, 200.0, 200.0])


def test_bench_bars_with_lmean_beside_them_and_their_min_max():
    rows = _rows()
    plot = defs.bars(rows, "bench_ms", "Bench per client", "ms")
    png = agree(plot)
    assert png["legend"] == ["Bench: wall time of the group (ms)", "LMean: mean worker loop (ms)"]
    assert png["y"]["ticks"] == [(0.0, rows[0].client.label), (1.0, rows[1].client.label), (2.0, rows[2].client.label)]
    assert png["y"]["reversed"] and not png["x"]["reversed"]  # the first row on top
    bench, lmean = png["series"]
    assert bench["x"] == [11.0] * 3 and bench["whiskers"] == [(10.0, 12.0)] * 3  # median and min-max of 10, 12, 11
    assert lmean["x"] == [float(r.aggregate.median.lmean_ms) for r in rows]
    assert png["x"]["title"] == "ms, median; whiskers: min-max over the repeats"


def test_cpu_bars_are_one_series_without_a_legend():
    plot = defs.bars(_rows(), "cpu_us_per_req", "Client CPU per request", "us")
    png = agree(plot)
    assert len(png["series"]) == 1 and png["legend"] == [] and not plot.legend
    assert png["x"]["title"] == "us, median; whiskers: min-max over the repeats"  # the title says of what
    assert png["legend"] == [] and plot.series[0].name == "client CPU per request (us)"


def _modes():
    """A native row, Python threads with the GIL held, released, and on uvloop: Bench from 5 to 400 ms."""
    rows = [
        row("py-held", gil="held", benches=(40.0, 44.0)),
        row("cpp", gil=None, benches=(5.0, 6.0)),
        row("py-uvloop", gil=None, benches=(400.0, 420.0)),
        row("py-released", gil="released", benches=(8.0, 9.0)),
    ]
    labels = {"cpp": {"language": "C++"}, "py-uvloop": {"mode": "async", "library": "x+uvloop"}}
    for r in rows:
        r.client = dataclasses.replace(r.client, **labels.get(r.client.name, {}))
    return rows


def test_ranked_bars_best_first_coloured_by_mode_on_a_log_axis():
    rows = [*_modes(), make_row("ok", "crash")]  # the failed row is not drawn
    plot = defs.ranked(rows, "bench_ms", "Bench per client")
    png = agree(plot)
    names = defs.labels(rows)  # the failed row has the held row's label: both are named by their names
    order = [names[rows[i].client.name] for i in (1, 3, 0, 2)]  # 5.5, 8.5, 42 and 410 ms
    assert [t for _, t in png["y"]["ticks"]] == order and png["y"]["reversed"]
    assert png["x"]["scale"] == "log" and plot.overlay
    assert png["x"]["title"] == "Bench: wall time of the group (ms, log scale), median"
    assert png["title"] == "Bench per client; " + defs.WHISKERS
    # a series per mode, in the modes' order, each row in one; LMean a mark on every row
    assert png["legend"] == [
        "native (C++, Rust)",
        "Python threads, GIL held",
        "Python threads, GIL released",
        "Python uvloop",
        "LMean",
    ]
    assert [s.y for s in plot.series[:4]] == [(order[0],), (order[2],), (order[1],), (order[3],)]
    assert [s.color for s in plot.series[:4]] == [
        defs.GROUP_COLOURS[k] for k in ("native", "threads, GIL held", "threads, GIL released", "uvloop")
    ]
    assert png["series"][0]["x"] == [5.5] and png["series"][0]["whiskers"] == [(5.0, 6.0)]
    assert png["series"][4]["x"] == [float(rows[i].aggregate.median.lmean_ms) for i in (1, 3, 0, 2)]
    assert plot.series[3].notes[0].startswith("74.55x the top row; min-max 400.00-420.00 ms over 2 repeats")
    # what is better larger comes first larger; a narrow span stays linear, from zero
    rps = defs.ranked(rows, "throughput_rps", "t")
    values = {y: x for s in rps.series for x, y in zip(s.x, s.y, strict=True)}
    assert [values[c] for c in rps.y.categories] == sorted(values.values(), reverse=True)
    near = defs.ranked(rows[:1] + rows[3:4], "bench_ms", "t")
    assert near.x.scale == "linear" and near.x.from_zero and agree(near)["x"]["scale"] == "linear"


def test_latency_draws_the_rows_shown_and_the_others_a_click_away():
    rows = _rows()
    plot = defs.latency(rows, "t", shown=[rows[1].client.name])
    assert [s.hidden for s in plot.series] == [True, False, True]
    assert [t.get("visible", True) for t in charts.chart(plot)["data"]] == ["legendonly", True, "legendonly"]
    assert not any(s.hidden for s in defs.latency(rows, "t").series)  # none named: every row drawn
    assert same(drawn(plot)[0], drawn(defs.latency(rows, "t"))[0])  # a PNG draws them all


def test_the_compare_views_bars():
    a = results(_rows())
    b = results([row(r.client.name, r.client.gil, benches=(20.0, 24.0, 22.0)) for r in _rows()])
    for r, old in zip(b.rows, a.rows, strict=True):
        r.client = old.client
    b.rows.pop()  # a row only in A: not drawn
    png = agree(defs.compare(compare_rows(a, b)))
    assert png["legend"] == ["A", "B"]
    assert [s["x"] for s in png["series"]] == [[11.0, 11.0], [22.0, 22.0]]
    assert png["series"][1]["whiskers"] == [(20.0, 24.0)] * 2


def test_a_timeline_has_a_lane_per_worker_a_tick_per_request_and_the_bench_line():
    r = row("py-held", serial=True)
    r.runs[-1].raw["workers"][1]["failures"] = [{"index": 3, "reason": "status 500", "status": 500}]
    plot = defs.timeline(r, "held")
    png = agree(plot)
    assert png["title"] == "held: Bench 11.0 ms in the repeat shown (dashed line); red ticks failed"
    assert [(s["lane"], len(s["x"])) for s in png["series"]] == [(0, 50), (1, 49), (1, 1)]
    assert [s.color for s in plot.series] == [defs.COMPLETED, defs.COMPLETED, defs.FAILED]
    assert png["lines"] == [("x", 11.0, "")]  # the Bench of the repeat shown
    assert png["y"]["ticks"] == [(0.0, "0"), (1.0, "1")] and png["legend"] == []
    w = r.runs[-1].raw["workers"][1]
    assert png["series"][1]["x"][-1] == float(round((w["start_ns"][-1] + w["latencies_ns"][-1]) / 1e6, 3))


def test_a_long_timeline_is_thinned_alike_in_both():
    r = row("py-held")
    r.runs[-1].raw = raw(workers=12, n=2 * defs.TIMELINE_TICKS + 1)
    plot = defs.timeline(r, "long")
    png = agree(plot)
    assert all(len(s["x"]) == defs.TIMELINE_TICKS for s in png["series"]) and len(png["series"]) == 12
    assert "(2000 evenly spaced ticks per worker)" in png["title"]
    assert [t for _, t in png["y"]["ticks"]] == ["0", "2", "4", "6", "8", "10"]  # at most LANE_LABELS labels


def _points(values):
    """Per value i (from 0), rows a and b of Bench 10 (i + 1) and 30 (i + 1) ms, each +-10% over the repeats."""
    out = []
    for i, v in enumerate(values):
        rows = []
        for name, gil, bench in (("a", "held", 10.0 * (i + 1)), ("b", "released", 30.0 * (i + 1))):
            rows.append(row(name, gil, benches=(bench, bench * 1.1, bench * 0.9)))
        out.append((v, defs.medians(rows)))
    return out


@pytest.mark.parametrize(
    "values, x_scale, y_scale",
    [((1, 2, 4, 8, 16, 32), "log", "log"), ((0, 1, 2, 5), "linear", "log"), ((4, 8), "linear", "linear")],
)
def test_a_sweep_of_numbers_has_a_tick_at_every_swept_value(values, x_scale, y_scale):
    plot = defs.sweep(_points(values), "bench_ms", "workers (W)", "Bench vs workers")
    png = agree(plot)
    assert (png["x"]["scale"], png["y"]["scale"]) == (x_scale, y_scale)
    assert png["x"]["ticks"] == [(float(v), str(v)) for v in values]
    assert png["x"]["title"] == "workers (W)" and png["y"]["title"] == "Bench: wall time of the group (ms)"
    assert png["series"][0]["x"] == [float(v) for v in values] and png["series"][0]["whiskers"][0] == (9.0, 11.0)
    assert png["legend"] == ["Python x (sync, GIL held)", "Python x (sync, GIL released)"]
    assert charts.sweep_curve(_points(values), "bench_ms", "w", "t")["data"][0]["x"] == list(values)


def test_a_sweep_of_names_is_categories_in_the_order_they_ran():
    plot = defs.sweep(_points(("http", "1.3", "1.2")), "throughput_rps", "scheme and TLS version", "t")
    png = agree(plot)
    assert png["x"]["ticks"] == [(0.0, "http"), (1.0, "1.3"), (2.0, "1.2")] and plot.x.scale == "category"
    assert png["series"][0]["x"] == [0.0, 1.0, 2.0]


def test_latency_against_the_offered_rate_with_its_slo_and_saturation():
    points = [(float(r), [open_row("a", r, 500)]) for r in (500, 1000, 2000, 4000, 8000)]
    plot = defs.rate(points, "a: latency vs offered load", "offered rate (requests/s)", 10.0)
    png = agree(plot)
    assert png["legend"] == [
        "P50, corrected (from the intended start)",
        "P99, corrected",
        "P99 of the service time (from the actual start)",
        "saturated (achieved < 99% of offered)",
        "SLO: P99 10 ms",
    ]
    assert png["lines"] == [("y", 10.0, "SLO: P99 10 ms")]
    assert png["x"]["scale"] == png["y"]["scale"] == "log"
    assert png["x"]["ticks"] == [(500.0, "500"), (1000.0, "1000"), (2000.0, "2000"), (4000.0, "4000"), (8000.0, "8000")]
    assert png["series"][3]["x"] == [8000.0]  # 2 workers at 0.5 ms keep up with 4,000/s, not 8,000/s


def test_every_figure_kind_draws_the_plots_its_charts_show(tmp_path):
    rows = _rows()
    sweep_points = [(v, _rows()) for v in (1, 2, 4)]
    rate_points = [(float(r), [open_row("a", r, 500)]) for r in (1000, 2000)]
    figures = [
        *plots.standard_figures(rows, "t"),
        Figure("sweep", "sweep-workers.png", "Bench and throughput vs workers", points=sweep_points, axis="workers"),
        Figure("rate", "rate-a.png", "a", points=rate_points, axis="offered rate (requests/s)", slo_ms=10.0),
    ]
    expected = {
        "latency.png": [charts.latency_cdf(rows, "Request latency by percentile (t)")],
        "bench.png": [charts.bars(rows, "bench_ms", "Bench and LMean per client (t)", "ms")],
        "timeline.png": [charts.timeline(r, r.client.label) for r in rows if r.client.gil],
        "sweep-workers.png": [
            charts.sweep_curve([(v, defs.medians(rs)) for v, rs in sweep_points], n, "workers", f"{t} vs workers")
            for n, t in (
                ("bench_ms", "Bench: wall time of the group (ms)"),
                ("throughput_rps", "throughput (requests/s)"),
            )
        ],
        "rate-a.png": [charts.chart(defs.rate(rate_points, "a", "offered rate (requests/s)", 10.0))],
    }
    for f in figures:
        d = drawing(f)
        fig = plots.render(d)
        try:
            png = [_mpl(ax) for ax in fig.axes]
        finally:
            plt.close(fig)
        html = [_plotly(c) for c in expected[f.file]]
        if len(png) > 1:  # one legend (the last plot's) and one x axis title (the bottom plot's, stacked)
            for h in html[:-1]:
                h["legend"] = []
                if d.share_x:
                    h["x"]["title"] = ""
        assert same(png, html), f.file
    written = export(Report("r", figures=figures), tmp_path, ("plots",))
    assert [p.name for p in written] == [f.file for f in figures]


# -- nothing to draw ---------------------------------------------------------------------------------


def _histogram_row():
    """A row whose documents have histograms, no per-request samples: no timeline."""
    doc = histogram_doc()
    r = Row(client("py-h"))
    r.add(DriverRun(r.client, RunStatus.OK, raw=doc, stats=row_stats(doc), returncode=0))
    return r


def test_a_plot_with_nothing_to_draw_is_no_chart_and_no_file(tmp_path):
    failed = [make_row("ok", "crash"), make_row("crash")]
    nothing = [
        ("latency", defs.latency(failed, "t"), charts.latency_cdf(failed, "t")),
        ("latency", defs.latency([], "t"), charts.latency_cdf([], "t")),
        ("bench", defs.bars(failed, "bench_ms", "t", "ms"), charts.bars(failed, "bench_ms", "t", "ms")),
        ("offered", defs.bars([row()], "offered_rps", "t", "requests/s"), None),  # a closed loop has none
        ("timeline", defs.timeline(_histogram_row(), "t"), charts.timeline(_histogram_row(), "t")),
        ("timeline", defs.timeline(failed[1], "t"), charts.timeline(failed[1], "t")),
        ("sweep", defs.sweep([(1, defs.medians(failed))], "bench_ms", "w", "t"), None),
        ("rate", defs.rate([(1000.0, failed)], "t", "offered rate", 10.0), None),
        ("compare", defs.compare(compare_rows(results(failed), results(failed))), charts.compare_bars([])),
    ]
    for name, plot, chart in nothing:
        assert plot is None and chart is None and charts.chart(plot) is None, name
    figures = [
        Figure("latency", "latency.png", "t", failed),
        Figure("bench", "bench.png", "t", failed),
        Figure("timeline", "timeline.png", "t", [_histogram_row(), failed[1]]),
        Figure("sweep", "sweep.png", "t", points=[(1, failed), (2, [])], axis="w"),
        Figure("rate", "rate.png", "t", points=[(1000.0, failed)], axis="offered rate", slo_ms=10.0),
    ]
    assert [drawing(f) for f in figures] == [None] * len(figures)
    assert export(Report("r", figures=figures), tmp_path, ("plots",)) == []
    assert list((tmp_path / "plots").iterdir()) == []
    assert charts.with_variants(["bench_ms"], "bench_ms", lambda n: None) is None


def test_an_unknown_figure_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown figure kind 'pie'"):
        drawing(Figure("pie", "pie.png", "t", [row()]))
