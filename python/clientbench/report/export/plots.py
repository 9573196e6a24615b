"""`plots/*.png` (matplotlib, headless): latency percentiles, Bench with spread, request timelines, sweep
curves and latency vs offered load, one function per `Figure.kind`. Every plot states what it shows in its
title, axes (with units) and legend."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter  # noqa: E402

from ...model import Row  # noqa: E402
from ...stats import failed_mask, has_samples, ok_latencies_ms  # noqa: E402
from ..base import Figure, Report  # noqa: E402
from .registry import register  # noqa: E402

PERCENTILE_TICKS = (0.0, 0.5, 0.9, 0.99, 0.999, 0.9999)


def _ok_latencies_ms(row: Row) -> np.ndarray:
    parts = [ok_latencies_ms(run.raw) for run in row.runs if run.raw is not None]
    return np.concatenate(parts) if parts else np.empty(0)


def latency_percentiles(rows: Sequence[Row], path: Path, title: str) -> Path | None:
    """Latency vs percentile, log-log, one line per client (all repeats pooled)."""
    fig, ax = plt.subplots(figsize=(10, 6), layout="constrained")
    plotted = 0
    for row in rows:
        lat = np.sort(_ok_latencies_ms(row))
        if lat.size < 2:
            continue
        p = np.arange(1, lat.size + 1) / lat.size  # nearest-rank: sample i is the (i/n)-quantile
        x = 1.0 / np.maximum(1.0 - p, 0.5 / lat.size)  # 1/(1-p): 10 = p90, 100 = p99, ...
        ax.plot(x, lat, label=row.client.label, linewidth=1.4)
        plotted += 1
    if not plotted:
        plt.close(fig)
        return None
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [1 / (1 - q) for q in PERCENTILE_TICKS]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"p{100 * (1 - 1 / v):g}" if v > 1 else "p0"))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xlabel("percentile")
    ax.set_ylabel("request latency (ms, log scale)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def bench_bars(rows: Sequence[Row], path: Path, title: str) -> Path | None:
    """Median Bench and LMean per client, with Bench's min-max over the repeats as error bars."""
    data = [(r.client.label, r.aggregate) for r in rows if r.aggregate is not None]
    if not data:
        return None
    labels = [d[0] for d in data]
    bench = np.array([a.median.bench_ms for _, a in data])
    lmean = np.array([a.median.lmean_ms for _, a in data])
    lo = bench - np.array([a.bench_min_ms for _, a in data])
    hi = np.array([a.bench_max_ms for _, a in data]) - bench
    y = np.arange(len(data))
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(data) + 1.6), layout="constrained")
    ax.barh(
        y - 0.2, bench, height=0.4, xerr=[lo, hi], capsize=3, label="Bench (wall time of the group)", color="tab:blue"
    )
    ax.barh(y + 0.2, lmean, height=0.4, label="LMean (mean worker loop time)", color="tab:orange", alpha=0.8)
    for yi, b, top in zip(y, bench, bench + hi, strict=True):
        ax.text(top, yi - 0.2, f"  {b:.1f}", va="center", fontsize=8)
    ax.set_xlim(0, float((bench + hi).max()) * 1.12)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms); error bars: min-max of Bench over repeats")
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def timeline(rows: Sequence[Row], path: Path, title: str) -> Path | None:
    """Every request of every worker as a tick at the moment it completed, one lane per worker (last
    repeat of each row). Parallel workers: every lane is dense all along. Serialized workers (e.g. by a
    held GIL): the lanes take turns, in bursts, and the group takes longer."""
    data = [(r.client.label, r.raw) for r in rows if r.raw is not None and has_samples(r.raw)]
    if not data:
        return None
    fig, axes = plt.subplots(
        len(data), 1, figsize=(11, 1.9 * len(data) + 1.2), sharex=True, squeeze=False, layout="constrained"
    )
    for ax, (label, raw) in zip(axes[:, 0], data, strict=True):
        wall = raw["wall_ns"] / 1e6
        lanes, colors = [], []
        for w in raw["workers"]:
            done = (np.asarray(w["start_ns"]) + np.asarray(w["latencies_ns"])) / 1e6
            failed = failed_mask(w)
            lanes.append(done)
            colors.append("tab:red" if failed.all() and done.size else "tab:blue")
        ax.eventplot(lanes, colors=colors, lineoffsets=np.arange(len(lanes)), linelengths=0.8, linewidths=0.6)
        ax.axvline(wall, color="black", linestyle="--", linewidth=1)
        ax.set_title(
            f"{label}: Bench {wall:.1f} ms in the run shown (dashed line; the last repeat)", fontsize=9, loc="left"
        )
        ax.set_ylabel("worker")
        ax.set_ylim(-0.6, len(lanes) - 0.4)
        ax.grid(True, axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("time since the group started (ms); each tick is one completed request")
    fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def sweep_curves(
    points: Sequence[tuple[Any, Sequence[Row]]], dimension: str, path: Path, title: str, log_x: bool = False
) -> Path | None:
    """Bench and throughput per client against the swept dimension."""
    series: dict[str, list[tuple[Any, float, float]]] = {}
    for value, rows in points:
        for r in rows:
            agg = r.aggregate
            if agg is None or r.failed:
                continue
            series.setdefault(r.client.label, []).append((value, agg.median.bench_ms, agg.median.throughput_rps))
    if not series:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5.5), layout="constrained")
    for label, pts in series.items():
        xs = [p[0] for p in pts]
        ax1.plot(xs, [p[1] for p in pts], marker="o", label=label)
        ax2.plot(xs, [p[2] for p in pts], marker="o", label=label)
    xs_all = sorted({p[0] for pts in series.values() for p in pts}, key=lambda v: (str(type(v)), v))
    for ax, ylabel in ((ax1, "Bench: wall time of the group (ms)"), (ax2, "throughput (requests/s)")):
        ax.set_xlabel(dimension)
        ax.set_ylabel(ylabel)
        if log_x:
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(FixedLocator(xs_all))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_locator(FixedLocator([]))
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=7, loc="best")
    fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def rate_curve(
    points: Sequence[tuple[Any, Sequence[Row]]], path: Path, title: str, slo_ms: float | None
) -> Path | None:
    """One client's corrected P50 and P99 and its service-time P99 against the offered rate (log-log); the
    rates it saturated at are marked, the SLO is a dashed line."""
    data = [
        (float(rate), agg.median)
        for rate, rows in points
        for r in rows
        if not r.failed and (agg := r.aggregate) is not None and agg.median.p99_ms is not None
    ]
    if not data:
        return None
    x = [rate for rate, _ in data]
    fig, ax = plt.subplots(figsize=(9, 5.5), layout="constrained")
    p50 = [np.nan if s.p50_ms is None else s.p50_ms for _, s in data]
    ax.plot(x, p50, marker="o", label="P50, corrected (from the intended start)")
    ax.plot(x, [s.p99_ms or np.nan for _, s in data], marker="o", label="P99, corrected")
    service = [(rate, s.service_p99_ms) for rate, s in data if s.service_p99_ms is not None]
    if service:
        ax.plot(
            *zip(*service, strict=True),
            linestyle=":",
            marker=".",
            label="P99 of the service time (from the actual start)",
        )
    sat = [(rate, st.p99_ms) for rate, st in data if st.saturated and st.p99_ms is not None]
    if sat:
        ax.scatter(
            [r for r, _ in sat],
            [p for _, p in sat],
            marker="x",
            s=90,
            color="tab:red",
            zorder=3,
            label="saturated (achieved < 99% of offered)",
        )
    if slo_ms is not None:
        ax.axhline(slo_ms, color="black", linestyle="--", linewidth=1, label=f"SLO: P99 {slo_ms:g} ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(x))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xlabel("offered rate (requests/s, log scale)")
    ax.set_ylabel("latency (ms, log scale)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def standard_figures(rows: Sequence[Row], subtitle: str, timeline_rows: Sequence[Row] | None = None) -> list[Figure]:
    """A run's plots: latency percentiles, Bench bars, and the timeline of the GIL rows (if any)."""
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
    return figures


@register("plots")
class Plots:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        if out is None or not report.figures:
            return []
        folder = out / "plots"
        folder.mkdir(parents=True, exist_ok=True)
        made: list[Path | None] = []
        for f in report.figures:
            path = folder / f.file
            if f.kind == "latency":
                made.append(latency_percentiles(f.rows, path, f.title))
            elif f.kind == "bench":
                made.append(bench_bars(f.rows, path, f.title))
            elif f.kind == "timeline":
                made.append(timeline(f.rows, path, f.title))
            elif f.kind == "sweep":
                made.append(sweep_curves(f.points, f.axis, path, f.title, log_x=f.log_x))
            elif f.kind == "rate":
                made.append(rate_curve(f.points, path, f.title, f.slo_ms))
            else:
                raise ValueError(f"unknown figure kind {f.kind!r}")
        return [p for p in made if p is not None]
