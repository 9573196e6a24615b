"""Every figure clientbench reports and every column of its run tables, once (as hyperfine's `Metric`).

A `Metric` is one figure: its field (a `stats.RowStats` field, a cost.json row's, or a cold start's in cold.json),
its unit and digits, which way is better, its column in the run table (label, shown in the terminal or only in the
files, and when the column shows at all), its axis title in the plots, its name for `compare --fail-on`
(analysis/gate.py) and its slug on the dashboards (report/metrics.py). A `Column` is one column of a run table: a
metric's median over the repeats, or a column of its own (Language, Library, Spread, Status, ...). `COLUMNS` (the
closed loop's table) and `OPEN_COLUMNS` (the open loop's) are the tables' columns in order; report/table.py builds
a table from them, the gate, the dashboards and the figures read `METRICS`, and python/tests/test_metrics.py
checks that docs/measurement.md and docs/open-loop.md describe every column. A cold start's figures (`source`
"cold", `clientbench cold`) are columns of the cold-start table (report/cold.py) in their order here, and
docs/cold-start.md describes them.

Adding a figure: its field where it is produced (`stats.RowStats` and `row_stats`; for a cold start,
execution/cold_start.py), one `Metric` here (and its column in the tables where it shows), and the field in the
schema (schema/results.schema.json; schema/cold.schema.json).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .model import Client, Row
from .stats import OWN, SUMMED, RowStats, median

#: where a figure is read: a run's RowStats, a cost.json row, a cold.json row (its `figures` and each sample's)
Source = Literal["run", "cost", "cold"]

#: what a column's cell shows of a row, given the figures that relate the rows to each other
Cell = Callable[[Row, "Context"], str]
#: whether a column shows in a table of these rows (columns that only some runs have stay out of the others)
Rule = Callable[[Sequence[Row], "Context"], bool]


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


def always(rows: Sequence[Row], ctx: Context) -> bool:
    return True


@dataclass(frozen=True)
class Metric:
    """One figure. `field` is a RowStats field (`source` "run"), a cost.json row's (`source` "cost") or a cold
    start's (`source` "cold": a key of a cold.json row's `figures` and of each sample's)."""

    field: str
    unit: str = ""  # of a value: ms, us, MiB, req/s, ... ("" a plain number)
    label: str = ""  # its column's label in its tables (the run tables, or the cold-start table; "" no column)
    digits: int = 2  # in its column
    smaller: bool = True  # smaller is better
    terminal: bool = True  # its column shows in the terminal table (every column goes to the files)
    show: Rule = always  # when its column shows
    axis: str = ""  # its axis title in the plots (default: the field's name in words)
    gate: str = ""  # the name `compare --fail-on` takes ("" not gated)
    gate_unit: str = ""  # the unit the gate's table says (default: `unit`)
    slug: str = ""  # the measure a dashboard tracks (github-benchmark, bencher; "" not tracked)
    title: str = ""  # the dashboard's name of the figure
    source: Source = "run"
    # a cold start's: what the figure spans for a Python row (its probe) and for a row whose driver is a program
    # ("" it has none); cold.md's method lists them
    python_span: str = ""
    program_span: str = ""
    #: a phase's mean (a key of RowStats.phases: `field` is "phases.<key>"; docs/phases.md)
    phase: str = ""

    def value(self, stats: RowStats) -> Any:
        """Its value in a run's figures."""
        if self.phase:
            return (stats.phases or {}).get(self.phase)
        return getattr(stats, self.field)

    @property
    def summed(self) -> bool:
        """A count summed over the repeats (stats.SUMMED), not a median: no min-max, not drawn."""
        return self.field in SUMMED

    @property
    def axis_title(self) -> str:
        return self.axis or self.field.replace("_", " ")

    def column(self, label: str = "", *, terminal: bool | None = None) -> Column:
        """Its column in a run table (another label or terminal setting where one table says it otherwise)."""
        return Column(
            label or self.label,
            _count(self.field) if self.summed else _median(self, self.digits),
            terminal=self.terminal if terminal is None else terminal,
            show=self.show,
            metric=self,
        )


@dataclass(frozen=True)
class Column:
    """One column of a run table: a metric's median over the repeats (`metric`), or a column of its own."""

    label: str
    cell: Cell
    numeric: bool = True
    terminal: bool = True  # shown in the terminal table (all columns go to the files)
    show: Rule = always
    metric: Metric | None = None


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _median(metric: Metric, digits: int) -> Cell:
    def cell(row: Row, ctx: Context) -> str:
        agg = row.aggregate
        return "-" if agg is None else fmt(metric.value(agg.median), digits)

    return cell


