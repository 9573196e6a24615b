"""Where a request's time goes (docs/phases.md): one stacked bar per row that recorded phases, each phase's mean and
the client's own time, the rows by their mean latency, fastest first. Both renderers draw it from one `Plot`."""

from __future__ import annotations

from collections.abc import Sequence

from ..metrics import PHASES
from ..model import Row
from .figures import PALETTE, Axis, Plot, Series, medians

#: a phase's colour: the network's in blues and greens, the server's wait grey, the client's own time red
COLOURS = {
    "dns": PALETTE[9],
    "connect": PALETTE[0],
    "tls": PALETTE[10],
    "connect+tls": PALETTE[0],
    "dns+connect+tls": PALETTE[0],
    "send": PALETTE[2],
    "wait": PALETTE[7],
    "send+wait": PALETTE[17],
    "connect+tls+send+wait": PALETTE[17],
    "dns+connect+tls+send+wait": PALETTE[17],
    "receive": PALETTE[1],
    "own": PALETTE[3],
}


def phases(rows: Sequence[Row], title: str) -> Plot | None:
    """The rows' phases stacked, in the order a request goes through them, then Own; None when no row has them."""
    shown = [(label, agg.median.phases) for label, _, agg in medians(rows) if agg.median.phases]
    if not shown:
        return None
    shown.sort(key=lambda item: sum(v for v in item[1].values()))
    categories = tuple(label for label, _ in shown)
    series = []
    for metric in PHASES:
        key = metric.phase
        points = [(label, ph[key]) for label, ph in shown if key in ph]
        if not points:
            continue
        name = metric.label.removesuffix("(ms)")
        series.append(
            Series(
                name,
                tuple(max(0.0, v) for _, v in points),  # (a negative own: clocks read apart, drawn as none)
                tuple(label for label, _ in points),
                "bars",
                COLOURS[key],
                notes=tuple(f"{name}: {v:.3f} ms" for _, v in points),
            )
        )
    return Plot(
        title,
        Axis("mean per request (ms)", "linear", from_zero=True, name="mean", unit="ms", digits=".3f"),
        Axis("", "category", categories=categories, reversed=True),
        tuple(series),
        horizontal=True,
        stacked=True,
    )
