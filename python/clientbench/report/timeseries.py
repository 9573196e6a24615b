"""The plots of an open loop second by second (stats.time_series, a run's `series` in results.json), defined once
for both renderers as report/figures.py defines the others: the achieved rate against the offered one, the
corrected P50 and P99 of each second's requests, and the errors when some request failed. Each row is drawn from
its last repeat with a series; a stall or a warm-up shows as a dip in the rate and a jump in the P99."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..model import Row
from ..stats import Second, TimeSeries
from .figures import PALETTE, Axis, Line, Plot, Scale, Series, labels, number, scale_of, titled

#: at most this many seconds labelled on the time axis
SECOND_TICKS = 20


def _seconds_axis(found: Sequence[tuple[str, str, TimeSeries]]) -> Axis:
    """Whole seconds, labelled (every k-th of a long run)."""
    n = max(len(ts.seconds) for _, _, ts in found)
    step = math.ceil(n / SECOND_TICKS)
    return Axis(
        "second of the schedule (its start, s after t0); a request counts in its intended start's",
        ticks=tuple((float(t), str(t)) for t in range(0, n, step)),
        name="second",
        unit="s",
        digits=".0f",
    )


def _log_ticks(values: Sequence[float]) -> tuple[tuple[float, str], ...]:
    """1, 2, 5 x 10^k over the values' range (matplotlib would write 4 x 10^0)."""
    low, high = min(values), max(values)
    out = []
    for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0**k
            if low / 2 <= v <= high * 2:
                out.append((v, number(v)))
    return tuple(out)


def last_series(row: Row) -> TimeSeries | None:
    """The series of the row's last repeat that has one (an open loop recorded with samples)."""
    return next((r.series for r in reversed(row.runs) if r.series is not None and r.series.seconds), None)


def drawn(rows: Sequence[Row]) -> list[tuple[str, str, TimeSeries]]:
    """(label, colour, series) of every row that did not fail and has a series, each in its colour of the run."""
    names = labels(rows)
    out = []
    for i, r in enumerate(rows):
        if not r.failed and (s := last_series(r)) is not None:
            out.append((names[r.client.name], PALETTE[i % len(PALETTE)], s))
    return out


def _note(s: Second) -> str:
    return f"{s.requests} requests intended, {s.completed} returned ok, {s.errors} failed"


def _x(series: TimeSeries) -> tuple[float, ...]:
    return tuple(s.t_s for s in series.seconds)


def rate_plot(rows: Sequence[Row]) -> Plot | None:
    """The achieved rate of every second (successful requests that returned within it, per second), per row;
    the offered rate a dashed line."""
    found = drawn(rows)
    if not found:
        return None
    series = tuple(
        Series(
            label,
            _x(ts),
            tuple(round(s.achieved_rps, 3) for s in ts.seconds),
            "lines+markers",
            color,
            notes=tuple(_note(s) for s in ts.seconds),
        )
        for label, color, ts in found
    )
    offered = {a.median.offered_rps for r in rows if (a := r.aggregate) is not None and a.median.offered_rps}
    lines = tuple(Line("y", rate, f"offered: {rate:,.0f} requests/s") for rate in sorted(offered))
    return Plot(
        "Achieved rate per second: the successful requests that returned within it",
        _seconds_axis(found),
        Axis("achieved rate (requests/s)", from_zero=True, name="achieved", unit="requests/s", digits=",.0f"),
        series,
        lines=lines,
        wide=True,
    )


def latency_plot(rows: Sequence[Row]) -> Plot | None:
    """The corrected P99 (solid) and P50 (dotted) of each second's successful requests, per row."""
    found = drawn(rows)
    out: list[Series] = []
    for label, color, ts in found:
        for p, dash in (("p99_ms", "solid"), ("p50_ms", "dot")):
            points = [(s.t_s, v, _note(s)) for s in ts.seconds if (v := getattr(s, p)) is not None]
            if points:
                name = f"{label}: P{p[1:3]}"
                out.append(
                    Series(
                        name,
                        tuple(x for x, _, _ in points),
                        tuple(y for _, y, _ in points),
                        "lines+markers",
                        color,
                        dash="solid" if dash == "solid" else "dot",
                        marker="circle" if dash == "solid" else "dot",
                        notes=tuple(n for _, _, n in points),
                    )
                )
    if not out:
        return None
    every = [y for s in out for y in s.y]
    scale: Scale = "log" if scale_of(every) == "log" else "linear"
    ticks = _log_ticks(every) if scale == "log" else ()
    return Plot(
        "Corrected latency of each second's requests (by intended start): P99 solid, P50 dotted",
        _seconds_axis(found),
        Axis(
            titled("corrected latency (ms)", scale),
            scale,
            ticks=ticks,
            name="latency",
            unit="ms",
            digits=".3f",
        ),
        tuple(out),
        wide=True,
    )


def errors_plot(rows: Sequence[Row]) -> Plot | None:
    """Failed requests per second (by intended start), per row; None when no second of any row has one."""
    found = [(label, color, ts) for label, color, ts in drawn(rows) if any(s.errors for s in ts.seconds)]
    if not found:
        return None
    series = tuple(
        Series(label, _x(ts), tuple(float(s.errors) for s in ts.seconds), "lines+markers", color, marker="x")
        for label, color, ts in found
    )
    return Plot(
        "Failed requests per second (by intended start)",
        _seconds_axis(found),
        Axis("failed requests", from_zero=True, name="failed", digits=".0f"),
        series,
        wide=True,
    )


def plots(rows: Sequence[Row]) -> list[Plot]:
    """The rate, latency and (when some failed) error plots of the rows with a series; none without one."""
    return [p for p in (rate_plot(rows), latency_plot(rows), errors_plot(rows)) if p]


def has_series(rows: Sequence[Row]) -> bool:
    return bool(drawn(rows))
