"""The GIL report's asyncio reading (issue #34): the bindings' AsyncClient rows in the W-worker phase, their Bench
and CPU per request against the native row and the GIL-released sync row, and the AsyncClients against each
other, all from figures given (fabricated rows: no driver, no server)."""

from __future__ import annotations

import pytest
from clientbench.analysis.gil import ASYNC_ROWS, BINDINGS, GilFigures, async_reading, readings
from clientbench.commands.gil import phases
from clientbench.environment.interpreters import Interpreter
from clientbench.model import Client, DriverRun, Row, RunStatus
from clientbench.options import Options
from clientbench.report import Heading, Text
from clientbench.report.gil import document
from clientbench.stats import ProcessUsage, row_stats
from clientbench.workload import Workload
from support.rows import crashed_run, raw


def cpu_row(name: str, cpu_us: float, wall_ms: float = 10.0, language: str = "Python", library: str = "x") -> Row:
    """A row of one good run whose driver reports `cpu_us` of process CPU per request (raw(): 2 x 50 requests)."""
    doc = raw(wall_ms=wall_ms)
    doc["cpu_ns"] = int(cpu_us * 1000 * 100)
    c = Client(name=name, language=language, library=library, mode="sync" if "async" not in name else "async")
    r = Row(c)
    r.add(DriverRun(c, RunStatus.OK, raw=doc, stats=row_stats(doc, ProcessUsage(0.5, 20480)), returncode=0))
    return r


def beast_rows() -> list[Row]:
    return [
        cpu_row("cpp-beast", 40.0, language="C++", library="beast"),
        cpu_row("py-beast-released", 80.0),
        cpu_row("py-beast-async", 50.0, wall_ms=12.0),
        cpu_row("py-beast-uvloop", 44.0, wall_ms=11.0),
    ]


def reqwest_rows() -> list[Row]:
    return [
        cpu_row("rust-reqwest-sync", 50.0, language="Rust", library="reqwest"),
        cpu_row("py-reqwest-released", 90.0),
        cpu_row("py-reqwest-async", 62.5),
        cpu_row("py-reqwest-uvloop", 55.0),
    ]


def test_the_async_rows_are_the_bindings_own():
    assert [lib for lib, *_ in ASYNC_ROWS] == [lib for lib, *_ in BINDINGS]
    assert cpu_row("py-beast-async", 50.0).aggregate.median.cpu_us_per_req == 50.0


def test_the_asyncio_reading_carries_the_figures_given():
    lines = async_reading(beast_rows() + reqwest_rows(), workers=10)
    assert len(lines) == 3
    beast, reqwest, side_by_side = lines
    assert beast == (
        "- **beast, asyncio** (beast_client's AsyncClient, 10 tasks on one event loop): on asyncio Bench 12.00 ms, "
        "50.0 us CPU per request (1.25x C++ beast (sync)'s 40.0 us, 0.62x the GIL-released sync binding's 80.0 us); "
        "on uvloop Bench 11.00 ms, 44.0 us CPU per request (1.10x C++ beast (sync)'s 40.0 us, 0.55x the "
        "GIL-released sync binding's 80.0 us)."
    )
    assert "on asyncio Bench 10.00 ms, 62.5 us CPU per request (1.25x Rust reqwest (sync)'s 50.0 us, 0.69x" in reqwest
    assert side_by_side == (
        "- **The AsyncClients side by side** (asyncio, CPU per request): beast_client's AsyncClient 50.0 us, "
        "1.25x C++ beast (sync)'s; reqwest_client's AsyncClient 62.5 us, 1.25x Rust reqwest (sync)'s. "
        "beast_client's costs 0.80x reqwest_client's."
    )


def test_a_failed_unsupported_or_missing_async_row_is_named_and_no_figure_is_made_up():
    beast = [r for r in beast_rows() if r.client.name != "py-beast-uvloop"]
    uvloop = Row(Client(name="py-beast-uvloop", language="Python", library="beast+uvloop", mode="async"))
    uvloop.add(DriverRun(uvloop.client, RunStatus.UNSUPPORTED, reason="unsupported: --loop uvloop (no uvloop)"))
    failed = Row(Client(name="py-reqwest-async", language="Python", library="reqwest", mode="async"))
    failed.add(crashed_run(failed.client))
    reqwest = [r for r in reqwest_rows() if r.client.name not in ("py-reqwest-async", "py-reqwest-uvloop")]
    lines = async_reading([*beast, uvloop, *reqwest, failed], workers=4)
    assert len(lines) == 2  # no side-by-side sentence: reqwest's asyncio row has no figures
    assert "on asyncio Bench 12.00 ms, 50.0 us CPU per request" in lines[0]
    assert lines[0].endswith("; on uvloop `py-beast-uvloop` has no figures (unsupported: --loop uvloop (no uvloop)).")
    assert lines[1] == (
        "- **reqwest, asyncio** (reqwest_client's AsyncClient, 4 tasks on one event loop): on asyncio "
        "`py-reqwest-async` has no figures (driver exited with status 3: boom); on uvloop `py-reqwest-uvloop` "
        "did not run."
    )
    # the native and released rows missing: the async row's own figures, compared with nothing
    alone = async_reading([cpu_row("py-beast-async", 50.0)], workers=4)
    assert alone == [
        "- **beast, asyncio** (beast_client's AsyncClient, 4 tasks on one event loop): on asyncio Bench 10.00 ms, "
        "50.0 us CPU per request; on uvloop `py-beast-uvloop` did not run."
    ]
    # a folder from before the async rows (an older GIL report): nothing said about them
    assert async_reading(beast_rows()[:2] + reqwest_rows()[:2], workers=4) == []


