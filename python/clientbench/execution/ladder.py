"""Open loops at a ladder of rates (`sweep rate`, the GIL report's open-loop phase): every client at each
rate, from the lowest up, until it no longer keeps up.

With the rates given, every client runs at every one. By default the ladder doubles from LOWEST, and a client
leaves it after the first rate at which it saturated (achieved < 99% of offered) or failed: one rate past
saturation is enough to locate it, and the rates above would only queue more. Clients of one `group` (the GIL
report's held and released binding) climb together, so that each is measured wherever the other is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import SetupError
from ..model import Row
from ..registry.spec import ClientSpec
from ..workload import Workload, WorkloadError, number
from .testbed import Endpoint, Testbed

#: the default ladder: from 250 requests/s, doubling, 12 rates (up to 512,000/s: within the drivers' schedule
#: of 1,000,000/s per worker even for one worker)
LADDER = tuple(250.0 * 2**i for i in range(12))


def parse_rates(text: str, workload: Workload, flag: str = "--rates") -> list[float]:
    """Comma-separated rates, each a positive number the workload can run at, in increasing order."""
    items = [v.strip() for v in text.split(",") if v.strip()]
    if not items:
        raise SetupError(f"{flag} is empty")
    try:
        rates = sorted({float(v) for v in items})
    except ValueError:
        raise SetupError(f"{flag} must be numbers of requests/s, got {text!r}") from None
    for r in rates:
        try:
            workload.replace(rate=r)
        except WorkloadError as exc:
            raise SetupError(f"{flag}: {exc}") from None
    return rates


def point_name(rate: float) -> str:
    """A rate's folder and column name, e.g. `rate-2000`."""
    return f"rate-{number(rate)}"


def climb(
    testbed: Testbed,
    specs: Sequence[ClientSpec],
    base: Workload,
    rates: Sequence[float],
    out: Path,
    sink: list[tuple[float, list[Row]]],
    *,
    every_rate: bool,
    groups: Sequence[Sequence[str]] = (),
    endpoint: Endpoint | None = None,
    after: Callable[[float, Workload, list[Row]], None] = lambda r, w, rows: None,
) -> None:
    """Run `specs` at each rate (into out/points/rate-R/), appending (rate, rows) to `sink` before each
    rate runs, so that an interrupted ladder keeps what it measured. Without `every_rate`, a client (or its
    group) stops after its first saturated or failed rate, and the ladder after its last client."""
    group_of = {name: tuple(g) for g in groups for name in g}
    active = list(specs)
    for rate in rates:
        if not active:
            break
        wl = base.replace(rate=rate)
        point = out / "points" / point_name(rate)
        point.mkdir(parents=True, exist_ok=True)
        testbed.console.print(f"[bold]{number(rate)} requests/s[/]: {wl.describe()}")
        rows: list[Row] = []
        sink.append((rate, rows))
        testbed.run_rows(active, wl, point, rows, endpoint)
        after(rate, wl, rows)
        if every_rate:
            continue
        done = {r.client.name for r in rows if r.failed or not r.runs or _saturated(r)}
        running = {s.name for s in active}
        active = [s for s in active if not all(n in done for n in group_of.get(s.name, (s.name,)) if n in running)]


def _saturated(row: Row) -> bool:
    agg = row.aggregate
    return agg is None or bool(agg.median.saturated)
