"""The HTML report in a real browser: Debian's headless Chromium (driven by Playwright) with the network cut
off opens the pages of reference results folders (a run, a GIL report, a sweep; no benchmark runs) and of a
run with raw samples, and nothing errs, every table row and chart is there, a click on a header sorts, the
legend toggles rows, a sweep's figure can be switched. Screenshots stay in the tests' tmp folders."""

from __future__ import annotations

import json

import pytest
from clientbench.commands.report import report
from clientbench.report import Report
from clientbench.report.export import FILES, export
from clientbench.report.parts import run_part
from clientbench.report.table import run_table
from support import REPO
from support.browser import chromium, skip_reason, visit
from support.rows import results, row

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

REFERENCE = REPO / "results" / "reference"

CHARTS = """() => [...document.querySelectorAll('div.chart')].map(d => ({
    id: d.id,
    drawn: d.dataset.drawn,
    svg: d.querySelectorAll('svg.main-svg').length,
    traces: d.querySelectorAll('g.trace').length,
    points: d.querySelectorAll('g.trace path, g.trace rect, g.point').length,
}))"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


def _open(browser, folder, out, compare=None):
    assert report(folder, compare, out) == 0
    v = visit(browser, out)
    assert v.console_errors == [] and v.outside == []
    return v


def _every_chart_drew(v):
    charts = v.page.evaluate(CHARTS)
    expected = len(json.loads(v.page.locator("#report-data").text_content())["charts"])
    assert len(charts) == expected > 0
    for c in charts:
        assert int(c["drawn"]) > 0 and c["svg"] >= 1 and c["traces"] >= 1 and c["points"] > 0, c
    assert v.page.evaluate("document.body.dataset.chartsDrawn") == str(expected)
    return charts


def _column(v, table, label):
    """The cells of one column of a table, top to bottom."""
    labels = [t.strip() for t in table.locator("thead th").all_inner_texts()]
    index = labels.index(label)
    return [r.locator("td").nth(index).get_attribute("data-sort") for r in table.locator("tbody tr").all()]


def test_the_run_page_shows_every_row_and_chart_and_sorts_by_a_click(browser, tmp_path):
    v = _open(browser, REFERENCE / "run", tmp_path / "report.html")
    doc = json.loads((REFERENCE / "run" / "results.json").read_text())
    table = v.page.locator("#part0 table.sortable").first
    assert table.locator("tbody tr").count() == len(doc["rows"]) == 10
    charts = _every_chart_drew(v)
    assert [c["id"] for c in charts] == ["part0-0-bench", "part0-0-cpu", "part0-0-cdf", "part0-0-phases"]
    before = _column(v, table, "Bench(ms)")
    table.locator("thead th", has_text="Bench(ms)").click()
    ascending = _column(v, table, "Bench(ms)")
    assert [float(x) for x in ascending] == sorted(float(x) for x in before) and ascending != before
    table.locator("thead th", has_text="Bench(ms)").click()
    assert [float(x) for x in _column(v, table, "Bench(ms)")] == sorted((float(x) for x in before), reverse=True)
    table.locator("thead th", has_text="Library").click()  # text columns sort alphabetically
    libraries = _column(v, table, "Library")
    assert libraries == sorted(libraries)
    v.page.screenshot(path=str(tmp_path / "run.png"), full_page=True)
    v.page.screenshot(path=str(tmp_path / "run-top.png"))
    assert (tmp_path / "run.png").stat().st_size > 50_000


def test_the_latency_legend_toggles_rows(browser, tmp_path):
    v = _open(browser, REFERENCE / "run", tmp_path / "report.html")
    visible = "() => document.getElementById('part0-0-cdf').data.map(t => t.visible === undefined ? true : t.visible)"
    assert v.page.evaluate(visible) == [True] * 10
    v.page.locator("button[data-hide='part0-0-cdf']").click()
    assert v.page.evaluate(visible) == ["legendonly"] * 10
    v.page.locator("#part0-0-cdf g.legend rect.legendtoggle").nth(2).click()
    # plotly waits out its double-click interval before it toggles
    v.page.wait_for_function(f"() => ({visible})()[2] === true", timeout=5000)
    assert v.page.evaluate(visible) == ["legendonly"] * 2 + [True] + ["legendonly"] * 7
    v.page.locator("button[data-show='part0-0-cdf']").click()
    assert v.page.evaluate(visible) == [True] * 10


def test_a_page_of_many_rows_reads_from_the_top_and_draws_the_other_rows_on_a_click(browser, tmp_path):
    v = _open(browser, REFERENCE / "run-all", tmp_path / "report.html")
    _every_chart_drew(v)
    # the reading, then the charts, then the table, down the page
    where = "s => document.querySelector(s).getBoundingClientRect().top"
    tops = [v.page.evaluate(f"() => ({where})('{s}')") for s in (".reading", "#part0-0-bench", "#part0 table.sortable")]
    assert tops == sorted(tops)
    assert "the fastest is Python beast (sync, GIL released), Bench 18.12 ms" in v.page.locator(".reading").inner_text()
    assert v.page.evaluate("() => document.getElementById('part0-0-bench')._fullLayout.xaxis.type") == "log"
    # the latency of the 9 rows a default run has; the 14 others a click away in the legend
    visible = "() => document.getElementById('part0-0-cdf').data.map(t => t.visible === undefined ? true : t.visible)"
    shown = v.page.evaluate(visible)
    assert shown.count(True) == 9 and shown.count("legendonly") == 14
    hidden = shown.index("legendonly")
    v.page.locator("#part0-0-cdf g.legend rect.legendtoggle").nth(hidden).click()
    v.page.wait_for_function(f"() => ({visible})()[{hidden}] === true", timeout=5000)
    assert v.page.evaluate(visible).count(True) == 10
    v.page.screenshot(path=str(tmp_path / "run-all-top.png"))
    v.page.screenshot(path=str(tmp_path / "run-all.png"), full_page=True)


def test_the_gil_page_has_its_phases_reading_and_timelines(browser, tmp_path):
    v = _open(browser, REFERENCE / "gil", tmp_path / "report.html")
    tables = v.page.locator("#part0 > .scroll > table.sortable")
    # the W-worker phase, at rtt 1 ms, over HTTP/3, the serial baseline, one shared client over HTTP/1.1 and HTTP/2
    assert [tables.nth(i).locator("tbody tr").count() for i in range(6)] == [18, 14, 3, 14, 4, 2]
    _every_chart_drew(v)
    reading = v.page.locator(".reading").inner_text()
    assert "Holding the GIL serialized the workers: the group took 2.7x as long" in reading
    assert "beast, a Python thread beside the calls" in reading
    images = v.page.evaluate("() => [...document.querySelectorAll('img.plot')].map(i => i.complete && i.naturalWidth)")
    assert len(images) == 2 and all(w > 500 for w in images)  # the timelines the command drew, inlined
    v.page.screenshot(path=str(tmp_path / "gil.png"), full_page=True)


def test_a_sweep_page_switches_the_figure_it_draws(browser, tmp_path):
    v = _open(browser, REFERENCE / "sweep-rtt", tmp_path / "report.html")
    charts = _every_chart_drew(v)
    first = charts[0]["id"]
    title = f"() => document.getElementById('{first}').layout.yaxis.title.text"
    assert v.page.evaluate(title) == "Bench: wall time of the group (ms)"
    v.page.locator(f"select[data-chart='{first}']").select_option("p99_ms")
    assert v.page.evaluate(title) == "latency P99 (ms)"
    assert v.page.locator(f"#{first} g.trace").count() == 9
    assert v.page.locator("details").count() == 5  # every point's table
    v.page.screenshot(path=str(tmp_path / "sweep.png"), full_page=True)


def test_a_run_with_raw_samples_draws_its_timelines(browser, tmp_path):
    rows = [row("py-held", gil="held", serial=True), row("py-released", gil="released")]
    folder = tmp_path / "run"
    (folder / "raw").mkdir(parents=True)
    for r in rows:
        for i, dr in enumerate(r.runs):
            dr.raw_file = f"raw/{r.client.name}.{i}.json"
            (folder / dr.raw_file).write_text(json.dumps(dr.raw))
    export(Report("table", [run_table(rows)], results=results(rows)), folder, FILES)
    v = _open(browser, folder, tmp_path / "report.html")
    ids = [c["id"] for c in _every_chart_drew(v)]
    assert ids == ["part0-0-bench", "part0-0-cpu", "part0-0-cdf", "part0-tl-0", "part0-tl-1"]
    assert v.page.locator("#part0-tl-0 g.trace path.point").count() == 100  # every request: 2 workers x 50


def test_the_compare_page_marks_the_rows_beyond_the_noise(browser, tmp_path):
    doc = json.loads((REFERENCE / "run" / "results.json").read_text())
    for dr in doc["rows"][0]["runs"]:
        dr["stats"]["bench_ms"] *= 3
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "results.json").write_text(json.dumps(doc))
    v = _open(browser, REFERENCE / "run", tmp_path / "compare.html", compare=tmp_path / "b")
    _every_chart_drew(v)
    rows = v.page.locator("#compare tbody tr")
    assert rows.count() == 10
    assert v.page.locator("#compare tr.slower").all_inner_texts()[0].startswith("C++ beast (sync)")
    assert v.page.locator("#compare tr.faster").count() == 0


def test_a_run_interrupted_before_its_first_row_says_so(browser, tmp_path):
    res = results([])
    res.interrupted = "interrupted (Ctrl-C)"
    export(Report("x", parts=[run_part(tmp_path, "interrupted", res)]), tmp_path, ("html",))
    v = visit(browser, tmp_path / "report.html")
    assert v.console_errors == [] and v.outside == []
    text = v.page.locator("section.part").inner_text()
    assert "interrupted: interrupted (Ctrl-C)" in text and "no row ran" in text