def _count(name: str) -> Cell:
    def cell(row: Row, ctx: Context) -> str:
        agg = row.aggregate
        value = None if agg is None else getattr(agg.median, name)
        return "-" if value is None else str(value)

    return cell


# -- when a column shows ---------------------------------------------------------------------------

#: request and response body bytes per request from which the MB/s column is shown (a GET / moves 13)
MOVED_BYTES = 1024


def _moved(row: Row) -> float:
    """The body bytes, both ways, of a row's average request."""
    agg = row.aggregate
    if agg is None or not agg.median.requests:
        return 0.0
    return (agg.median.body_bytes + agg.median.sent_bytes) / agg.median.requests


def moved(rows: Sequence[Row], ctx: Context) -> bool:
    """Some row moved at least MOVED_BYTES of bodies per request."""
    return any(_moved(r) >= MOVED_BYTES for r in rows)


def collected(rows: Sequence[Row], ctx: Context) -> bool:
    """Some row's driver counted its garbage collector (a Python driver; tables written before it did keep their
    columns)."""
    return any(r.aggregate is not None and r.aggregate.median.gc_per_1k_req is not None for r in rows)


def _asked(row: Row, flag: str, value: str) -> bool:
    """Whether the row's driver was run with `flag value` (its command line, kept in results.json)."""
    return any((flag, value) in zip(r.command, r.command[1:], strict=False) for r in row.runs)


def asked_http(row: Row) -> str | None:
    """The HTTP version the row's driver was asked for beyond 1.1 ("2", "3"), or None."""
    return next((v for v in ("2", "3") if _asked(row, "--http", v)), None)


def scoped(rows: Sequence[Row], ctx: Context) -> bool:
    """Some row asked for HTTP/2 or HTTP/3, or a shared client (other tables keep the columns they always had)."""
    return any(asked_http(r) or _asked(r, "--client-scope", "shared") for r in rows)


def _served(row: Row, key: str) -> list[int]:
    """A count of our server's per run (warm-up included)."""
    return [r.server_counts[key] for r in row.runs if r.server_counts and key in r.server_counts and r.stats]


def many_origins(rows: Sequence[Row], ctx: Context) -> bool:
    """Some row's requests went to more than one origin (--hosts, --targets)."""
    return any(max(_served(r, "origins"), default=0) > 1 for r in rows)


def udp_errors(row: Row) -> int | None:
    """The kernel's UDP receive errors over the row's runs (None where they were not read)."""
    counted = [sum(r.udp_errors.values()) for r in row.runs if r.udp_errors is not None]
    return sum(counted) if counted else None


def dropped(rows: Sequence[Row], ctx: Context) -> bool:
    """The kernel dropped some row's UDP datagrams (a column, and a yellow row, only then)."""
    return any(udp_errors(r) for r in rows)


def has_floor(rows: Sequence[Row], ctx: Context) -> bool:
    """A floor row ran (what xfloor divides by)."""
    return ctx.floor_mean_ms is not None or ctx.python_floor_mean_ms is not None or bool(ctx.async_floor_mean_ms)


def _counts(row: Row) -> dict[str, int] | None:
    """Our server's counts summed over the row's runs (None where the server did not count: --target)."""
    runs = [r.server_counts for r in row.runs if r.server_counts]
    return {k: sum(c[k] for c in runs) for k in runs[0]} if runs else None


def _phased(key: str) -> Rule:
    """Some row recorded phase `key` (docs/phases.md)."""

    def shown(rows: Sequence[Row], ctx: Context) -> bool:
        return any(r.aggregate is not None and key in (r.aggregate.median.phases or {}) for r in rows)

    return shown


def over_tls(rows: Sequence[Row], ctx: Context) -> bool:
    """Our server counted TLS handshakes (a run over HTTPS)."""
    return any((c := _counts(r)) and c["tls_handshakes"] for r in rows)


# -- the figures -----------------------------------------------------------------------------------

BENCH = Metric("bench_ms", "ms", "Bench(ms)", axis="Bench: wall time of the group (ms)", gate="bench",
               slug="bench-ms", title="Bench")  # fmt: skip
