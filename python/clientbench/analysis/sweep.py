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
