"""The run table: its columns, and the `Table` of a set of rows (every exporter formats that one table).

All figures come from `stats` (via `model.Row.aggregate`); this module only formats them. With repeats,
every figure is the median over the repeats and `Spread` is Bench's min-max range.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..model import Row
from .base import Column, Table


@dataclass(frozen=True)
class RunColumn:
    label: str
    cell: Callable[[Row, Context], str]
    numeric: bool = True
    terminal: bool = True  # shown in the terminal table (all columns go to the files)


@dataclass(frozen=True)
class Context:
    """Figures that relate rows to each other (the floor row's mean, for `xfloor`; per client, the packages that
    ran compiled under some interpreter, to name those that fell back to pure Python under another)."""

    floor_mean_ms: float | None = None
    compiled: dict[str, frozenset[str]] = field(default_factory=dict)


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _median(name: str, digits: int = 2) -> Callable[[Row, Context], str]:
    def cell(row: Row, ctx: Context) -> str:
        agg = row.aggregate
        return "-" if agg is None else fmt(getattr(agg.median, name), digits)

    return cell


def _errors(row: Row, ctx: Context) -> str:
    agg = row.aggregate
    return "-" if agg is None else str(agg.median.errors)


def _spread(row: Row, ctx: Context) -> str:
    agg = row.aggregate
    if agg is None:
        return "-"
    if agg.repeats == 1:
        return "(1 run)"
    return f"{agg.bench_min_ms:.2f}-{agg.bench_max_ms:.2f}"


def _xfloor(row: Row, ctx: Context) -> str:
    agg = row.aggregate
    if agg is None or agg.median.mean_ms is None or not ctx.floor_mean_ms:
        return "-"
    return f"{agg.median.mean_ms / ctx.floor_mean_ms:.2f}"


def _counts(row: Row) -> dict[str, int] | None:
    """Our server's counts summed over the row's runs (None where the server did not count: --target)."""
    runs = [r.server_counts for r in row.runs if r.server_counts]
    return {k: sum(c[k] for c in runs) for k in runs[0]} if runs else None


def _resumed(row: Row, ctx: Context) -> str:
    c = _counts(row)
    return "-" if not c or not c["tls_handshakes"] else f"{c['tls_resumed']}/{c['tls_handshakes']}"


def _status(row: Row, ctx: Context) -> str:
    if not row.runs:
        return "not run"
    if row.skipped or row.tolerated:
        return row.reason or row.status
    if not row.failed:
        return "ok"
    return f"FAILED: {row.reason}" if row.reason else "FAILED"


def _base_name(row: Row) -> str:
    return row.client.name.split("@", 1)[0]


def _compiled(row: Row) -> frozenset[str] | None:
    """The packages the driver ran with compiled extension modules (None when it did not say: not Python)."""
    python = (row.info or {}).get("python")
    return frozenset(python.get("extensions") or {}) if python else None


def _library(row: Row, ctx: Context) -> str:
    notes = [f"W={row.client.fixed_workers}"] if row.client.fixed_workers else []
    if row.client.interpreter:
        notes.append(f"Python {row.client.interpreter}")
    python = (row.info or {}).get("python") or {}
    if python.get("free_threaded"):  # what the driver saw at the end of its run, after importing its client
        notes.append("GIL off" if not python.get("gil_enabled") else "GIL re-enabled")
    here = _compiled(row)
    if here is not None and (fallback := sorted(ctx.compiled.get(_base_name(row), frozenset()) - here)):
        notes.append("pure-Python " + ", ".join(fallback))
    return row.client.library + (f" ({', '.join(notes)})" if notes else "")


COLUMNS: tuple[RunColumn, ...] = (
    RunColumn("Language", lambda r, c: r.client.language, numeric=False),
    RunColumn("Library", _library, numeric=False),
    RunColumn("Mean(ms)", _median("mean_ms")),
    RunColumn("P99(ms)", _median("p99_ms")),
    RunColumn("P999(ms)", _median("p999_ms")),
    RunColumn("Max(ms)", _median("max_ms")),
    RunColumn("LMean(ms)", _median("lmean_ms")),
    RunColumn("Bench(ms)", _median("bench_ms")),
    RunColumn("Spread(ms)", _spread),
    RunColumn("async/sync", lambda r, c: r.client.mode, numeric=False),
    RunColumn("GIL", lambda r, c: r.client.gil or "-", numeric=False),
    RunColumn("Errors", _errors),
    RunColumn("Bench/LMean", _median("bench_over_lmean")),
    RunColumn("P50(ms)", _median("p50_ms"), terminal=False),
    RunColumn("req/s", _median("throughput_rps", 0)),
    RunColumn("CPU(us/req)", _median("cpu_us_per_req", 1)),
    RunColumn("RSS(MiB)", _median("peak_rss_mib", 1), terminal=False),
    RunColumn("xfloor", _xfloor),
    RunColumn("TLS resumed", _resumed),
    RunColumn("Status", _status, numeric=False),
)


def context(rows: Sequence[Row]) -> Context:
    floors = [
        r.aggregate.median.mean_ms
        for r in rows
        if r.client.floor and not r.failed and r.aggregate and r.aggregate.median.mean_ms
    ]
    compiled: dict[str, frozenset[str]] = {}
    for r in rows:
        if (packages := _compiled(r)) is not None:
            compiled[_base_name(r)] = compiled.get(_base_name(r), frozenset()) | packages
    return Context(floor_mean_ms=min(floors) if floors else None, compiled=compiled)


def run_table(rows: Sequence[Row], title: str | None = None, *, terminal: bool = False) -> Table:
    """The table of a run: every column for the files, the narrower set for the terminal."""
    ctx = context(rows)
    cols = [c for c in COLUMNS if c.terminal or not terminal]
    if ctx.floor_mean_ms is None:
        cols = [c for c in cols if c.label != "xfloor"]
    if not any((c := _counts(r)) and c["tls_handshakes"] for r in rows):  # shown over HTTPS only
        cols = [c for c in cols if c.label != "TLS resumed"]
    return Table(
        [Column(c.label, c.numeric) for c in cols],
        [[c.cell(r, ctx) for c in cols] for r in rows],
        title=title,
        styles=["red" if r.failed else None for r in rows],
    )
