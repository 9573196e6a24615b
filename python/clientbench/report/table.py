"""The run table: the `Table` of a set of rows (every exporter formats that one table), its columns those of the
registry (metrics.py: `COLUMNS`, or `OPEN_COLUMNS` for open-loop rows).

All figures come from `stats` (via `model.Row.aggregate`); this module only formats them. With repeats, every
figure is the median over the repeats, with its min-max beside it (`Table.spreads`, which the HTML page shows),
and `Spread` is Bench's min-max range. Open-loop rows (docs/open-loop.md) have a table of their own: offered and
achieved rate, late starts, the corrected latency and the service time, and whether the row saturated.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..metrics import COLUMNS, OPEN_COLUMNS, Column, Context, context, dropped, fell_back, fmt
from ..model import Row
from .base import Column as TableColumn
from .base import Table

__all__ = ["COLUMNS", "OPEN_COLUMNS", "is_open", "run_table", "shown"]


def is_open(rows: Sequence[Row]) -> bool:
    """Rows of an open loop: their figures have an offered rate."""
    return any(r.aggregate is not None and r.aggregate.median.offered_rps is not None for r in rows)


def shown(rows: Sequence[Row], ctx: Context, *, terminal: bool = False) -> list[Column]:
    """The columns a table of these rows has: the open loop's for open-loop rows; each where its rule says the rows
    have it, and only the terminal's narrower set for the terminal."""
    columns = OPEN_COLUMNS if is_open(rows) else COLUMNS
    return [c for c in columns if (c.terminal or not terminal) and c.show(rows, ctx)]


def _spread(column: Column, row: Row) -> str:
    """The min-max over the repeats of the median a metric's cell shows ("" for a count, one repeat, or none)."""
    agg = row.aggregate
    metric = column.metric
    if agg is None or metric is None or metric.summed or (s := agg.spread(metric.field)) is None or s.low == s.high:
        return ""
    return f"{fmt(s.low, metric.digits)}-{fmt(s.high, metric.digits)}"


def run_table(rows: Sequence[Row], title: str | None = None, *, terminal: bool = False) -> Table:
    """The table of a run: every column for the files, the narrower set for the terminal; the open loop's
    columns for open-loop rows. A failed row is red; one to look at (saturated, fallen back from the HTTP version
    asked for, UDP datagrams dropped) yellow."""
    ctx = context(rows)
    columns = shown(rows, ctx, terminal=terminal)
    lost = {r.client.name for r in rows if dropped([r], ctx)}

    def style(r: Row) -> str | None:
        agg = r.aggregate
        if r.failed:
            return "red"
        saturated = agg is not None and agg.median.saturated is True
        return "yellow" if saturated or fell_back(r) or r.client.name in lost else None

    return Table(
        [TableColumn(c.label, c.numeric) for c in columns],
        [[c.cell(r, ctx) for c in columns] for r in rows],
        title=title,
        styles=[style(r) for r in rows],
        spreads=[[_spread(c, r) for c in columns] for r in rows],
    )
