"""The HTML report (report/export/html, `clientbench report`): what the page holds for every kind of results folder
(the run table as table.md has it, each figure's min-max over the repeats, the charts, the generated reading,
the environment), one self-contained file, the compare view flagging exactly what `clientbench compare`
flags, every command writing report.html, and bad input as one line or a page that says what is missing.
The page in a real browser: test_html_browser.py."""

from __future__ import annotations

import copy
import json
import re
import shutil

import clientbench.cli as cli
import pytest
from clientbench.commands.report import folder_report
from clientbench.commands.run import RunOptions, run
from clientbench.commands.sweep import sweep
from clientbench.dimensions import DIMENSIONS, Dimension
from clientbench.model import Results
from clientbench.options import Options
from clientbench.options.workload import sweep_points
from clientbench.registry.shipped import CLIENTS
from clientbench.report import Report
from clientbench.report.export import FILES, export
from clientbench.report.export.html import page as html_page
from clientbench.report.export.html import render
from clientbench.report.export.html.page import markdown, table_view
from clientbench.report.parts import run_part
from clientbench.report.table import run_table
from clientbench.workload import Workload
from support import REPO, fake_driver
from support.rows import make_row, open_row, raw, results, row

REFERENCE = REPO / "results" / "reference"
MB = 1024 * 1024


def _points(name: str, values: str, base: Workload) -> tuple[Dimension, list[object]]:
    dim = DIMENSIONS[name]
    return dim, sweep_points(dim, values, None, base)


def _page(path, compare=None):
    report = folder_report(path, compare)
    return html_page(report, report.title)


def _html(pieces):
    """A document's pieces on the page: their HTML, and a marker per chart."""
    return "".join(str(p.html) if p.html is not None else f"[chart {p.chart}]" for p in pieces)


