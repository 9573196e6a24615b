"""Reports (report/): the exporter registry, what each format writes, and the run table, whose Markdown
and CSV reproduce the reference runs' published table.md and table.csv byte for byte; the open loop's table
and sweep rate's report."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from clientbench.analysis import modes, rates
from clientbench.metrics import PHASES
from clientbench.model import Client, Results, Row
from clientbench.registry.shipped import CLIENTS
from clientbench.report import Column, Figure, Heading, Image, Report, Table, Text
from clientbench.report import rates as rate_document
from clientbench.report.export import EXPORTERS, FILES, export
from clientbench.report.export.markdown import pipe_table, render
from clientbench.report.export.plots import standard_figures
from clientbench.report.parts import run_part
from clientbench.report.table import COLUMNS, run_table
from clientbench.schema import InvalidResults, validate_results
from clientbench.stats import ok_latencies_ms, row_stats
from clientbench.workload import Workload
from support import REPO
from support.rows import client, good_run, make_row, open_row, results, row

REFERENCE = REPO / "results" / "reference"
#: the columns the reference write-up's table has, in its order, then ours
REQUIRED = [
    "Language",
    "Library",
    "Mean(ms)",
    "P99(ms)",
    "P999(ms)",
    "Max(ms)",
    "LMean(ms)",
    "Bench(ms)",
    "async/sync",
    "Errors",
    "GIL",
]
PNG = b"\x89PNG\r\n\x1a\n"


def test_the_registry_has_one_exporter_per_format():
    assert set(EXPORTERS) == {"markdown", "csv", "json", "terminal", "plots", "html", "github-benchmark", "bencher"}
    assert set(FILES) == {"json", "markdown", "csv"} and set(FILES) < set(EXPORTERS)  # what every run folder gets
    with pytest.raises(KeyError):
        export(Report("x"), None, ("pdf",))


def test_every_format_writes_its_file(tmp_path, capsys):
    rows = [row(), row("py-y", gil="released", serial=True)]
    report = Report(
        "table",
        [Heading("A run"), Text(["one line", "two"]), run_table(rows)],
        results=results(rows),
        figures=standard_figures(rows, "test"),
        parts=[run_part(tmp_path, "test", results(rows))],
    )
    written = {name: export(report, tmp_path, (name,)) for name in EXPORTERS}
    assert written["markdown"] == [tmp_path / "table.md"]
    assert written["csv"] == [tmp_path / "table.csv"]
    assert written["json"] == [tmp_path / "results.json"]
    assert written["terminal"] == []  # stdout only
    assert written["html"] == [tmp_path / "report.html"]  # test_html_report.py tests what it holds
    assert sorted(p.name for p in written["plots"]) == ["bench.png", "latency.png", "timeline.png"]
    assert all(p.parent == tmp_path / "plots" for p in written["plots"])
    assert written["github-benchmark"] == [tmp_path / "github-benchmark.json"]  # test_gate.py checks its shape
    assert written["bencher"] == [tmp_path / "bencher.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bencher.json",
        "github-benchmark.json",
        "plots",
        "report.html",
        "results.json",
        "table.csv",
        "table.md",
    ]
    md = (tmp_path / "table.md").read_text()
    assert md.startswith("# A run\n\none line\ntwo\n\n| Language | Library |")
    assert (tmp_path / "table.csv").read_text().startswith("Language,Library,Mean(ms)")
    doc = json.loads((tmp_path / "results.json").read_text())
    validate_results(doc)
    assert doc == report.results.to_json()
    for p in written["plots"]:
        assert p.read_bytes()[:8] == PNG and p.stat().st_size > 10_000
    out = capsys.readouterr().out
    assert "Language" in out and "one line" in out and "py-y" not in out  # the table shows labels, not names


def test_without_a_folder_only_the_terminal_shows_anything(capsys):
    report = Report("table", [run_table([row()])], results=results([row()]), figures=standard_figures([row()], "t"))
    for name in EXPORTERS:
        assert export(report, None, (name,)) == []
    assert "Bench(ms)" in capsys.readouterr().out


def test_the_terminal_prints_cells_as_text_not_markup(capsys):
    """An install hint keeps its brackets (rich would take `[bindings,peers]` for a style and drop it)."""
    hint = 'unavailable: uvloop is not installed: pip install "clientbench[bindings,peers]"'
    table = Table([Column("Row", numeric=False), Column("Status", numeric=False)], [["[bold]x[/]", hint]], "t [a]")
    export(Report("table", [table]), None, ("terminal",))
    out = capsys.readouterr().out
    assert "[bold]x[/]" in out and "t [a]" in out
    assert "".join(out.split()).count('"clientbench[bindings,peers]"') == 1  # folded over lines, whole


def test_json_writes_the_report_document_when_there_are_no_results(tmp_path):
    doc = {"schema": "clientbench.sweep/1", "dimension": "workers", "points": [1, 2], "repeat": 3}
    assert export(Report("sweep", document=doc), tmp_path, ("json",)) == [tmp_path / "sweep.json"]
    assert json.loads((tmp_path / "sweep.json").read_text()) == doc
    assert export(Report("nothing"), tmp_path, ("json", "markdown", "csv", "plots")) == []


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"a": [1]}, "unknown schema None"),
        ({"schema": "clientbench.sweep/1", "dimension": "workers", "points": [1]}, "'repeat' is a required property"),
        (
            {"schema": "clientbench.soak-report/1", "results": []},
            "clientbench.soak-report/1 document does not match clientbench.soak-report/1 at (root)",
        ),
    ],
)
def test_a_document_that_does_not_match_its_schema_is_never_written(tmp_path, doc, message):
    """soak.json, cost.json, sweep.json and gil.json are validated when written, as results.json is."""
    with pytest.raises(InvalidResults, match=re.escape(message)):
        export(Report("doc", document=doc), tmp_path, ("json",))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "spoil, field, message",
    [
        (lambda res: res.server.pop("started_by_clientbench"), "server", "'started_by_clientbench' is a required"),
        (lambda res: setattr(res.rows[0], "client", client(fixed_workers=0)), "rows/0/client/fixed_workers",
         "0 is less than the minimum of 1"),
    ],
)  # fmt: skip
def test_a_results_json_that_does_not_match_its_schema_is_a_bug_report_not_a_file(tmp_path, spoil, field, message):
    res = results([row()])
    spoil(res)
    with pytest.raises(InvalidResults, match=f"at {field}: {message}.*a bug in clientbench"):
        export(Report("table", [run_table(res.rows)], results=res), tmp_path, FILES)
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary file


def test_csv_writes_one_file_per_table(tmp_path):
    t = Table([Column("a", False), Column("b")], [["x, y", "1"]])
    assert export(Report("two", [t, Text(["between"]), t]), tmp_path, ("csv",)) == [
        tmp_path / "two.csv",
        tmp_path / "two.2.csv",
    ]
    assert (tmp_path / "two.csv").read_text() == 'a,b\n"x, y",1\n'


def test_markdown_blocks():
    t = Table([Column("name", False), Column("n")], [["a|b", "1"]])
    assert pipe_table(t) == "| name | n |\n| :--- | ---: |\n| a\\|b | 1 |\n"
    text = render(Report("r", [Heading("T"), Heading("S", 2), Text(["- x", "- y"]), t, Image("plot", "plots/p.png")]))
    assert text == "# T\n\n## S\n\n- x\n- y\n\n" + pipe_table(t) + "\n![plot](plots/p.png)\n"


def test_unknown_figure_kind_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="unknown figure kind"):
        export(Report("x", figures=[Figure("pie", "pie.png", "t", [row()])]), tmp_path, ("plots",))


def test_the_timeline_is_drawn_only_for_gil_rows():
    assert [f.kind for f in standard_figures([row(gil=None)], "t")] == ["latency", "bench"]
    assert [f.kind for f in standard_figures([row(gil=None), row("py-h")], "t")] == ["latency", "bench", "timeline"]


# -- the run table -------------------------------------------------------------------------------


def test_markdown_and_csv_have_the_required_labels():
    rows = [row(), row("py-y", gil="released")]
    table = run_table(rows)
    md = pipe_table(table).splitlines()
    header = [c.strip() for c in md[0].strip("|").split("|")]
    for label in REQUIRED:
        assert label in header
    assert len(md) == 4
    assert header[:8] == REQUIRED[:8]  # the reference's order
    # no floor row: no xfloor column; no server counts of TLS handshakes: no TLS resumed column; neither HTTP/2
    # nor a shared client asked for: no Protocol and Conns columns
    # nor any UDP receive error: no UDP errs column
    # nor any collector's counts: no GC columns; 13-byte bodies: no MB/s column; one origin: no Origins column;
    # no phases recorded: none of their columns
    hidden = ("xfloor", "TLS resumed", "Protocol", "Conns", "UDP errs", "RSS/W(MiB)", "GC/1k req", "GC objs/1k", "MB/s",
              "Origins", *(m.label for m in PHASES))  # fmt: skip
    assert header == [c.label for c in COLUMNS if c.label not in hidden]
    terminal = [c.label for c in run_table(rows, terminal=True).columns]
    assert set(terminal) < set(header) and "P50(ms)" not in terminal and "RSS(MiB)" not in terminal


def test_xfloor_divides_async_python_rows_by_the_asyncio_floor_of_their_loop():
    """py-floor for the threaded Python rows, py-floor-async and py-floor-uvloop for the async rows on their loop; an
    async row on a loop without a floor of its own (rloop) by py-floor, as before there was an asyncio floor."""

    def python(name: str, library: str, mode: str, seed: int, floor: bool = False) -> Row:
        """One run of random latencies drawn with `seed`."""
        r = Row(Client(name=name, language="Python", library=library, mode=mode, floor=floor))
        r.add(good_run(r.client, seed=seed))
        return r

    rows = [
        python("py-floor", "raw socket", "sync", 0, floor=True),
        python("py-floor-async", "raw socket", "async", 1, floor=True),
        python("py-floor-uvloop", "raw socket+uvloop", "async", 2, floor=True),
        python("py-s", "x", "sync", 1),
        python("py-a", "x", "async", 2),
        python("py-u", "x+uvloop", "async", 0),
        python("py-r", "x+rloop", "async", 1),
    ]
    means = {r.client.name: r.aggregate.median.mean_ms for r in rows if r.aggregate}
    assert len({means["py-floor"], means["py-floor-async"], means["py-floor-uvloop"]}) == 3  # told apart
    table = run_table(rows)
    col = [c.label for c in table.columns].index("xfloor")
    got = {r.client.name: cells[col] for r, cells in zip(rows, table.rows, strict=True)}
    floors = {"py-floor": "py-floor", "py-floor-async": "py-floor-async", "py-floor-uvloop": "py-floor-uvloop",
              "py-s": "py-floor", "py-a": "py-floor-async", "py-u": "py-floor-uvloop", "py-r": "py-floor"}  # fmt: skip
    assert got == {name: f"{means[name] / means[floor]:.2f}" for name, floor in floors.items()}


def test_tls_resumed_column_over_https_only():
    rows = [row(), row("py-y", gil="released")]
    assert "TLS resumed" not in [c.label for c in run_table(rows).columns]
    for r in rows:
        for run in r.runs:
            run.server_counts = {"connections": 2, "tls_handshakes": 2, "tls_resumed": 1}
    table = run_table(rows)
    col = [c.label for c in table.columns].index("TLS resumed")
    assert [cells[col] for cells in table.rows] == [f"{len(r.runs)}/{2 * len(r.runs)}" for r in rows]


def test_library_names_packages_that_fell_back_to_pure_python():
    """aiohttp on 3.11 runs multidict compiled; on 3.13t multidict has no wheel and runs pure Python."""
    system, ft = row("py-aiohttp"), row("py-aiohttp@3.13t")
    ft.client = client("py-aiohttp@3.13t", interpreter="3.13t")
    system.info = {"python": {"free_threaded": False, "extensions": {"aiohttp": ["a"], "multidict": ["m"]}}}
    ft.info = {"python": {"free_threaded": True, "gil_enabled": False, "extensions": {"aiohttp": ["a"]}}}
    col = [c.label for c in run_table([system, ft]).columns].index("Library")
    assert [cells[col] for cells in run_table([system, ft]).rows] == [
        "x",
        "x (Python 3.13t, GIL off, pure-Python multidict)",
    ]
    assert run_table([ft]).rows[0][col] == "x (Python 3.13t, GIL off)"  # nothing to compare with: no claim


@pytest.mark.parametrize("run", ["run", "run-all"])
def test_the_run_table_is_what_it_was(tmp_path, run):
    """The reference runs (results/1 documents) give exactly the table.md and table.csv they were published
    with; run-all has the floor (xfloor column), the serial row (W=1) and the peers."""
    res = Results.load(REFERENCE / run)
    # results/1 did not record fixed_workers, floor and optional: the registry knows them
    registry = {c.name: c.client for c in CLIENTS}
    for r in res.rows:
        r.client = registry[r.client.name]
    export(Report("table", [run_table(res.rows)], results=res), tmp_path, FILES)
    assert (tmp_path / "table.md").read_text() == (REFERENCE / run / "table.md").read_text()
    assert (tmp_path / "table.csv").read_text() == (REFERENCE / run / "table.csv").read_text()
    validate_results(json.loads((tmp_path / "results.json").read_text()))


def test_status_column():
    rows = [
        make_row("ok"),
        make_row("ok", "crash", "ok", optional=True),
        make_row("unavailable", optional=True),
        make_row("ok", "crash"),
    ]
    rows.append(type(rows[0])(rows[0].client))  # not run
    status = [cells[-1] for cells in run_table(rows).rows]
    assert status == [
        "ok",
        "crashed 1/3: driver exited with status 3: boom 1",
        "unavailable: x is not installed: pip install",
        "FAILED: driver exited with status 3: boom 1",
        "not run",
    ]
    assert run_table(rows).styles == [None, None, None, "red", "red"]


# -- the open loop's table -------------------------------------------------------------------------

OPEN_HEADER = [
    "Language", "Library", "Offered(req/s)", "Achieved(req/s)", "Late(%)", "Missed", "P50(ms)", "P90(ms)", "P99(ms)",
    "P99.9(ms)", "P99.99(ms)", "Max(ms)", "Svc P50(ms)", "Svc P90(ms)", "Svc P99(ms)", "Svc P99.9(ms)",
    "Svc P99.99(ms)", "Svc Max(ms)", "async/sync", "GIL", "Errors", "CPU(us/req)", "RSS(MiB)", "Saturated", "Status",
]  # fmt: skip


def test_open_loop_rows_get_the_open_loop_table(tmp_path):
    """2 simulated workers at 0.5 ms per request keep up with 1,000/s (1 ms apart each) and not with 8,000/s."""
    keeps_up, saturated = open_row("py-a", 1000, 500), open_row("py-b", 8000, 500)
    table = run_table([keeps_up, saturated])
    assert [c.label for c in table.columns] == OPEN_HEADER
    cells = [dict(zip(OPEN_HEADER, row, strict=True)) for row in table.rows]
    assert [c["Offered(req/s)"] for c in cells] == ["1000", "8000"]
    assert cells[0]["Achieved(req/s)"] == "1001" and cells[0]["Saturated"] == "no" and cells[0]["Late(%)"] == "0.0"
    assert cells[0]["P99(ms)"] == cells[0]["Svc P99(ms)"] == "0.50"  # nothing queued: corrected = service time
    # 2 workers of 2,000/s each at 0.5 ms: the schedule runs away, the corrected latency with it
    assert cells[1]["Saturated"] == "yes" and int(cells[1]["Achieved(req/s)"]) < 0.99 * 8000
    assert float(cells[1]["P99(ms)"]) > 100 * float(cells[1]["Svc P99(ms)"]) and int(cells[1]["Missed"]) > 0
    assert cells[1]["Status"] == "ok"  # saturated is a finding, not a failure
    assert table.styles == [None, "yellow"]
    terminal = [c.label for c in run_table([keeps_up], terminal=True).columns]
    assert set(terminal) < set(OPEN_HEADER) and {"Saturated", "P99(ms)", "Svc P99(ms)"} <= set(terminal)
    res = results([keeps_up, saturated])
    export(Report("table", [table], results=res), tmp_path, FILES)
    doc = json.loads((tmp_path / "results.json").read_text())
    validate_results(doc)
    median = doc["rows"][1]["aggregate"]["median"]
    assert median["saturated"] is True and median["offered_rps"] == 8000 and median["missed"] > 0
    assert Results.from_json(doc).rows[1].aggregate == saturated.aggregate
    assert (tmp_path / "table.csv").read_text().splitlines()[0] == ",".join(OPEN_HEADER)


def test_open_loop_plots_work_from_histograms_too(tmp_path):
    from support.fake_driver import synthetic_doc

    r = open_row("py-a", 1000, 500)
    doc = synthetic_doc("--workers", "2", "--rate", "1000", "--duration", "0.5", "--record", "histogram")
    r.add(type(r.runs[0])(r.client, r.runs[0].status, raw=doc, stats=row_stats(doc)))
    written = export(Report("t", figures=standard_figures([r], "t")), tmp_path, ("plots",))
    assert sorted(p.name for p in written) == ["bench.png", "latency.png"]
    assert ok_latencies_ms(doc).size == 500 and ok_latencies_ms(r.runs[0].raw).size == 500  # 0.5 s at 1,000/s


# -- sweep rate's report ---------------------------------------------------------------------------


def _ladder(*rates_and_rows):
    return [(float(rate), rows) for rate, rows in rates_and_rows]


def test_rate_summary_leads_with_each_clients_highest_sustained_rate(tmp_path):
    """Client a (0.1 ms a request, 2 workers) keeps up to 20,000/s; b (0.5 ms) to 4,000/s and, in this ladder,
    leaves after its first saturated rate."""
    points = _ladder(
        (1000, [open_row("a", 1000, 100), open_row("b", 1000, 500)]),
        (2000, [open_row("a", 2000, 100), open_row("b", 2000, 500)]),
        (8000, [open_row("a", 8000, 100), open_row("b", 8000, 500)]),
        (32000, [open_row("a", 32000, 100)]),
    )
    wl = Workload(workers=2, duration_s=0.5, repeat=1)
    report = rate_document.summary(points, 10.0, wl, every_rate=False)
    text = render(report)
    assert text.startswith("# Sweep over the offered rate (open loop)\n")
    assert (
        "- **Python x (sync)** sustains **8,000 requests/s** (achieved 8,000, corrected P99 0.10 ms, within 10 ms)"
        in text
    )
    lines = [line for b in report.blocks if isinstance(b, Text) for line in b.lines]
    a_line, b_line = lines[1], lines[2]
    assert a_line.startswith("- **Python x (sync)** sustains **8,000 requests/s** (achieved 8,00")
    assert "; at 32,000 requests/s it achieved " in a_line and "(saturated)." in a_line
    assert b_line.startswith("- **Python x (sync)** sustains **2,000 requests/s**")
    assert "at 8,000 requests/s it achieved 3,99" in b_line
    p99, achieved = report.tables[1:3]
    assert [c.label for c in p99.columns] == ["Client", "1000/s", "2000/s", "8000/s", "32000/s"]
    assert p99.rows[1][-1] == "-"  # b did not run at 32,000/s
    assert achieved.rows[1][3].endswith("(saturated)") and not achieved.rows[0][3].endswith("(saturated)")
    sustained = report.tables[0]
    assert [r[1] for r in sustained.rows] == ["8,000", "2,000"]
    written = export(report, tmp_path, ("markdown", "plots"))
    assert sorted(p.name for p in written) == ["rate-a.png", "rate-b.png", "sweep.md"]
    assert "![Python x (sync)](plots/rate-a.png)" in (tmp_path / "sweep.md").read_text()


def test_a_client_that_sustains_nothing_or_everything_says_so():
    slow = _ladder((1000, [open_row("s", 1000, 5000)]), (2000, [open_row("s", 2000, 5000)]))
    (line,) = rates.summary_lines(slow, 10.0)
    assert line.startswith("- **Python x (sync)** sustains none of the rates tried (P99 within 10 ms): at the lowest, ")
    fast = _ladder((1000, [open_row("f", 1000, 10)]))
    (line,) = rates.summary_lines(fast, 10.0)
    assert line.endswith("the highest rate tried; it may sustain more.")
    tight = rates.sustained(_ladder((1000, [open_row("f", 1000, 500)])), "f", slo_ms=0.1)  # P99 0.5 ms > 0.1 ms
    assert tight.rate is None


def test_udp_receive_errors_get_a_column_and_a_flag_where_a_row_had_some():
    quiet, dropped = row("py-a"), row("py-b", gil="released")
    for r in quiet.runs:
        r.udp_errors = {"InErrors": 0, "RcvbufErrors": 0}
    for i, r in enumerate(dropped.runs):
        r.udp_errors = {"InErrors": i, "RcvbufErrors": i}
    table = run_table([quiet, dropped])
    col = [c.label for c in table.columns].index("UDP errs")
    expected = sum(2 * i for i in range(len(dropped.runs)))
    assert [cells[col] for cells in table.rows] == ["0", str(expected)] and expected > 0
    assert table.styles == [None, "yellow"]
    assert "UDP errs" not in [c.label for c in run_table([quiet]).columns]  # none: no column


def test_the_collector_columns_show_where_a_driver_counted_it():
    counted, native = row("py-a"), row("cpp-b", gil=None)
    for r in counted.runs:
        r.raw["gc"] = {"collections": 3, "collected": 120}
        r.stats = row_stats(r.raw)
    table = run_table([counted, native])
    labels = [c.label for c in table.columns]
    gc, objs = labels.index("GC/1k req"), labels.index("GC objs/1k")
    per_1k = 1000 * 3 / counted.runs[0].stats.requests
    assert table.rows[0][gc] == f"{per_1k:.2f}" and table.rows[0][objs] == f"{40 * per_1k:.0f}"
    assert table.rows[1][gc] == "-"  # a native driver has no collector


# -- a run's reading -------------------------------------------------------------------------------


def _relabelled(r, *, cpu_us=None, **labels):
    """The row as another client (language, library, mode, floor ...), its client CPU per request set."""
    r.client = dataclasses.replace(r.client, **labels)
    for run in r.runs:
        run.client = r.client
        if cpu_us is not None:
            run.stats = dataclasses.replace(run.stats, cpu_us_per_req=cpu_us)
    return r


def _modes_rows(released_ms):
    return [
        _relabelled(row("cpp-beast", None, (20.0,)), language="C++", library="beast", cpu_us=12.0),
        _relabelled(row("cpp-floor", None, (15.0,)), language="C++", library="raw socket", floor=True),
        _relabelled(row("py-beast-held", "held", (40.0,)), library="beast", cpu_us=9.0),
        _relabelled(row("py-beast-released", "released", (released_ms,)), library="beast", cpu_us=14.0),
        _relabelled(row("py-requests", None, (500.0,)), library="requests", cpu_us=300.0),
        _relabelled(row("py-aiohttp-uvloop", None, (60.0,)), library="aiohttp+uvloop", mode="async"),
        make_row("crash"),  # no figures: in no sentence
    ]


def test_a_runs_reading_names_each_modes_fastest_and_cheapest_row_from_the_figures():
    lines = modes.reading(_modes_rows(22.0), workers=2)
    assert lines[:4] == [
        "- **native (C++, Rust)**, 1 row: C++ beast (sync), Bench 20.00 ms.",
        "- **floor (raw socket)**: C++ raw socket (sync), Bench 15.00 ms (no client library: what the wire and the "
        "server cost).",
        "- **Python, sync threads**, 3 rows: the fastest is Python beast (sync, GIL released), Bench 22.00 ms (1.10x "
        "C++ beast (sync), the fastest native row); the slowest, Python requests (sync), 500.00 ms, is 22.73x that. "
        "Python beast (sync, GIL held) spends the least client CPU per request: 9.0 us.",
        "- **Python, async on uvloop**, 1 row: Python aiohttp+uvloop (async), Bench 60.00 ms (3.00x C++ beast (sync), "
        "the fastest native row).",
    ]
    # then, per Python mode with both, our bindings against the cheapest peer (neither the held row nor a floor)
    assert lines[4] == (
        "- **Our bindings against the best peer, Python, sync threads**: Python beast (sync, GIL released) 14.0 us "
        "of client CPU per request; the cheapest peer, Python requests (sync), 300.0 us (ours 0.05x of it). Python "
        "beast (sync, GIL released) is the cheapest Python row here (held rows and floors aside)."
    )
    # then the GIL reading of the binding whose held and released rows both ran (analysis/gil.py's)
    assert len(lines) == 6 and lines[5].startswith("- **beast, GIL held**: Bench 40.00 ms vs LMean")
    assert "Released, the binding's Bench is 1.10x that of the same client used natively" in lines[5]
    # other figures, other sentences: the released row now slower than the held one
    slower = modes.reading(_modes_rows(45.0), workers=2)
    assert slower[2].startswith(
        "- **Python, sync threads**, 3 rows: the fastest is Python beast (sync, GIL held), Bench 40.00 ms (2.00x"
    )
    assert "It spends the least client CPU per request: 9.0 us." in slower[2]
    assert modes.reading([make_row("crash")], workers=2) == []


def test_our_bindings_are_read_against_the_cheapest_peer_of_each_mode_and_a_cheaper_peer_is_named():
    rows = [
        _relabelled(row("py-reqwest-released", "released", (30.0,)), library="reqwest", cpu_us=40.0),
        _relabelled(row("py-beast-released", "released", (25.0,)), library="beast", cpu_us=20.0),
        _relabelled(row("py-pycurl", None, (28.0,)), library="pycurl", cpu_us=30.0, optional=True),
        _relabelled(row("py-floor", None, (10.0,)), library="raw socket", cpu_us=5.0, floor=True),
        _relabelled(row("py-reqwest-uvloop", None, (30.0,)), library="reqwest+uvloop", mode="async", cpu_us=35.0),
        _relabelled(row("py-ry-uvloop", None, (30.0,)), library="ry+uvloop", mode="async", cpu_us=33.0, optional=True),
        _relabelled(row("py-aiohttp", None, (90.0,)), library="aiohttp", mode="async", cpu_us=90.0),  # no binding
        _relabelled(row("py-beast-held@3.13", "held", (25.0,)), library="beast", cpu_us=1.0, interpreter="3.13"),
    ]
    threads, uvloop = modes.against_peers(rows)
    assert threads == (
        "- **Our bindings against the best peer, Python, sync threads**: Python reqwest (sync, GIL released) 40.0 us, "
        "Python beast (sync, GIL released) 20.0 us of client CPU per request; the cheapest peer, Python pycurl (sync), "
        "30.0 us (ours 1.33x and 0.67x of it). Python beast (sync, GIL released) is the cheapest Python row here "
        "(held rows and floors aside)."
    )
    assert uvloop.endswith(
        "the cheapest peer, Python ry+uvloop (async), 33.0 us (ours 1.06x of it). The cheapest Python row here (held "
        "rows and floors aside) is a peer's: Python ry+uvloop (async)."
    )
    assert modes.against_peers(rows[:2]) == []  # no peer: nothing to say


def test_each_row_has_a_mode_and_the_modes_are_read_per_interpreter():
    rows = _modes_rows(22.0)[:6]
    assert [modes.group(r.client) for r in rows] == [
        "native", "floor", "threads, GIL held", "threads, GIL released", "threads", "uvloop",
    ]  # fmt: skip
    serial = _relabelled(row("cpp-beast-serial", None, (3.0,)), language="C++", fixed_workers=1)
    free = _relabelled(row("py-requests@3.13t", None, (800.0,)), library="requests", interpreter="3.13t")
    read = modes.by_mode([*rows, serial, free])
    assert "- **one worker (W=1)**: C++ x (sync, W=1), Bench 3.00 ms (one worker instead of 2: not compared)." in (
        modes.reading([*rows, serial], workers=2)
    )
    assert [(m.title, m.rows) for m in read] == [
        ("native (C++, Rust)", 1),
        ("floor (raw socket)", 1),
        ("Python, sync threads", 3),
        ("Python, sync threads, Python 3.13t", 1),
        ("Python, async on uvloop", 1),
        ("one worker (W=1)", 1),
    ]
    # an open loop is read by its corrected P99 (it has no Bench)
    open_rows = [open_row("a", 1000, 100), open_row("b", 1000, 400)]
    assert modes.headline(open_rows) == "p99_ms"
    (threads,) = modes.by_mode(open_rows)
    assert threads.fastest.value == open_rows[0].aggregate.median.p99_ms
    assert modes.reading(open_rows, workers=2)[0].startswith("- **Python, sync threads**, 2 rows: the fastest is ")
    assert " P99 " in modes.reading(open_rows, workers=2)[0]
