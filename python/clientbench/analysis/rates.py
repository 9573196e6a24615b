"""What a ladder of open-loop rates measured (`sweep rate`, the GIL report's open-loop phase): per client the
highest rate it sustains, with the sentences that say so, every one computed from the figures given (this module
runs nothing; report/rates.py lays out the tables and plots).

A client **sustains** a rate when it achieved at least 99% of it and its corrected P99 stayed within the SLO
(`stats.sustains`); its highest sustained rate is the highest rate tried that it sustained.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Row
from ..stats import RowStats, sustains

#: (rate, the rows measured at it), by increasing rate
Points = Sequence[tuple[float, Sequence[Row]]]


def row_stats(row: Row | None) -> RowStats | None:
    """The row's median figures; None when it failed or did not run."""
    agg = None if row is None or row.failed else row.aggregate
    return agg.median if agg is not None else None


def clients(points: Points) -> list[Row]:
    """One row per client (its first appearance), in the order they ran."""
    seen: dict[str, Row] = {}
    for _, rows in points:
        for r in rows:
            seen.setdefault(r.client.name, r)
    return list(seen.values())


def at(points: Points, name: str) -> list[tuple[float, Row]]:
    """The client's row at every rate it ran at."""
    return [(rate, r) for rate, rows in points for r in rows if r.client.name == name]


@dataclass(frozen=True)
class Sustained:
    """A client's highest sustained rate, and what happened at the next rate tried above it."""

    name: str
    label: str
    rate: float | None  # None: it sustained none of the rates tried
    stats: RowStats | None  # at `rate`
    next_rate: float | None  # the next rate tried (None: the highest tried was sustained, or none was run)
    next_stats: RowStats | None  # at next_rate (None: failed there)
    lowest: float | None  # the lowest rate tried


def sustained(points: Points, name: str, slo_ms: float) -> Sustained:
    """The client's highest sustained rate among the rates tried (docs/open-loop.md)."""
    tried = at(points, name)
    label = tried[0][1].client.label if tried else name
    good = [(rate, s) for rate, r in tried if (s := row_stats(r)) is not None and sustains(s, slo_ms)]
    best, best_stats = good[-1] if good else (None, None)
    above = [(rate, r) for rate, r in tried if best is None or rate > best]
    nxt = above[0] if above else None
    return Sustained(
        name,
        label,
        best,
        best_stats,
        nxt[0] if nxt else None,
        row_stats(nxt[1]) if nxt else None,
        tried[0][0] if tried else None,
    )


def _rps(value: float) -> str:
    return f"{value:,.0f}"


def headline(s: Sustained, slo_ms: float) -> str:
    """One sentence per client: its highest sustained rate and what the next rate did to it."""
    slo = f"{slo_ms:g} ms"
    if s.lowest is None:
        return f"- **{s.label}**: not measured."
    if s.rate is None or s.stats is None:
        first = s.next_stats
        why = (
            f"at the lowest, {_rps(s.lowest)} requests/s, it achieved {_rps(first.throughput_rps)} requests/s "
            f"with a corrected P99 of {first.p99_ms:.2f} ms"
            if first is not None and first.p99_ms is not None
            else f"at the lowest, {_rps(s.lowest)} requests/s, it failed"
        )
        return f"- **{s.label}** sustains none of the rates tried (P99 within {slo}): {why}."
    line = (
        f"- **{s.label}** sustains **{_rps(s.rate)} requests/s** (achieved {_rps(s.stats.throughput_rps)}, "
        f"corrected P99 {s.stats.p99_ms:.2f} ms, within {slo})"
    )
    if s.next_rate is None:
        return line + ": the highest rate tried; it may sustain more."
    n = s.next_stats
    if n is None:
        return line + f"; at {_rps(s.next_rate)} requests/s it failed."
    why = "saturated" if n.saturated else f"P99 above {slo}" if n.p99_ms is not None else "no request succeeded"
    p99 = f", corrected P99 {n.p99_ms:.2f} ms" if n.p99_ms is not None else ""
    return line + f"; at {_rps(s.next_rate)} requests/s it achieved {_rps(n.throughput_rps)}{p99} ({why})."


def summary_lines(points: Points, slo_ms: float) -> list[str]:
    """The headline, for the terminal."""
    return [headline(sustained(points, r.client.name, slo_ms), slo_ms) for r in clients(points)]