def _cli(capsys, *argv):
    code = cli.main(["report", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _write_run(folder, rows, *, raw_files=True):
    """A run folder as `run` writes it: results.json, table.md/csv, raw/ with every repeat's document."""
    folder.mkdir(parents=True, exist_ok=True)
    if raw_files:
        (folder / "raw").mkdir(exist_ok=True)
        for r in rows:
            for i, dr in enumerate(r.runs):
                if dr.raw is not None:
                    dr.raw_file = f"raw/{r.client.name}.{i}.json"
                    (folder / dr.raw_file).write_text(json.dumps(dr.raw))
    export(Report("table", [run_table(rows)], results=results(rows)), folder, FILES)
    return folder


# -- what the page holds -------------------------------------------------------------------------------


def test_the_run_table_is_table_md_with_the_spread_of_every_figure():
    page = _page(REFERENCE / "run")
    (part,) = page.parts
    (phase,) = part.phases
    md = (REFERENCE / "run" / "table.md").read_text().splitlines()
    header = [c.strip() for c in md[0].strip("|").split("|")]
    body = [[c.strip() for c in line.strip().strip("|").split("|")] for line in md[2:]]
    assert [label for label, _ in phase.table.columns] == header
    assert [[c.text for c in cells] for cells in phase.table.rows] == body  # results/1 converted as published
    doc = json.loads((REFERENCE / "run" / "results.json").read_text())
    mean = header.index("Mean(ms)")
    for cells, r in zip(phase.table.rows, doc["rows"], strict=True):
        values = [run["stats"]["mean_ms"] for run in r["runs"]]
        assert cells[mean].spread == f"{min(values):.2f}-{max(values):.2f}"
    # every column that shows a median has its spread (the reference run has 10 repeats of every row)
    medians = {"Mean(ms)", "P99(ms)", "P999(ms)", "Max(ms)", "LMean(ms)", "Bench(ms)", "Bench/LMean", "req/s"}
    for label in medians:
        assert all(cells[header.index(label)].spread for cells in phase.table.rows), label
    assert part.missing and "raw/ was not kept" in part.missing[0]  # the reference folders keep no raw/


def test_every_column_that_shows_a_median_gets_its_spread_in_both_loops():
    """The page's cells are the run table's, each with the min-max its block gives (report/table.py): a column of a
    median has one where the repeats differ, a count summed over the repeats (Errors, Missed) or a column of its own
    (Spread, Status) has none."""
    closed = [row("py-a", benches=(10.0, 12.0, 11.0)), row("py-b", gil="released", benches=(20.0, 25.0))]
    opened = [open_row("a", 1000, 100, repeats=2), open_row("b", 4000, 100, repeats=2)]
    for rows in (closed, opened):
        table = run_table(rows)
        view = table_view(table)
        assert [[c.spread for c in cells] for cells in view.rows] == table.spreads
        own = [j for j, c in enumerate(table.columns) if c.label in ("Errors", "Missed", "Spread(ms)", "Status")]
        assert len(own) == 3 and all(table.spreads[i][j] == "" for j in own for i in range(2))
    table = run_table(closed)
    bench = [c.label for c in table.columns].index("Bench(ms)")
    assert [cells[bench].spread for cells in table_view(table).rows] == ["10.00-12.00", "20.00-25.00"]


def test_a_page_of_many_rows_opens_with_its_reading_then_the_ranked_charts_then_the_table():
    """results/reference/run-all (23 rows): the reading computed from the figures (per mode its fastest row, the
    GIL reading), the rows ranked on a log axis and coloured by mode, the latency of the rows a default run has
    (the others a click away), then the table."""
    page = _page(REFERENCE / "run-all")
    (part,) = page.parts
    reading = _html(part.reading)
    assert "<h3>Reading (generated from the figures below)</h3>" in reading
    assert (
        "<strong>Python, sync threads</strong>, 11 rows: the fastest is Python beast (sync, GIL released), Bench "
        "18.12 ms (1.06x C++ beast (sync), the fastest native row)" in reading
    )  # the table's Bench(ms) of both rows: 18.12 and 17.08
    assert "<strong>Python, async on uvloop</strong>, 1 row: Python aiohttp+uvloop (async), Bench 68.19 ms" in reading
    assert "Holding the GIL serialized the workers" in reading
    for file in ("bench", "cpu"):
        chart = page.charts[f"part0-0-{file}"]
        bars = {y: x for t in chart["data"] if t["type"] == "bar" for x, y in zip(t["x"], t["y"], strict=True)}
        ranked = chart["layout"]["yaxis"]["categoryarray"]
        assert len(ranked) == 23 and ranked[-1] == "C++ beast (sync, W=1)"  # another workload: last
        assert [bars[c] for c in ranked[:-1]] == sorted(bars[c] for c in ranked[:-1])  # the least on top
        assert chart["layout"]["xaxis"]["type"] == "log" and chart["layout"]["barmode"] == "overlay"
        assert chart["layout"]["legend"]["orientation"] == "h"  # the modes above the bars: they keep the width
    groups = [t["name"] for t in page.charts["part0-0-bench"]["data"] if t["type"] == "bar"]
    assert groups == [
        "native (C++, Rust)",
        "floor",
        "Python threads",
        "Python threads, GIL held",
        "Python threads, GIL released",
        "Python asyncio",
        "Python uvloop",
        "W=1",
    ]
    cdf = page.charts["part0-0-cdf"]
    default = {c.client.label for c in CLIENTS if c.default}
    drawn = {t["name"].removesuffix(" (percentiles)"): t.get("visible", True) for t in cdf["data"]}
    assert len(drawn) == 23 and {n for n, v in drawn.items() if v is True} == default & drawn.keys()
    assert all(v == "legendonly" for n, v in drawn.items() if n not in default)
    assert "the rows `clientbench run` runs by default; 14 more in the legend" in cdf["layout"]["title"]["text"]
    text = render(page)
    order = ('class="reading"', 'id="part0-0-bench"', 'id="part0-0-cdf"', '<table class="sortable">')
    at = [text.index(s) for s in order]
    assert at == sorted(at)


def test_a_run_with_raw_documents_draws_latency_from_the_samples_and_the_gil_timeline(tmp_path):
    rows = [row("py-held", gil="held", serial=True), row("py-released", gil="released"), row("native", gil=None)]
    for r in rows:  # what each driver reports of itself (the synthetic documents all say "GIL held")
        r.info = {**(r.info or {}), "gil": r.client.gil}
    folder = _write_run(tmp_path / "run", rows)
    page = _page(folder)
    (part,) = page.parts
    assert part.missing == []
    cdf = page.charts[f"{part.id}-0-cdf"]
    assert [t["name"] for t in cdf["data"]] == [
        "Python x (sync, GIL held)",
        "Python x (sync, GIL released)",
        "Python x (sync)",
    ]
    pooled = sorted(v for r in rows[0].runs for v in _ok_ms(r.raw))
    assert cdf["data"][0]["x"][-1] == pytest.approx(pooled[-1])  # the curve ends at the slowest request
    assert cdf["data"][0]["x"][0] == pytest.approx(pooled[0])
    # the timeline: one chart per GIL row, every request of the last repeat (2 workers x 50)
    assert [t.chart for t in part.timelines] == [f"{part.id}-tl-0", f"{part.id}-tl-1"]
    lanes = page.charts[f"{part.id}-tl-0"]["data"]
    assert [(t["y0"], len(t["x"])) for t in lanes] == [(0, 50), (1, 50)]
    doc = rows[0].runs[-1].raw["workers"][1]
    assert lanes[1]["x"][-1] == pytest.approx((doc["start_ns"][-1] + doc["latencies_ns"][-1]) / 1e6, abs=1e-3)
    # Bench, best first, a series per mode: the threads, with the GIL held, released; LMean a mark on each row
    bench = page.charts[f"{part.id}-0-bench"]["data"]
    assert [(t["type"], t["name"], t["y"]) for t in bench] == [
        ("bar", "Python threads", ["Python x (sync)"]),
        ("bar", "Python threads, GIL held", ["Python x (sync, GIL held)"]),
        ("bar", "Python threads, GIL released", ["Python x (sync, GIL released)"]),
        ("scatter", "LMean", [r.client.label for r in rows]),
    ]
    for t in bench[:3]:
        assert t["x"] == [pytest.approx(11.0)]  # medians of 10, 12, 11 ms
        assert t["error_x"]["arrayminus"] == t["error_x"]["array"] == [pytest.approx(1.0)]


def _fetched(text):
    """What the page's elements would load from elsewhere (script src, stylesheets, images not inlined, frames)."""
    from html.parser import HTMLParser

    found = []

    class Resources(HTMLParser):
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag in ("script", "img", "iframe", "embed", "video", "audio", "source") and a.get("src"):
                if not a["src"].startswith("data:"):
                    found.append(a["src"])
            if tag == "link":
                found.append(a.get("href"))

    Resources().feed(text)
    return found + re.findall(r"@import|url\((?!data:)", text.split("<script>", 1)[0])


def _ok_ms(doc):
    return [lat / 1e6 for w in doc["workers"] for lat in w["latencies_ns"]]


def test_the_gil_report_shows_its_phases_reading_and_timelines():
    page = _page(REFERENCE / "gil")
    part, ladder = page.parts
    assert (part.kind, ladder.kind, ladder.title) == ("gil", "sweep", "gil/open-loop")
    assert [(p.title, len(p.table.rows)) for p in part.phases] == [
        ("10 workers", 18),  # cpp-beast, rust-reqwest-sync, both bindings held and released under 3 interpreters,
        ("10 workers at rtt 1 ms", 14),  # and the 4 async rows in the W-worker phase only
        ("10 workers at rtt 1 ms over HTTP/3", 3),
        ("serial baseline (1 worker x 1000 requests)", 14),
        ("10 workers, one shared client, HTTP/1.1", 4),
        ("10 workers, one shared client, HTTP/2", 2),
    ]
    reading = _html(part.reading)
    assert "<h3>Reading (generated from the figures below)</h3>" in reading
    assert "a Python thread beside the calls" in reading  # gil.json's progress
    # no raw samples in the reference folder: the timelines are the plots the command drew, inlined
    assert [t.image[:22] for t in part.timelines] == ["data:image/png;base64,"] * 2
    assert not any("gil.json" in line for line in part.missing)


def test_the_gil_reading_is_computed_anew_from_the_folders_figures():
    """The reading of results/reference/gil, computed from its results.json files and gil.json, is the one gil.md
    published, sentence for sentence: the page parses no Markdown."""
    from clientbench.folder import load
    from clientbench.report.export.markdown import render as render_markdown

    part, _ = load(REFERENCE / "gil")
    computed = render_markdown(Report("r", part.reading)).splitlines()
    gil_md = (REFERENCE / "gil" / "gil.md").read_text()
    published = [
        line
        for section in re.split(r"(?m)^(?=## )", gil_md)
        if "generated from the figures" in section.split("\n")[0]
        for line in section.splitlines()
        if line.startswith(("- ", "## "))
    ]
    assert sum(line.startswith("- **What releasing still buys") for line in published) == 1  # gil.json's pauses
    assert sum("a Python thread beside the calls" in line for line in published) == 2  # and its progress
    assert [line for line in computed if line.startswith(("- ", "## "))] == published
    assert markdown("- **beast**")  # the page renders those lines as HTML


def test_a_sweep_has_a_curve_of_any_figure_per_client_and_every_point():
    page = _page(REFERENCE / "sweep-rtt")
    (part,) = page.parts
    assert part.kind == "sweep" and [p.title for p in part.points] == [f"rtt = {v}" for v in (0, 1, 2, 5, 10)]
    left, right = (page.charts[c] for c in part.sweep_charts)
    assert left["selected"] == "bench_ms" and right["selected"] == "throughput_rps"
    assert {"bench_ms", "p99_ms", "cpu_us_per_req", "throughput_rps"} <= set(left["variants"])
    curve = left["variants"]["bench_ms"]
    assert len(curve["data"]) == 9 and curve["data"][0]["x"] == [0, 1, 2, 5, 10]
    doc = json.loads((REFERENCE / "sweep-rtt" / "points" / "rtt-5" / "results.json").read_text())
    assert curve["data"][0]["y"][3] == pytest.approx(doc["rows"][0]["aggregate"]["median"]["bench_ms"])
    assert "Bench / fastest native Bench" in _html(part.summary)  # sweep.md, with its generated reading


@pytest.mark.slow
def test_a_rate_sweep_reads_latency_against_the_offered_rate_and_says_what_each_client_sustains(tmp_path):
    specs = [fake_driver.spec("fast", "--synthetic", "--service-us", "100")]
    base = Workload(workers=2, warmup=0, timeout_s=5, duration_s=0.3, repeat=1)
    assert (
        sweep(
            *_points("rate", "8000,1000,32000", base), specs, base, Options(out=tmp_path, row_timeout_s=30), ["sweep"]
        )
        == 0
    )
    out = tmp_path / "latest"
    page = _page(out)
    (part,) = page.parts
    assert [p.title for p in part.points] == ["rate = 1000", "rate = 8000", "rate = 32000"]
    left = page.charts[part.sweep_charts[0]]
    assert left["selected"] == "p99_ms" and {"offered_rps", "late_pct", "service_p99_ms"} <= set(left["variants"])
    assert left["layout"]["xaxis"]["type"] == "log"
    summary = _html(part.summary)
    assert "sustains <strong>8,000 requests/s</strong>" in summary
    # sweep.md's plot of each client (latency vs offered load) is drawn as a chart of the same figure
    drawn = [p.chart for p in part.summary if p.chart]
    assert drawn and all(page.charts[c]["data"] for c in drawn)
    assert (out / "report.html").read_text().count('class="chart"') == 2 + len(drawn)


@pytest.mark.slow
def test_the_gil_reports_open_loop_ladder_is_a_rate_sweep_of_its_own(tmp_path):
    gil = tmp_path / "gil"
    shutil.copytree(REFERENCE / "gil", gil)
    specs = [fake_driver.spec("fast", "--synthetic", "--service-us", "100")]
    base = Workload(workers=2, warmup=0, timeout_s=5, duration_s=0.3, repeat=1)
    assert (
        sweep(
            *_points("rate", "1000,4000", base), specs, base, Options(out=tmp_path / "s", row_timeout_s=30), ["sweep"]
        )
        == 0
    )
    shutil.rmtree(gil / "open-loop")  # the reference's own ladder, replaced by this one
    (tmp_path / "s" / "latest").resolve().rename(gil / "open-loop")
    page = _page(gil)
    assert [(p.title, p.kind) for p in page.parts] == [("gil", "gil"), ("gil/open-loop", "sweep")]
    assert [p.title for p in page.parts[1].points] == ["rate = 1000", "rate = 4000"]


@pytest.mark.slow
def test_a_folder_of_results_folders_is_one_section_each():
    page = _page(REFERENCE / "tls")
    assert [(p.title, p.kind) for p in page.parts] == [
        ("tls-ka", "sweep"),
        ("tls-new", "sweep"),
        ("tls-new-fix", "sweep"),
        ("tls-resume", "run"),
        ("tls-run", "run"),
        ("tls-run-all", "run"),
    ]
    assert [p.title for p in page.parts[0].points] == ["tls = http", "tls = 1.2", "tls = 1.3"]  # as they ran
    assert len({c for p in page.parts for c in p.sweep_charts}) == 6  # ids unique across the page


def test_the_environment_has_the_machine_versions_and_flags():
    (part,) = _page(REFERENCE / "freethreaded").parts
    env = {section: dict(items) for section, items in part.environment}
    assert env["machine"]["kernel"] == "6.18.44-fc-v657" and env["cpu"]["model"] == "AMD EPYC"
    assert env["python_packages"]["numpy"] == "2.4.6" and env["toolchains"]["rustc"].startswith("rustc 1.95")
    assert env["build"]["cpp.CMAKE_CXX_FLAGS_RELEASE"] == "-O3 -DNDEBUG"
    assert env["run"]["command"].startswith("clientbench run --interpreters system,3.13,3.13t")
    assert env["workload"]["workers"] == "10"
    interpreters = {cells[0].text: cells[3].text for cells in part.versions.rows}
    assert interpreters["Python requests (sync, Python 3.13t)"] == "cpython 3.13.15, free-threaded, GIL off"
    assert interpreters["Python requests (sync)"] == "cpython 3.11.7"


@pytest.mark.slow
def test_one_self_contained_file_under_10_mb_for_25_rows(tmp_path):
    rows = [
        row(f"py-{i}", gil="held" if i < 2 else None, benches=tuple(10.0 + k for k in range(10))) for i in range(25)
    ]
    for r in rows:  # 10 workers x 1,000 requests a repeat, as a long run has
        for k, dr in enumerate(r.runs):
            dr.raw = raw(workers=10, n=1000, seed=k, wall_ms=10.0 + k)
    folder = _write_run(tmp_path / "big", rows)
    assert cli.main(["report", str(folder)]) == 0
    html = folder / "report.html"
    text = html.read_text()
    assert html.stat().st_size < 10 * MB
    assert len(re.findall(r"<tr[ >]", text)) > 25
    # nothing is fetched: no script or stylesheet by URL, no external address at all
    assert "plotly.js v" in text  # the charting library, inlined
    assert _fetched(text) == []  # nothing is fetched: every script, style and image is in the file


# -- compare ------------------------------------------------------------------------------------------


def _changed(tmp_path):
    """B: the reference run with one row 3x slower, one 5x faster, one failed, one 2% slower (within the
    noise of 10 repeats) and one missing."""
    doc = json.loads((REFERENCE / "run" / "results.json").read_text())
    b = copy.deepcopy(doc)
    for factor, r in zip((3.0, 0.2, None, 1.02), b["rows"], strict=False):
        for dr in r["runs"]:
            if factor is None:
                dr["status"] = "failed"
            else:
                dr["stats"]["bench_ms"] *= factor
    del b["rows"][5]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "results.json").write_text(json.dumps(b))
    return tmp_path / "b"


def test_report_compare_flags_exactly_the_rows_compare_flags(tmp_path, capsys, monkeypatch):
    a, b = REFERENCE / "run", _changed(tmp_path)
    monkeypatch.setenv("COLUMNS", "250")
    assert cli.main(["compare", str(a), str(b)]) == 0
    table = capsys.readouterr().out
    by_cli = {
        cells[0]: cells[-1]
        for line in table.splitlines()
        if line.startswith("│") and (cells := [c.strip() for c in line.strip("│").split("│")])[0] != "Client"
    }
    flagged_cli = {name for name, verdict in by_cli.items() if "beyond noise" in verdict}
    assert flagged_cli == {"cpp-beast", "rust-reqwest"}  # the test changes what it says
    code, out, _ = _cli(capsys, a, "--compare", b, "-o", tmp_path / "c.html")
    assert code == 0 and out == f"report: {tmp_path / 'c.html'}\n"
    html = (tmp_path / "c.html").read_text()
    rows = re.findall(r'data-flagged="(yes|no)" data-name="([^"]+)" data-verdict="([^"]+)"', html)
    assert {name: verdict for _, name, verdict in rows} == by_cli  # every row, with the same verdict
    assert {name for flag, name, _ in rows if flag == "yes"} == flagged_cli
    assert "2 row(s) changed beyond the measured noise" in html


def test_compare_needs_a_run_on_both_sides(tmp_path, capsys):
    code, _, err = _cli(capsys, REFERENCE / "run", "--compare", REFERENCE / "sweep-rtt", "-o", tmp_path / "x.html")
    assert code == 2 and err.count("\n") == 1 and "no results at" in err and "sweep-rtt/results.json" in err


# -- every command writes report.html ------------------------------------------------------------------


@pytest.mark.slow
def test_run_and_sweep_write_report_html_into_their_folder(tmp_path):
    wl = Workload(workers=2, requests=3, warmup=0, timeout_s=5, repeat=2)
    assert (
        run(RunOptions((fake_driver.spec("ours"),), wl, Options(out=tmp_path / "r", row_timeout_s=30), ("run",))) == 0
    )
    html = (tmp_path / "r" / "latest" / "report.html").read_text()
    assert "Python fake (sync)" in html and 'id="part0-0-bench"' in html
    specs = [fake_driver.spec("ours")]
    assert (
        sweep(*_points("workers", "2,1", wl), specs, wl, Options(out=tmp_path / "s", row_timeout_s=30), ["sweep"]) == 0
    )
    page = _page(tmp_path / "s" / "latest")
    assert [p.title for p in page.parts[0].points] == ["workers = 2", "workers = 1"]  # the order they ran
    assert (tmp_path / "s" / "latest" / "report.html").stat().st_size > 1 * MB


def test_the_soak_page_is_its_table_and_environment():
    (part,) = _page(REFERENCE / "soak").parts
    assert part.kind == "soak" and "py-reqwest-async" in _html(part.summary)
    assert dict(part.environment)["cpu"]


# -- bad input -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "holds no clientbench results"),
        ("{not json", "cannot read"),
        ("[]", "has no clientbench schema; this clientbench reads clientbench.results/1"),
        (
            '{"schema": "clientbench.results/0"}',
            "is clientbench.results/0; this clientbench reads clientbench.results/1",
        ),
        ('{"schema": "clientbench.results/3", "rows": []}', "is not a valid clientbench results.json"),
    ],
)
def test_a_folder_without_readable_results_is_one_line(tmp_path, capsys, content, message):
    folder = tmp_path / "f"
    folder.mkdir()
    if content is not None:
        (folder / "results.json").write_text(content)
    code, out, err = _cli(capsys, folder)
    assert (code, out) == (2, "")
    assert err.startswith("clientbench: error: ") and err.count("\n") == 1 and message in err
    assert not (folder / "report.html").exists()