LMEAN = Metric("lmean_ms", "ms", "LMean(ms)", axis="LMean: mean worker loop (ms)", gate="lmean")
MEAN = Metric("mean_ms", "ms", "Mean(ms)", axis="latency mean (ms)", gate="mean", slug="mean-ms", title="Mean")
P50 = Metric("p50_ms", "ms", "P50(ms)", axis="latency P50 (ms)", gate="p50")
P90 = Metric("p90_ms", "ms", "P90(ms)", terminal=False, axis="latency P90 (ms)")
P99 = Metric("p99_ms", "ms", "P99(ms)", axis="latency P99 (ms)", gate="p99", slug="p99-ms", title="P99")
P999 = Metric("p999_ms", "ms", "P999(ms)", axis="latency P99.9 (ms)", gate="p999")
P9999 = Metric("p9999_ms", "ms", "P99.99(ms)", terminal=False, axis="latency P99.99 (ms)")
MAX = Metric("max_ms", "ms", "Max(ms)", axis="latency max (ms)", gate="max")
CPU = Metric("cpu_us_per_req", "us", "CPU(us/req)", 1, axis="client CPU per request (us)", gate="cpu",
             gate_unit="us/req", slug="cpu-us-per-request", title="CPU per request")  # fmt: skip
RSS = Metric("peak_rss_mib", "MiB", "RSS(MiB)", 1, terminal=False, axis="peak RSS (MiB)", gate="rss")
THROUGHPUT = Metric("throughput_rps", "req/s", "req/s", 0, smaller=False, axis="throughput (requests/s)", gate="rps")
BENCH_OVER_LMEAN = Metric("bench_over_lmean", "", "Bench/LMean", axis="Bench / LMean")
MB_PER_S = Metric("mb_per_s", "MB/s", "MB/s", 1, smaller=False, show=moved)
RSS_PER_WORKER = Metric("rss_per_worker_mib", "MiB", "RSS/W(MiB)", terminal=False, show=collected)
GC = Metric("gc_per_1k_req", "", "GC/1k req", terminal=False, show=collected)
GC_OBJECTS = Metric("gc_objects_per_1k_req", "", "GC objs/1k", 0, terminal=False, show=collected)
ERRORS = Metric("errors", "", "Errors")
REQUESTS = Metric("requests")
BODY_BYTES = Metric("body_bytes", "bytes")
SENT_BYTES = Metric("sent_bytes", "bytes")
# the open loop's
OFFERED = Metric("offered_rps", "req/s", "Offered(req/s)", 0, smaller=False, axis="offered rate (requests/s)")
LATE = Metric("late", "")
LATE_PCT = Metric("late_pct", "%", "Late(%)", 1, axis="late starts (%)")
MISSED = Metric("missed", "", "Missed", terminal=False)
SATURATED = Metric("saturated")  # a verdict, not a number: its column is SATURATED_COLUMN
SERVICE_MEAN = Metric("service_mean_ms", "ms", axis="service time mean (ms)")
SERVICE_P50 = Metric("service_p50_ms", "ms", "Svc P50(ms)", terminal=False, axis="service time P50 (ms)")
SERVICE_P90 = Metric("service_p90_ms", "ms", "Svc P90(ms)", terminal=False, axis="service time P90 (ms)")
SERVICE_P99 = Metric("service_p99_ms", "ms", "Svc P99(ms)", axis="service time P99 (ms)")
SERVICE_P999 = Metric("service_p999_ms", "ms", "Svc P99.9(ms)", axis="service time P99.9 (ms)")
SERVICE_P9999 = Metric("service_p9999_ms", "ms", "Svc P99.99(ms)", terminal=False, axis="service time P99.99 (ms)")
SERVICE_MAX = Metric("service_max_ms", "ms", "Svc Max(ms)", terminal=False, axis="service time max (ms)")


# the phases of a request, where the drivers recorded them (--phases; docs/phases.md): each phase's mean, a merged
# pair where a library cannot tell the two apart, and the client's own time (the latency less the phases)
def _phase(key: str, label: str, axis: str, **more: Any) -> Metric:
    return Metric(f"phases.{key}", "ms", f"{label}(ms)", 3, show=_phased(key), axis=axis, phase=key, **more)


