"""The run table: its columns, and the `Table` of a set of rows (every exporter formats that one table).

All figures come from `stats` (via `model.Row.aggregate`); this module only formats them. With repeats,
every figure is the median over the repeats and `Spread` is Bench's min-max range. Open-loop rows
(docs/open-loop.md) have a table of their own: offered and achieved rate, late starts, the corrected latency
and the service time, and whether the row saturated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..model import Client, Row
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

    floor_mean_ms: float | None = None  # the native floor's (cpp-floor)
    python_floor_mean_ms: float | None = None  # the Python floor's (py-floor): what the Python rows divide by
    #: the asyncio floors' (py-floor-async, py-floor-uvloop) by event loop: what the async Python rows on that
    #: loop divide by
    async_floor_mean_ms: dict[str, float] = field(default_factory=dict)
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


def event_loop(client: Client) -> str | None:
    """An async row's event loop: `asyncio`, or what its library's `+<loop>` says (`httpx+uvloop`); None when sync."""
    if client.mode != "async":
        return None
    return client.library.rpartition("+")[2] if "+" in client.library else "asyncio"


def _xfloor(row: Row, ctx: Context) -> str:
    agg = row.aggregate
    # an async Python row against the asyncio floor of its loop, another Python row against the Python floor, when
    # they ran (else, as tables before them had, the Python floor or the native one)
    python = row.client.language == "Python"
    loop = event_loop(row.client) if python else None
    floor = (ctx.async_floor_mean_ms.get(loop) if loop else None) or (
        ctx.python_floor_mean_ms if python and ctx.python_floor_mean_ms else ctx.floor_mean_ms
    )
    if agg is None or agg.median.mean_ms is None or not floor:
        return "-"
    return f"{agg.median.mean_ms / floor:.2f}"


def _counts(row: Row) -> dict[str, int] | None:
    """Our server's counts summed over the row's runs (None where the server did not count: --target)."""
    runs = [r.server_counts for r in row.runs if r.server_counts]
    return {k: sum(c[k] for c in runs) for k in runs[0]} if runs else None


def _resumed(row: Row, ctx: Context) -> str:
    c = _counts(row)
    return "-" if not c or not c["tls_handshakes"] else f"{c['tls_resumed']}/{c['tls_handshakes']}"


def _asked(row: Row, flag: str, value: str) -> bool:
    """Whether the row's driver was run with `flag value` (its command line, kept in results.json)."""
    return any((flag, value) in zip(r.command, r.command[1:], strict=False) for r in row.runs)


def _asked_http(row: Row) -> str | None:
    """The HTTP version the row's driver was asked for beyond 1.1 ("2", "3"), or None."""
    return next((v for v in ("2", "3") if _asked(row, "--http", v)), None)


def _shared(row: Row) -> bool:
    return _asked(row, "--client-scope", "shared")


def fell_back(row: Row) -> bool:
    """Asked for HTTP/2 or HTTP/3 and reported another protocol (or none) for its responses."""
    asked = _asked_http(row)
    return asked is not None and row.aggregate is not None and (row.info or {}).get("protocol") != f"HTTP/{asked}"


def _protocol(row: Row, ctx: Context) -> str:
    """The protocol the responses came with (the driver's client.protocol); flagged when it is not the HTTP/2 or
    HTTP/3 asked for."""
    if row.aggregate is None:
        return "-"
    protocol = (row.info or {}).get("protocol")
    if fell_back(row):
        return f"{protocol} (fell back)" if protocol else f"not reported (asked HTTP/{_asked_http(row)})"
    return str(protocol or "-")


def _served(row: Row, key: str) -> list[int]:
    """A count of our server's per run (warm-up included)."""
    return [r.server_counts[key] for r in row.runs if r.server_counts and key in r.server_counts and r.stats]


def _median_count(counts: list[int]) -> str:
    if not counts:
        return "-"
    median = float(np.median(counts))
    return f"{median:.0f}" if median.is_integer() else f"{median:.1f}"


def _connections(row: Row, ctx: Context) -> str:
    """The connections our server counted per run (warm-up included), the median over the repeats: TCP's and,
    over HTTP/3, QUIC's (the server counts those apart)."""
    counts = [
        r.server_counts["connections"] + r.server_counts.get("quic_connections", 0)
        for r in row.runs
        if r.server_counts and "connections" in r.server_counts and r.stats
    ]
    return _median_count(counts)


