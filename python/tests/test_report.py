"""Reports (report/): the exporter registry, what each format writes, and the run table, whose Markdown
and CSV reproduce the reference runs' published table.md and table.csv byte for byte."""

from __future__ import annotations

import json

import pytest
from clientbench.model import Results
from clientbench.report import EXPORTERS, FILES, Column, Figure, Heading, Image, Report, Table, Text, export
from clientbench.report.markdown import pipe_table, render
from clientbench.report.plots import standard_figures
from clientbench.report.table import COLUMNS, run_table
from clientbench.run.clients import CLIENTS
from clientbench.schema import InvalidResults, validate_results
from support import REPO
from support.rows import client, make_row, results, row

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
    assert set(EXPORTERS) == {"markdown", "csv", "json", "terminal", "plots"}
    assert FILES == ("json", "markdown", "csv")
    with pytest.raises(KeyError):
        export(Report("x"), None, ("pdf",))


def test_every_format_writes_its_file(tmp_path, capsys):
    rows = [row(), row("py-y", gil="released", serial=True)]
    report = Report(
        "table",
        [Heading("A run"), Text(["one line", "two"]), run_table(rows)],
        results=results(rows),
        figures=standard_figures(rows, "test"),
    )
    written = {name: export(report, tmp_path, (name,)) for name in EXPORTERS}
    assert written["markdown"] == [tmp_path / "table.md"]
    assert written["csv"] == [tmp_path / "table.csv"]
    assert written["json"] == [tmp_path / "results.json"]
    assert written["terminal"] == []  # stdout only
    assert sorted(p.name for p in written["plots"]) == ["bench.png", "latency.png", "timeline.png"]
    assert all(p.parent == tmp_path / "plots" for p in written["plots"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plots", "results.json", "table.csv", "table.md"]
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


def test_json_writes_the_report_document_when_there_are_no_results(tmp_path):
    assert export(Report("soak", document={"a": [1]}), tmp_path, ("json",)) == [tmp_path / "soak.json"]
    assert json.loads((tmp_path / "soak.json").read_text()) == {"a": [1]}
    assert export(Report("nothing"), tmp_path, ("json", "markdown", "csv", "plots")) == []


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
    # no floor row: no xfloor column; no server counts of TLS handshakes: no TLS resumed column
    assert header == [c.label for c in COLUMNS if c.label not in ("xfloor", "TLS resumed")]
    terminal = [c.label for c in run_table(rows, terminal=True).columns]
    assert set(terminal) < set(header) and "P50(ms)" not in terminal and "RSS(MiB)" not in terminal


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
        make_row("skip", optional=True),
        make_row("ok", "crash"),
    ]
    rows.append(type(rows[0])(rows[0].client))  # not run
    status = [cells[-1] for cells in run_table(rows).rows]
    assert status == [
        "ok",
        "crashed 1/3: driver exited with status 3: boom 1",
        "skipped: not installed",
        "FAILED: driver exited with status 3: boom 1",
        "not run",
    ]
    assert run_table(rows).styles == [None, None, None, "red", "red"]