PHASE_DNS = _phase("dns", "DNS", "resolving the host (ms)")
PHASE_CONNECT = _phase("connect", "Connect", "TCP connect (ms)")
PHASE_TLS = _phase("tls", "TLS", "TLS handshake (ms)")
PHASE_CONNECT_TLS = _phase("connect+tls", "Conn+TLS", "TCP connect and TLS handshake (ms)")
PHASE_DNS_CONNECT_TLS = _phase("dns+connect+tls", "DNS+Conn+TLS", "name, TCP connect and TLS handshake (ms)")
PHASE_SEND = _phase("send", "Send", "request written (ms)")
PHASE_WAIT = _phase("wait", "Wait", "written to the first response byte (ms)")
PHASE_SEND_WAIT = _phase("send+wait", "Send+Wait", "request start to the response's head (ms)")
# a QUIC connection made within the exchange (reqwest over HTTP/3): its handshake and the request in one figure
PHASE_CONNECT_TO_WAIT = _phase("connect+tls+send+wait", "Conn..Wait", "connection made to the response's head (ms)")
PHASE_DNS_TO_WAIT = _phase("dns+connect+tls+send+wait", "DNS..Wait", "name resolved to the response's head (ms)")
PHASE_RECEIVE = _phase("receive", "Recv", "first response byte to the body's end (ms)")
PHASE_OWN = _phase(OWN, "Own", "the client's own time: latency less its phases (ms)", gate="own", slug="own-ms",
                   title="the client's own time per request")  # fmt: skip
PHASES = (PHASE_DNS, PHASE_CONNECT, PHASE_TLS, PHASE_CONNECT_TLS, PHASE_DNS_CONNECT_TLS, PHASE_SEND, PHASE_WAIT,
          PHASE_SEND_WAIT, PHASE_CONNECT_TO_WAIT, PHASE_DNS_TO_WAIT, PHASE_RECEIVE, PHASE_OWN)  # fmt: skip

# `clientbench cost`'s counts per request (cost.json's rows), which repeat within 1%: the gate takes plain percentages
INSTRUCTIONS = Metric("instructions_per_request", "instructions", gate="instructions", gate_unit="per request",
                      slug="instructions-per-request", title="instructions per request", source="cost")  # fmt: skip
SYSCALLS = Metric("syscalls_per_request", "syscalls", gate="syscalls", gate_unit="per request",
                  slug="syscalls-per-request", title="syscalls per request", source="cost")  # fmt: skip
ALLOCATIONS = Metric("allocations_per_request", "allocations", gate="allocations", gate_unit="per request",
                     slug="allocations-per-request", title="allocations per request", source="cost")  # fmt: skip
# `clientbench cold`'s figures (cold.json's rows: the median and min-max over the samples, each a new process), in
# the cold-start table's order; the gate judges them as timed figures, over the samples (docs/cold-start.md)
COLD_START = Metric(
    "start_ms", "ms", "Start(ms)", source="cold",
    python_span="process start to the probe's first line: exec, the interpreter's start-up and site",
)  # fmt: skip
COLD_IMPORT = Metric(
    "import_ms", "ms", "Import(ms)", gate="import", slug="cold-import-ms",
    title="cold start: process start to the library imported", source="cold",
    python_span="process start to the library imported (Start, then `import LIBRARY`)",
)  # fmt: skip
COLD_LIBRARY = Metric(
    "library_ms", "ms", source="cold",
    python_span="the `import LIBRARY` statement alone (Import - Start, less the probe's first lines)",
)  # fmt: skip
COLD_HARNESS = Metric(
    "harness_ms", "ms", source="cold",
    python_span="loading the row's plugin and clientbench's harness: left out of every other figure",
)  # fmt: skip
COLD_CONSTRUCT = Metric(
    "construct_ms", "ms", "Construct(ms)", gate="construct", slug="cold-construct-ms",
    title="cold start: client construction", source="cold", python_span="the plugin's make_client: the client built",
)  # fmt: skip
COLD_FIRST = Metric(
    "first_ms", "ms", "First(ms)", gate="first", slug="cold-first-ms", title="cold start: first request",
    source="cold",
    python_span="the first request on the new client: its connection, TLS handshake (https) and exchange",
    program_span="the first request, as the driver timed it (its client was made before)",
)  # fmt: skip
COLD_SECOND = Metric(
    "second_ms", "ms", "Second(ms)", gate="second", slug="cold-second-ms", title="cold start: second request",
    source="cold", python_span="a second request on the same client",
    program_span="the second request on the same client",
)  # fmt: skip
COLD_ANSWER = Metric(
    "answer_ms", "ms", "Answer(ms)", gate="answer", slug="cold-answer-ms",
    title="cold start: process start to the first answer", source="cold",
    python_span="process start to the first answer: Import + Construct + First",
    program_span="exec to the first answer: the process's life less what followed the first answer in the driver's "
    "timed section (an upper bound, by its document and its exit)",
)  # fmt: skip
COLD_EXIT = Metric(
    "total_ms", "ms", "Exit(ms)", gate="exit", source="cold",
    python_span="process start to its exit, as the runner saw it (what hyperfine times)",
    program_span="exec to exit, as the runner saw it (what hyperfine times)",
)  # fmt: skip
COLD_RSS = Metric(
    "rss_mib", "MiB", "RSS(MiB)", 1, gate="rss", slug="cold-rss-mib", title="cold start: peak RSS", source="cold",
    python_span="peak resident set (VmHWM) at the end",
    program_span="peak resident set (VmHWM), from the driver's document",
)  # fmt: skip