def _origins(row: Row, ctx: Context) -> str:
    """The origins (authorities) our server saw the row's requests for, the median over the repeats."""
    return _median_count(_served(row, "origins"))


def udp_errors(row: Row) -> int | None:
    """The kernel's UDP receive errors over the row's runs (None where they were not read)."""
    counted = [sum(r.udp_errors.values()) for r in row.runs if r.udp_errors is not None]
    return sum(counted) if counted else None


def _udp(row: Row, ctx: Context) -> str:
    n = udp_errors(row)
    return "-" if n is None else str(n)


def _status(row: Row, ctx: Context) -> str:
    if not row.runs:
        return "not run"
    if row.unavailable or row.tolerated or row.unsupported:
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
    RunColumn("MB/s", _median("mb_per_s", 1)),
    RunColumn("CPU(us/req)", _median("cpu_us_per_req", 1)),
    RunColumn("RSS(MiB)", _median("peak_rss_mib", 1), terminal=False),
    RunColumn("RSS/W(MiB)", _median("rss_per_worker_mib", 2), terminal=False),
    RunColumn("GC/1k req", _median("gc_per_1k_req", 2), terminal=False),
    RunColumn("GC objs/1k", _median("gc_objects_per_1k_req", 0), terminal=False),
    RunColumn("xfloor", _xfloor),
    RunColumn("TLS resumed", _resumed),
    RunColumn("Protocol", _protocol, numeric=False),
    RunColumn("Conns", _connections),
    RunColumn("Origins", _origins),
    RunColumn("UDP errs", _udp),
    RunColumn("Status", _status, numeric=False),
)
#: shown only when some row's driver counted its garbage collector (a Python driver)
GC_COLUMNS = ("RSS/W(MiB)", "GC/1k req", "GC objs/1k")
#: request and response body bytes per request from which the MB/s column is shown (a GET / moves 13)
MOVED_BYTES = 1024
#: shown only when a row asked for HTTP/2 or a shared client (other tables keep the columns they always had)
SCOPE_COLUMNS = ("Protocol", "Conns")


def _count(name: str) -> Callable[[Row, Context], str]:
    def cell(row: Row, ctx: Context) -> str:
        agg = row.aggregate
        value = None if agg is None else getattr(agg.median, name)
        return "-" if value is None else str(value)

    return cell


def _saturated(row: Row, ctx: Context) -> str:
    agg = row.aggregate
    if agg is None or agg.median.saturated is None:
        return "-"
    return "yes" if agg.median.saturated else "no"


#: the open loop's table: the corrected latency (from the intended start) as P50 ... Max, the service time
#: (from the actual start) as Svc ...
OPEN_COLUMNS: tuple[RunColumn, ...] = (
    RunColumn("Language", lambda r, c: r.client.language, numeric=False),
    RunColumn("Library", _library, numeric=False),
    RunColumn("Offered(req/s)", _median("offered_rps", 0)),
    RunColumn("Achieved(req/s)", _median("throughput_rps", 0)),
    RunColumn("MB/s", _median("mb_per_s", 1)),
    RunColumn("Late(%)", _median("late_pct", 1)),
    RunColumn("Missed", _count("missed"), terminal=False),
    RunColumn("P50(ms)", _median("p50_ms")),
    RunColumn("P90(ms)", _median("p90_ms"), terminal=False),
    RunColumn("P99(ms)", _median("p99_ms")),
    RunColumn("P99.9(ms)", _median("p999_ms")),
    RunColumn("P99.99(ms)", _median("p9999_ms"), terminal=False),
    RunColumn("Max(ms)", _median("max_ms")),
    RunColumn("Svc P50(ms)", _median("service_p50_ms"), terminal=False),
    RunColumn("Svc P90(ms)", _median("service_p90_ms"), terminal=False),
    RunColumn("Svc P99(ms)", _median("service_p99_ms")),
    RunColumn("Svc P99.9(ms)", _median("service_p999_ms")),
    RunColumn("Svc P99.99(ms)", _median("service_p9999_ms"), terminal=False),
    RunColumn("Svc Max(ms)", _median("service_max_ms"), terminal=False),
    RunColumn("async/sync", lambda r, c: r.client.mode, numeric=False),
    RunColumn("GIL", lambda r, c: r.client.gil or "-", numeric=False),
    RunColumn("Errors", _errors),
    RunColumn("CPU(us/req)", _median("cpu_us_per_req", 1)),
    RunColumn("RSS(MiB)", _median("peak_rss_mib", 1), terminal=False),
    RunColumn("RSS/W(MiB)", _median("rss_per_worker_mib", 2), terminal=False),
    RunColumn("GC/1k req", _median("gc_per_1k_req", 2), terminal=False),
    RunColumn("GC objs/1k", _median("gc_objects_per_1k_req", 0), terminal=False),
    RunColumn("Saturated", _saturated, numeric=False),
    RunColumn("Protocol", _protocol, numeric=False),
    RunColumn("Conns", _connections),
    RunColumn("UDP errs", _udp),
    RunColumn("Status", _status, numeric=False),
)


