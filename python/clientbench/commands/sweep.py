"""`clientbench sweep DIMENSION`: the same clients at every point of one dimension.

Writes `points/<dimension>-<value>/` (raw/, table.md, table.csv, results.json) per point, `sweep.md` with
Bench and throughput per client and point, and `plots/sweep-<dimension>.png`. `sweep rate` runs open loops
at a ladder of rates instead (execution/ladder.py): its sweep.md has each client's highest sustained rate, the
corrected P99 and the achieved rate per rate, and a plot of latency vs offered load per client
(analysis/rates.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..analysis import rates as rate_report
from ..errors import SetupError
from ..execution.ladder import LADDER, climb, parse_rates, point_name
from ..execution.testbed import Endpoint, Testbed, link_latest
from ..model import Row, SweepPoint
from ..network import Network
from ..options import Options
from ..registry.spec import ClientSpec
from ..report import FILES, Column, Figure, Heading, Report, Table, Text, export
from ..report.table import run_table
from ..workload import Workload, number
from .output import exit_status, show

DEFAULTS = {
    "workers": "1,2,4,8,10,16,32",
    "payload": "13,1024,10240,102400,1048576",
    "delay": "0,1,5,20",
    "connection": "keep-alive,new",
    # toxiproxy delays in whole ms, so 0.5 ms cannot be emulated
    "rtt": "0,1,2,5,10",
    # plain HTTP, then HTTPS with the server restricted to one TLS version
    "tls": "http,1.2,1.3",
    # open loops: by default a client leaves the ladder after its first saturated rate (execution/ladder.py)
    "rate": ",".join(number(r) for r in LADDER),
}
AXIS = {
    "workers": "workers (W)",
    "payload": "response body size (bytes)",
    "delay": "server delay per request (ms)",
    "connection": "connection mode",
    "rtt": "round-trip time (ms, emulated by toxiproxy)",
    "tls": "scheme and TLS version",
    "rate": "offered rate (requests/s)",
}
#: a Python row is "as fast as native" at a point where its Bench is within this factor of the best native row's
NATIVE_WITHIN = 1.10


def points(dimension: str, values: str | None) -> list[Any]:
    items = [v.strip() for v in (values or DEFAULTS[dimension]).split(",") if v.strip()]
    if not items:
        raise SetupError("--values is empty")
    if dimension == "connection":
        bad = [v for v in items if v not in ("keep-alive", "new")]
        if bad:
            raise SetupError(f"connection values are keep-alive and new, got {', '.join(bad)}")
        return items
    if dimension == "tls":
        bad = [v for v in items if v not in ("http", "1.2", "1.3")]
        if bad:
            raise SetupError(f"tls values are http, 1.2 and 1.3, got {', '.join(bad)}")
        return items
    try:
        nums = [int(v) for v in items]
    except ValueError:
        raise SetupError(f"--values for {dimension} must be whole numbers, got {values!r}") from None
    low = 1 if dimension == "workers" else 0
    if any(n < low for n in nums):
        raise SetupError(f"--values for {dimension} must be >= {low}")
    return nums


def workload_at(base: Workload, dimension: str, value: Any) -> Workload:
    if dimension == "workers":
        return base.replace(workers=value)
    if dimension == "payload":
        return base.replace(path=f"/bytes/{value}")
    if dimension == "delay":
        return base.replace(path=f"/delay/{value}")
    if dimension == "connection":
        return base.replace(connection=value)
    return base  # rtt: the same workload, through another proxy (network_at)


def native_reach(dimension: str, results: Sequence[tuple[Any, Sequence[Row]]]) -> tuple[Table, list[str]]:
    """Per Python client, the first point where its Bench is within NATIVE_WITHIN of the fastest native row
    (C++ or Rust) at that point; the table of the ratios and the sentences, both from the figures."""

    def bench(row: Row) -> float | None:
        agg = row.aggregate
        return None if row.failed or agg is None else agg.median.bench_ms

    labels: list[str] = []
    for _, rows in results:
        labels += [r.client.label for r in rows if r.client.language == "Python" and r.client.label not in labels]
    columns = [Column("Client", False), *(Column(f"{v}") for v, _ in results), Column("within 10% from", False)]
    body, text = [], []
    for label in labels:
        cells, reached = [label], None
        for value, rows in results:
            natives = [b for r in rows if r.client.language in ("C++", "Rust") and (b := bench(r)) is not None]
            row = next((r for r in rows if r.client.label == label), None)
            mine = bench(row) if row is not None else None
            if mine is None or not natives:
                cells.append("-")
                continue
            ratio = mine / min(natives)
            cells.append(f"{ratio:.2f}")
            if reached is None and ratio <= NATIVE_WITHIN:
                reached = value
        cells.append("-" if reached is None else str(reached))
        body.append(cells)
        text.append(
            f"- {label}: "
            + (
                f"within {NATIVE_WITHIN - 1:.0%} of the fastest native client from {dimension}={reached} on."
                if reached is not None
                else f"never within {NATIVE_WITHIN - 1:.0%} of the fastest native client here."
            )
        )
    return Table(columns, body), text


def summary(dimension: str, results: Sequence[tuple[Any, Sequence[Row]]]) -> Report:
    """sweep.md: Bench and throughput per client (rows) and point (columns)."""
    labels: list[str] = []
    for _, rows in results:
        labels += [r.client.label for r in rows if r.client.label not in labels]
    columns = [Column("Client", False), *(Column(f"{dimension}={v}") for v, _ in results)]

    def table(metric: str, fmt: str) -> Table:
        body = []
        for label in labels:
            cells = [label]
            for _, rows in results:
                row = next((r for r in rows if r.client.label == label), None)
                agg = row.aggregate if row else None
                value = getattr(agg.median, metric) if agg is not None else None
                cells.append(
                    "failed" if row is not None and row.failed else "-" if value is None else format(value, fmt)
                )
            body.append(cells)
        return Table(columns, body)

    reach, sentences = native_reach(dimension, results)
    return Report(
        "sweep",
        [
            Heading(f"Sweep over {dimension}"),
            Heading("Bench (ms, median over repeats)", 2),
            table("bench_ms", ".2f"),
            Heading("Throughput (requests/s, median over repeats)", 2),
            table("throughput_rps", ".0f"),
            Heading("Client CPU per request (us, median over repeats)", 2),
            table("cpu_us_per_req", ".0f"),
            Heading(f"Bench / fastest native Bench, per {dimension} (generated from the figures above)", 2),
            reach,
            Text(sentences),
        ],
    )


def network_at(testbed: Testbed, dimension: str, value: Any) -> Network | None:
    if dimension != "rtt":
        return testbed.options.network
    base = testbed.options.network or Network()
    return dataclasses.replace(base, rtt_ms=int(value), name=None)


def endpoint_at(testbed: Testbed, dimension: str, value: Any) -> Endpoint:
    """Where the point's requests go: through a proxy of its own (rtt), to a server of its own (tls: plain, or
    HTTPS restricted to one version), else where every request of the testbed goes."""
    if dimension == "rtt":
        network = network_at(testbed, dimension, value)
        assert network is not None
        return testbed.via(network)
    if dimension == "tls":
        server = testbed.start_server(tls=value != "http", tls_version=None if value == "http" else value)
        return testbed.via(testbed.options.network, server) if testbed.options.network else server
    return testbed.endpoint


def write_point(
    testbed: Testbed, wl: Workload, dimension: str, value: Any, rows: Sequence[Row], endpoint: Endpoint | None
) -> None:
    results = testbed.results(
        wl,
        rows,
        network_at(testbed, dimension, value),
        endpoint,
        sweep=SweepPoint(dimension, value),
    )
    export(Report("table", [run_table(rows)], results=results), testbed.out / "points" / f"{dimension}-{value}", FILES)


def rate_sweep(
    rates: str | None, slo_ms: float, specs: Sequence[ClientSpec], base: Workload, options: Options, argv: Sequence[str]
) -> int:
    """`sweep rate`: the clients at a ladder of open-loop rates; sweep.md leads with each one's highest
    sustained rate."""
    ladder = parse_rates(rates, base) if rates is not None else list(LADDER)
    testbed = Testbed(options, argv, kind="sweep-rate")
    results: list[tuple[float, list[Row]]] = []

    def write(rate: float, wl: Workload, rows: Sequence[Row]) -> None:
        res = testbed.results(wl, rows, sweep=SweepPoint("rate", rate))
        export(Report("table", [run_table(rows)], results=res), testbed.out / "points" / point_name(rate), FILES)

    with testbed:
        climb(testbed, specs, base, ladder, testbed.out, results, every_rate=rates is not None, after=write)
    out = testbed.out
    for rate, rows in results:  # an interrupted rate still gets its tables
        if not (out / "points" / point_name(rate) / "results.json").exists():
            write(rate, base.replace(rate=rate), rows)
    export(rate_report.summary(results, slo_ms, base, every_rate=rates is not None), out, ("markdown", "plots", "html"))
    link_latest(out)
    for rate, rows in results:
        show(rows, f"{number(rate)} requests/s offered")
    for s in rate_report.summary_lines(results, slo_ms):
        testbed.console.print(s, markup=False)
    testbed.console.print(f"results: {out}")
    return exit_status(testbed, [r for _, rows in results for r in rows])


def sweep(
    dimension: str,
    values: str | None,
    specs: Sequence[ClientSpec],
    base: Workload,
    options: Options,
    argv: Sequence[str],
    slo_ms: float = 10.0,
) -> int:
    if dimension == "rate":
        return rate_sweep(values, slo_ms, specs, base, options, argv)
    points_ = points(dimension, values)
    testbed = Testbed(options, argv, kind=f"sweep-{dimension}")
    if dimension == "tls" and options.target:
        raise SetupError("sweep tls starts servers of its own (plain, and HTTPS per TLS version): drop --target")
    results: list[tuple[Any, list[Row]]] = []
    endpoints: dict[Any, Endpoint] = {}
    with testbed:
        for value in points_:
            wl = workload_at(base, dimension, value)
            testbed.console.print(
                f"[bold]{dimension} = {value}[/]: {wl.workers} workers x {wl.requests} "
                f"requests, {wl.request()}, {wl.connection}"
            )
            point_dir = testbed.out / "points" / f"{dimension}-{value}"
            point_dir.mkdir(parents=True)
            rows: list[Row] = []
            results.append((value, rows))
            endpoint = endpoint_at(testbed, dimension, value)
            endpoints[value] = endpoint
            testbed.run_rows(specs, wl, point_dir, rows, endpoint)
            write_point(testbed, wl, dimension, value, rows, endpoint)
    out = testbed.out
    for value, rows in results:  # an interrupted point still gets its tables
        if not (out / "points" / f"{dimension}-{value}" / "results.json").exists():
            write_point(testbed, workload_at(base, dimension, value), dimension, value, rows, endpoints.get(value))
    numeric = dimension != "connection"
    report = summary(dimension, results)
    report.figures.append(
        Figure(
            "sweep",
            f"sweep-{dimension}.png",
            f"Bench and throughput vs {AXIS[dimension]} (median of {base.repeat} run(s))",
            points=results,
            axis=AXIS[dimension],
            log_x=numeric and dimension in ("workers", "payload"),
        )
    )
    export(report, out, ("markdown", "plots", "html"))
    link_latest(out)
    for value, rows in results:
        show(rows, f"{dimension} = {value}")
    testbed.console.print(f"results: {out}")
    return exit_status(testbed, [r for _, rows in results for r in rows])