#: every figure: the gate lists its names, the dashboards their measures, in this order
METRICS: tuple[Metric, ...] = (
    BENCH, LMEAN, MEAN, P50, P90, P99, P999, P9999, MAX, CPU, RSS, THROUGHPUT, BENCH_OVER_LMEAN, MB_PER_S,
    RSS_PER_WORKER, GC, GC_OBJECTS, ERRORS, REQUESTS, BODY_BYTES, SENT_BYTES, OFFERED, LATE, LATE_PCT, MISSED,
    SATURATED, SERVICE_MEAN, SERVICE_P50, SERVICE_P90, SERVICE_P99, SERVICE_P999, SERVICE_P9999, SERVICE_MAX,
    *PHASES, INSTRUCTIONS, SYSCALLS, ALLOCATIONS, COLD_START, COLD_IMPORT, COLD_LIBRARY, COLD_HARNESS, COLD_CONSTRUCT,
    COLD_FIRST, COLD_SECOND, COLD_ANSWER, COLD_EXIT, COLD_RSS,
)  # fmt: skip
#: a run's figures by RowStats field
BY_FIELD = {m.field: m for m in METRICS if m.source == "run" and not m.phase}


def of_source(source: Source) -> tuple[Metric, ...]:
    """Every figure of a run, a cost document or a cold-start document, in the registry's order."""
    return tuple(m for m in METRICS if m.source == source)


def by_gate(source: Source) -> dict[str, Metric]:
    """The figures `compare --fail-on` judges, by the name it takes: a run's (timed), a cost document's (counted) or
    a cold-start document's (timed, over the samples)."""
    return {m.gate: m for m in of_source(source) if m.gate}


def tracked(source: Source) -> list[Metric]:
    """The figures a dashboard tracks of a run, a cost document or a cold-start document."""
    return [m for m in of_source(source) if m.slug]


def axis_title(name: str) -> str:
    """The axis title of a RowStats field: p99_ms -> "latency P99 (ms)"."""
    return BY_FIELD[name].axis_title if name in BY_FIELD else name.replace("_", " ")


def drawn(name: str) -> bool:
    """Whether a RowStats field is a figure the plots can draw: a median, not a count summed over the repeats (nor a
    verdict)."""
    return name in BY_FIELD and not BY_FIELD[name].summed and name != SATURATED.field


# -- the columns of their own ----------------------------------------------------------------------


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


def _resumed(row: Row, ctx: Context) -> str:
    c = _counts(row)
    return "-" if not c or not c["tls_handshakes"] else f"{c['tls_resumed']}/{c['tls_handshakes']}"


def fell_back(row: Row) -> bool:
    """Asked for HTTP/2 or HTTP/3 and reported another protocol (or none) for its responses."""
    asked = asked_http(row)
    return asked is not None and row.aggregate is not None and (row.info or {}).get("protocol") != f"HTTP/{asked}"


def _protocol(row: Row, ctx: Context) -> str:
    """The protocol the responses came with (the driver's client.protocol); flagged when it is not the HTTP/2 or
    HTTP/3 asked for."""
    if row.aggregate is None:
        return "-"
    protocol = (row.info or {}).get("protocol")
    if fell_back(row):
        return f"{protocol} (fell back)" if protocol else f"not reported (asked HTTP/{asked_http(row)})"
    return str(protocol or "-")


def _median_count(counts: list[int]) -> str:
    if not counts:
        return "-"
    middle = median(counts)
    return f"{middle:.0f}" if middle.is_integer() else f"{middle:.1f}"


def _connections(row: Row, ctx: Context) -> str:
    """The connections each run opened (warm-up included; TCP's and, over HTTP/3, QUIC's), the median over the
    repeats: as our server counted them, or where it did not (--target), as counted on the client's side."""
    return _median_count([n for r in row.runs if r.stats and (n := r.connection_count) is not None])


