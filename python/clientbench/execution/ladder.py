"""Open loops at a ladder of rates (`sweep rate`, the GIL report's open-loop phase): every client at each
rate, from the lowest up, until it no longer keeps up.

With the rates given, every client runs at every one. By default (dimensions.LADDER) the ladder doubles, and a
client leaves it after the first rate at which it saturated (achieved < 99% of offered) or failed: one rate past
saturation is enough to locate it, and the rates above would only queue more. Clients of one `group` (the GIL
report's held and released binding) climb together, so that each is measured wherever the other is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..dimensions import DIMENSIONS
from ..model import Row
from ..registry.spec import ClientSpec
from ..workload import Workload, number
from .points import PointLog
from .testbed import Endpoint, Testbed

RATE = DIMENSIONS["rate"]


def climb(
    testbed: Testbed,
    specs: Sequence[ClientSpec],
    base: Workload,
    rates: Sequence[float],
    out: Path,
    points: PointLog[float],
    *,
    every_rate: bool,
    groups: Sequence[Sequence[str]] = (),
    endpoint: Endpoint | None = None,
) -> None:
    """Run `specs` at each rate (into out/points/rate-R/), each rate a point of `points` (started before it runs,
    so that an interrupted ladder keeps what it measured, done after). Without `every_rate`, a client (or its
    group) stops after its first saturated or failed rate, and the ladder after its last client."""
    group_of = {name: tuple(g) for g in groups for name in g}
    active = list(specs)
    for rate in rates:
        if not active:
            break
        wl = base.replace(rate=rate)
        point = out / "points" / RATE.folder(rate)
        point.mkdir(parents=True, exist_ok=True)
        testbed.console.print(f"[bold]{number(rate)} requests/s[/]: {wl.describe()}")
        rows = points.start(rate)
        testbed.run_rows(active, wl, point, rows, endpoint)
        points.done(rate)
        if every_rate:
            continue
        done = {r.client.name for r in rows if r.failed or not r.runs or _saturated(r)}
        running = {s.name for s in active}
        active = [s for s in active if not all(n in done for n in group_of.get(s.name, (s.name,)) if n in running)]


def _saturated(row: Row) -> bool:
    agg = row.aggregate
    return agg is None or bool(agg.median.saturated)