def _moved(row: Row) -> float:
    """The body bytes, both ways, of a row's average request."""
    agg = row.aggregate
    if agg is None or not agg.median.requests:
        return 0.0
    return (agg.median.body_bytes + agg.median.sent_bytes) / agg.median.requests


def is_open(rows: Sequence[Row]) -> bool:
    """Rows of an open loop: their figures have an offered rate."""
    return any(r.aggregate is not None and r.aggregate.median.offered_rps is not None for r in rows)


def context(rows: Sequence[Row]) -> Context:
    def floor(python: bool, loop: str | None = None) -> float | None:
        means = [
            r.aggregate.median.mean_ms
            for r in rows
            if r.client.floor
            and (r.client.language == "Python") == python
            and event_loop(r.client) == loop
            and not r.failed
            and r.aggregate
            and r.aggregate.median.mean_ms
        ]
        return min(means) if means else None

    compiled: dict[str, frozenset[str]] = {}
    for r in rows:
        if (packages := _compiled(r)) is not None:
            compiled[_base_name(r)] = compiled.get(_base_name(r), frozenset()) | packages
    loops = {loop for r in rows if r.client.floor and (loop := event_loop(r.client))}
    by_loop = {loop: mean for loop in sorted(loops) if (mean := floor(True, loop)) is not None}
    return Context(
        floor_mean_ms=floor(False), python_floor_mean_ms=floor(True), async_floor_mean_ms=by_loop, compiled=compiled
    )


def run_table(rows: Sequence[Row], title: str | None = None, *, terminal: bool = False) -> Table:
    """The table of a run: every column for the files, the narrower set for the terminal; the open loop's
    columns for open-loop rows."""
    ctx = context(rows)
    scoped = any(_asked_http(r) or _shared(r) for r in rows)
    # the kernel's UDP receive errors: a column (and a yellow row) only where some row had some
    dropped = {r.client.name for r in rows if udp_errors(r)}
    # the collector's columns where some driver counted it (tables written before it did keep their columns)
    collected = any(r.aggregate is not None and r.aggregate.median.gc_per_1k_req is not None for r in rows)
    moved = any(_moved(r) >= MOVED_BYTES for r in rows)
    # the origins our server served a row on, where some row used more than one (--hosts, --targets)
    many = any(max(_served(r, "origins"), default=0) > 1 for r in rows)

    def shown(c: RunColumn) -> bool:
        return (
            (c.terminal or not terminal)
            and (moved or c.label != "MB/s")
            and (many or c.label != "Origins")
            and (scoped or c.label not in SCOPE_COLUMNS)
            and (bool(dropped) or c.label != "UDP errs")
            and (collected or c.label not in GC_COLUMNS)
        )

    if is_open(rows):
        open_cols = [c for c in OPEN_COLUMNS if shown(c)]
        return Table(
            [Column(c.label, c.numeric) for c in open_cols],
            [[c.cell(r, ctx) for c in open_cols] for r in rows],
            title=title,
            styles=[
                "red"
                if r.failed
                else "yellow"
                if _saturated(r, ctx) == "yes" or fell_back(r) or r.client.name in dropped
                else None
                for r in rows
            ],
        )
    cols = [c for c in COLUMNS if shown(c)]
    if ctx.floor_mean_ms is None and ctx.python_floor_mean_ms is None and not ctx.async_floor_mean_ms:
        cols = [c for c in cols if c.label != "xfloor"]
    if not any((c := _counts(r)) and c["tls_handshakes"] for r in rows):  # shown over HTTPS only
        cols = [c for c in cols if c.label != "TLS resumed"]
    return Table(
        [Column(c.label, c.numeric) for c in cols],
        [[c.cell(r, ctx) for c in cols] for r in rows],
        title=title,
        styles=["red" if r.failed else "yellow" if fell_back(r) or r.client.name in dropped else None for r in rows],
    )