def test_the_report_reads_the_async_rows_after_the_sync_ones():
    figures = GilFigures(
        workload=Workload(workers=10, requests=100),
        serial_requests=1000,
        serial=[],
        parallel=beast_rows() + reqwest_rows(),
        network="loopback",
        command="clientbench gil",
    )
    text, _, _ = readings(figures)
    assert [line.split("**")[1] for line in text] == [
        "beast",  # no held rows given: "no complete held/released pair"
        "reqwest",
        "beast, asyncio",
        "reqwest, asyncio",
        "The AsyncClients side by side",
    ]
    reading = next(b for b in document(figures).blocks if isinstance(b, Text) and text[0] in b.lines)
    assert reading.lines == text


def test_the_w_worker_phase_runs_the_async_rows_under_the_runners_python_only(tmp_path):
    free = Interpreter("3.13t", "/nonexistent/python3.13t")
    plan = {
        p.key: [s.client.name for s in p.specs]
        for p in phases(Workload(), Options(out=tmp_path), [None, free], 1, True)
    }
    async_names = ["py-beast-async", "py-reqwest-async", "py-reqwest-uvloop", "py-beast-uvloop"]
    assert [n for n in plan[""] if "async" in n or "uvloop" in n] == async_names
    assert "py-beast-released@3.13t" in plan[""]
    assert all("async" not in n and "uvloop" not in n for key, names in plan.items() if key for n in names)


def test_the_round_trip_phase_runs_the_reqwest_rows_again_over_http3(tmp_path):
    """Issue #31: at the round trip, the binding whose library speaks HTTP/3 (reqwest; Beast has HTTP/1.1 only),
    natively, held and released, under the runner's Python, over QUIC; an HTTPS server is started for it."""
    free = Interpreter("3.13t", "/nonexistent/python3.13t")
    plan = {p.key: p for p in phases(Workload(), Options(out=tmp_path), [None, free], 1, True)}
    h3 = plan["rtt-h3"]
    assert sorted(s.client.name for s in h3.specs) == ["py-reqwest-held", "py-reqwest-released", "rust-reqwest-sync"]
    assert h3.tls and h3.workload.http == "3" and h3.network is not None and h3.network.rtt_ms == 1
    assert list(plan).index("rtt-h3") == list(plan).index("rtt") + 1


@pytest.mark.parametrize(
    "rtt, options, workload",
    [
        (0, {}, Workload()),  # --rtt 0: no round-trip phase at all
        (1, {"target": "http://127.0.0.1:9/"}, Workload()),  # a plain target has no QUIC to ask
        (1, {"tls": True}, Workload(http="3")),  # the whole report is over HTTP/3 already
    ],
)
def test_no_http3_round_trip_phase_where_it_cannot_or_need_not_run(tmp_path, rtt, options, workload):
    keys = [p.key for p in phases(workload, Options(out=tmp_path, **options), [None], rtt, True)]
    assert "rtt-h3" not in keys


def test_a_new_connection_per_request_has_no_shared_client_phase(tmp_path):
    """A shared client is made once, so `gil --connection new` plans no shared-client phase (it once raised)."""
    new = phases(Workload(connection="new"), Options(out=tmp_path), [None], 1, True)
    assert not {"shared", "shared-h2"} & {p.key for p in new}
    assert {"shared", "shared-h2"} <= {p.key for p in phases(Workload(), Options(out=tmp_path), [None], 1, True)}


def test_the_http3_round_trip_reading_names_the_protocol_and_only_the_bindings_that_speak_it():
    def timed(name: str, bench_ms: float) -> Row:
        return cpu_row(name, 50.0, wall_ms=bench_ms, language="Rust" if name.startswith("rust") else "Python")

    at_rtt_h3 = [timed("rust-reqwest-sync", 30.0), timed("py-reqwest-held", 120.0), timed("py-reqwest-released", 33.0)]
    figures = GilFigures(
        workload=Workload(workers=4, requests=20),
        serial_requests=80,
        serial=[],
        parallel=[],
        network="loopback",
        command="clientbench gil",
        rtt_ms=1,
        rtt_network="rtt 1 ms (toxiproxy)",
        at_rtt=[],
        rtt_h3_network="rtt 1 ms (the UDP relay)",
        at_rtt_h3=at_rtt_h3,
    )
    _, at_rtt, _ = readings(figures)
    h3 = [line for line in at_rtt if "over HTTP/3" in line]
    assert len(h3) == 1 and "beast" not in h3[0]
    assert h3[0].startswith("- **reqwest** at rtt 1 ms over HTTP/3: GIL held Bench 120.0 ms, released 33.0 ms")
    assert "Released vs the native client: 1.10x (30.0 ms)" in h3[0]
    headings = [b.text for b in document(figures).blocks if isinstance(b, Heading)]
    assert "4 workers at rtt 1 ms over HTTP/3 (rtt 1 ms (the UDP relay))" in headings