def test_a_missing_folder_or_an_output_that_cannot_be_written_is_one_line(tmp_path, capsys):
    for argv, message in (
        ([tmp_path / "nope"], "no such folder"),
        ([REFERENCE / "run", "--compare", tmp_path / "nope"], "no such folder"),
        ([REFERENCE / "run", "-o", tmp_path], "is a folder"),
        ([REFERENCE / "run", "-o", tmp_path / "no" / "r.html"], "no folder"),
    ):
        code, _, err = _cli(capsys, *argv)
        assert code == 2 and err.count("\n") == 1 and message in err, err


def test_the_exporter_renders_the_report_it_is_given_and_reads_nothing(tmp_path):
    """A command's page comes from the parts it measured: the exporter writes nothing without parts, and one with
    parts whose folder holds nothing (it reads no file) renders them."""
    assert export(Report("x"), tmp_path, ("html",)) == []
    rows = [row("py-a"), row("py-b", gil="released")]
    part = run_part(tmp_path / "gone", "a run in memory", results(rows))
    assert export(Report("x", parts=[part]), tmp_path, ("html",)) == [tmp_path / "report.html"]
    text = (tmp_path / "report.html").read_text()
    assert "a run in memory" in text and "Python x (sync, GIL released)" in text and not (tmp_path / "gone").exists()