def _origins(row: Row, ctx: Context) -> str:
    """The origins (authorities) our server saw the row's requests for, the median over the repeats."""
    return _median_count(_served(row, "origins"))


def _udp(row: Row, ctx: Context) -> str:
    n = udp_errors(row)
    return "-" if n is None else str(n)


def _saturated(row: Row, ctx: Context) -> str:
    agg = row.aggregate
    if agg is None or agg.median.saturated is None:
        return "-"
    return "yes" if agg.median.saturated else "no"


def _status(row: Row, ctx: Context) -> str:
    if not row.runs:
        return "not run"
    if row.unavailable or row.tolerated or row.unsupported:
        return row.reason or row.status
    if not row.failed:
        return "ok"
    return f"FAILED: {row.reason}" if row.reason else "FAILED"


def base_name(row: Row) -> str:
    return row.client.name.split("@", 1)[0]


def compiled(row: Row) -> frozenset[str] | None:
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
    here = compiled(row)
    if here is not None and (fallback := sorted(ctx.compiled.get(base_name(row), frozenset()) - here)):
        notes.append("pure-Python " + ", ".join(fallback))
    return row.client.library + (f" ({', '.join(notes)})" if notes else "")


LANGUAGE = Column("Language", lambda r, c: r.client.language, numeric=False)
LIBRARY = Column("Library", _library, numeric=False)
SPREAD = Column("Spread(ms)", _spread)
MODE = Column("async/sync", lambda r, c: r.client.mode, numeric=False)
GIL = Column("GIL", lambda r, c: r.client.gil or "-", numeric=False)
XFLOOR = Column("xfloor", _xfloor, show=has_floor)
TLS_RESUMED = Column("TLS resumed", _resumed, show=over_tls)
PROTOCOL = Column("Protocol", _protocol, numeric=False, show=scoped)
CONNS = Column("Conns", _connections, show=scoped)
ORIGINS = Column("Origins", _origins, show=many_origins)
UDP_ERRORS = Column("UDP errs", _udp, show=dropped)
SATURATED_COLUMN = Column("Saturated", _saturated, numeric=False)
STATUS = Column("Status", _status, numeric=False)

#: the closed loop's table: the reference write-up's columns first (Language ... Bench), then ours
COLUMNS: tuple[Column, ...] = (
    LANGUAGE, LIBRARY, MEAN.column(), P99.column(), P999.column(), MAX.column(), LMEAN.column(), BENCH.column(),
    SPREAD, MODE, GIL, ERRORS.column(), BENCH_OVER_LMEAN.column(), P50.column(terminal=False), THROUGHPUT.column(),
    MB_PER_S.column(), CPU.column(), *(m.column() for m in PHASES), RSS.column(), RSS_PER_WORKER.column(), GC.column(),
    GC_OBJECTS.column(), XFLOOR, TLS_RESUMED, PROTOCOL, CONNS, ORIGINS, UDP_ERRORS, STATUS,
)  # fmt: skip
#: the open loop's table: the corrected latency (from the intended start) as P50 ... Max, the service time (from
#: the actual start) as Svc ...
OPEN_COLUMNS: tuple[Column, ...] = (
    LANGUAGE, LIBRARY, OFFERED.column(), THROUGHPUT.column("Achieved(req/s)"), MB_PER_S.column(), LATE_PCT.column(),
    MISSED.column(), P50.column(), P90.column(), P99.column(), P999.column("P99.9(ms)"), P9999.column(), MAX.column(),
    SERVICE_P50.column(), SERVICE_P90.column(), SERVICE_P99.column(), SERVICE_P999.column(), SERVICE_P9999.column(),
    SERVICE_MAX.column(), MODE, GIL, ERRORS.column(), CPU.column(), *(m.column() for m in PHASES), RSS.column(),
    RSS_PER_WORKER.column(), GC.column(), GC_OBJECTS.column(), SATURATED_COLUMN, PROTOCOL, CONNS, UDP_ERRORS, STATUS,
)  # fmt: skip


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

    found: dict[str, frozenset[str]] = {}
    for r in rows:
        if (packages := compiled(r)) is not None:
            found[base_name(r)] = found.get(base_name(r), frozenset()) | packages
    loops = {loop for r in rows if r.client.floor and (loop := event_loop(r.client))}
    by_loop = {loop: mean for loop in sorted(loops) if (mean := floor(True, loop)) is not None}
    return Context(
        floor_mean_ms=floor(False), python_floor_mean_ms=floor(True), async_floor_mean_ms=by_loop, compiled=found
    )
