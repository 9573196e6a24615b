"""A sweep's reading: per Python client, its Bench against the fastest native client (C++ or Rust) at every point,
and the first point from which it is within NATIVE_WITHIN of it. Computed from the figures given."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Row

#: a Python row is "as fast as native" at a point where its Bench is within this factor of the best native row's
NATIVE_WITHIN = 1.10
#: (the point's value, the rows measured there), in the order the points ran
Points = Sequence[tuple[Any, Sequence[Row]]]


@dataclass(frozen=True)
class NativeReach:
    label: str
    ratios: list[float | None]  # per point: Bench / the fastest native Bench (None: not measured there)
    reached: Any  # the first point within NATIVE_WITHIN (None: never)

    def sentence(self, dimension: str) -> str:
        if self.reached is None:
            return f"- {self.label}: never within {NATIVE_WITHIN - 1:.0%} of the fastest native client here."
        return (
            f"- {self.label}: within {NATIVE_WITHIN - 1:.0%} of the fastest native client from "
            f"{dimension}={self.reached} on."
        )


@dataclass(frozen=True)
class Scaling:
    """A workers sweep's row: what a connection costs in memory and how much throughput it keeps at the top."""

    label: str
    #: per point: (peak RSS at W - at the first point) / (W - the first W), MiB (None: not measured there)
    mib_per_connection: list[float | None]
    retention: float | None  # req/s at the top point / req/s at W=RETAINED_FROM (None: not both measured)


#: the retention ratio's base point (httpx2's harness compares 512 concurrent requests with 16)
RETAINED_FROM = 16


def _median(row: Row | None, name: str) -> float | None:
    agg = None if row is None or row.failed else row.aggregate
    value = getattr(agg.median, name) if agg is not None else None
    return float(value) if value is not None else None


def scaling(points: Points) -> list[Scaling]:
    """Every row of a workers sweep (points: (W, rows) in the order they ran)."""
    if not points:
        return []
    labels: list[str] = []
    for _, rows in points:
        labels += [r.client.label for r in rows if r.client.label not in labels]
    ordered = sorted(points, key=lambda p: int(p[0]))
    first_w = int(ordered[0][0])
    out = []
    for label in labels:

        def at(w: Any, name: str, label: str = label) -> float | None:
            rows = next(rows for v, rows in points if v == w)
            return _median(next((r for r in rows if r.client.label == label), None), name)

        base = at(ordered[0][0], "peak_rss_mib")
        per: list[float | None] = []
        for w, _ in points:
            rss = at(w, "peak_rss_mib")
            per.append(
                (rss - base) / (int(w) - first_w) if rss is not None and base is not None and int(w) > first_w else None
            )
        top, top_w = at(ordered[-1][0], "throughput_rps"), int(ordered[-1][0])
        from16 = at(RETAINED_FROM, "throughput_rps") if any(int(v) == RETAINED_FROM for v, _ in points) else None
        retention = top / from16 if top is not None and from16 and top_w > RETAINED_FROM else None
        out.append(Scaling(label, per, retention))
    return out


def _bench(row: Row | None) -> float | None:
    agg = None if row is None or row.failed else row.aggregate
    return None if agg is None else agg.median.bench_ms


def native_reach(points: Points) -> list[NativeReach]:
    """Every Python client of the sweep (in the order they first ran)."""
    labels: list[str] = []
    for _, rows in points:
        labels += [r.client.label for r in rows if r.client.language == "Python" and r.client.label not in labels]
    out = []
    for label in labels:
        ratios: list[float | None] = []
        reached = None
        for value, rows in points:
            natives = [b for r in rows if r.client.language in ("C++", "Rust") and (b := _bench(r)) is not None]
            mine = _bench(next((r for r in rows if r.client.label == label), None))
            if mine is None or not natives:
                ratios.append(None)
                continue
            ratio = mine / min(natives)
            ratios.append(ratio)
            if reached is None and ratio <= NATIVE_WITHIN:
                reached = value
        out.append(NativeReach(label, ratios, reached))
    return out


@dataclass(frozen=True)
class ProtocolCost:
    """A scenario sweep's row (the QUIC seed's grid): per scenario (long-5KB, ..., short-1KB), HTTP/3's CPU per
    request over HTTP/2's and HTTP/1.1's (None: not both measured)."""

    label: str
    scenarios: list[str]
    over_h2: list[float | None]
    over_h1: list[float | None]

    @staticmethod
    def _median_of(ratios: list[float | None], scenarios: list[str], kind: str) -> float | None:
        picked = sorted(r for r, s in zip(ratios, scenarios, strict=True) if r is not None and s.startswith(kind))
        if not picked:
            return None
        mid = len(picked) // 2
        return picked[mid] if len(picked) % 2 else (picked[mid - 1] + picked[mid]) / 2

    def sentence(self) -> str | None:
        parts = []
        for kind, what in (("long", "long connections (the median over their sizes)"), ("short", "short ones")):
            h2 = self._median_of(self.over_h2, self.scenarios, kind)
            h1 = self._median_of(self.over_h1, self.scenarios, kind)
            if h2 is None and h1 is None:
                continue
            against = [f"{x:.2f}x HTTP/{v}'s" for x, v in ((h2, "2"), (h1, "1.1")) if x is not None]
            parts.append(f"{' and '.join(against)} on {what}")
        if not parts:
            return None
        return f"- {self.label}: over HTTP/3 a request costs " + "; ".join(parts) + " in client CPU."


def protocol_costs(points: Points) -> list[ProtocolCost]:
    """Every row of a scenario sweep that ran over HTTP/3 somewhere: its CPU per request over HTTP/3 against
    HTTP/2 and HTTP/1.1, scenario by scenario (points: ('long-5KB-h3', rows), ...)."""
    grid: dict[tuple[str, str], Sequence[Row]] = {}
    scenarios: list[str] = []
    for value, rows in points:
        name, _, version = str(value).rpartition("-h")
        grid[(name, version)] = rows
        if name not in scenarios:
            scenarios.append(name)
    labels: list[str] = []
    for (_, version), rows in grid.items():
        if version == "3":
            labels += [r.client.label for r in rows if r.client.label not in labels and _median(r, "cpu_us_per_req")]

    def cpu(label: str, name: str, version: str) -> float | None:
        rows = grid.get((name, version), ())
        return _median(next((r for r in rows if r.client.label == label), None), "cpu_us_per_req")

    out = []
    for label in labels:
        over_h2: list[float | None] = []
        over_h1: list[float | None] = []
        for name in scenarios:
            h3, h2, h1 = cpu(label, name, "3"), cpu(label, name, "2"), cpu(label, name, "1.1")
            over_h2.append(h3 / h2 if h3 is not None and h2 else None)
            over_h1.append(h3 / h1 if h3 is not None and h1 else None)
        out.append(ProtocolCost(label, scenarios, over_h2, over_h1))
    return out