def test_failed_rows_and_unreadable_raw_documents_are_said_on_the_page(tmp_path):
    rows = [row("py-a"), make_row("ok", "crash")]
    folder = _write_run(tmp_path / "run", rows)
    next((folder / "raw").iterdir()).write_text("{truncated")
    page = _page(folder)
    (part,) = page.parts
    (phase,) = part.phases
    assert phase.table.failed == [False, True]
    assert phase.failed == ["Python x (sync, GIL held): failed (driver exited with status 3: boom 1)"]
    assert part.missing == ["1 raw document(s) under raw/ could not be read"]
    assert [t["name"] for t in page.charts[f"{part.id}-0-cdf"]["data"]] == ["py-a"]  # the failed row is not drawn
    text = render(page)
    assert "FAILED: driver exited with status 3: boom 1" in text and 'class="failed"' in text


def test_an_interrupted_run_with_no_row_says_so(tmp_path):
    res = results([])
    res.interrupted = "SIGINT"
    (tmp_path / "results.json").write_text(json.dumps(res.to_json()))
    (part,) = _page(tmp_path).parts
    assert part.lines[1] == "interrupted: SIGINT; the rows that ran are shown"
    assert part.phases[0].failed == ["no row ran (the command was interrupted before the first one)"]
    assert Results.load(tmp_path).rows == []
