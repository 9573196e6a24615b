"""The registry of figures and columns (clientbench/metrics.py) is the one place each is defined: every field the
model computes is a metric there and in the results schema, every figure of a cold start one there and in the
cold-start schema; the run tables, the cold-start table, the gate's names, the dashboards' measures and the plots'
axis titles are the registry's; docs/measurement.md, docs/open-loop.md and docs/cold-start.md describe every column
the tables have, and no column they do not have."""

from __future__ import annotations

import json
import re
from dataclasses import fields

import pytest
from clientbench.analysis.gate import COLD, COUNTED, TIMED, Threshold, judge_colds, judge_costs, parse_fail_on
from clientbench.metrics import BY_FIELD, COLUMNS, METRICS, OPEN_COLUMNS, axis_title, context, of_source
from clientbench.report import Figure, Report
from clientbench.report.cold import table as cold_table
from clientbench.report.drawing import drawing
from clientbench.report.figures import bars, figure_names, medians
from clientbench.report.metrics import metrics
from clientbench.report.table import run_table, shown
from clientbench.stats import RowStats
from support import REPO
from support.rows import open_row, results, row

SCHEMA = REPO / "python" / "clientbench" / "schema"
DOCS = REPO / "docs"
REFERENCE = REPO / "results" / "reference"


def test_every_field_of_the_model_is_a_metric_and_in_the_schema():
    # every field is one figure, but the phases: a mapping, each of whose keys is a metric of its own
    assert {f.name for f in fields(RowStats)} - {"phases"} == set(BY_FIELD)
    stats = json.loads((SCHEMA / "results.schema.json").read_text())["$defs"]["stats"]["properties"]
    assert set(BY_FIELD) | {"phases"} <= set(stats)
    key = re.compile(stats["phases"]["oneOf"][1]["propertyNames"]["pattern"])
    phases = [m for m in METRICS if m.phase]
    assert phases and all(key.fullmatch(m.phase) and m.field == f"phases.{m.phase}" for m in phases)
    cost = json.loads((SCHEMA / "cost.schema.json").read_text())
    cost_fields = set(re.findall(r'"(\w+_per_request)"', json.dumps(cost)))
    assert {m.field for m in METRICS if m.source == "cost"} <= cost_fields
    cold = json.loads((SCHEMA / "cold.schema.json").read_text())["$defs"]["values"]["required"]
    assert [m.field for m in of_source("cold")] == cold
    assert len({m.field for m in METRICS}) == len(METRICS)  # each figure once


def test_each_table_has_each_label_once_and_every_labelled_metric_has_its_column():
    for columns in (COLUMNS, OPEN_COLUMNS):
        labels = [c.label for c in columns]
        assert len(set(labels)) == len(labels)
    in_tables = {c.metric.field for c in (*COLUMNS, *OPEN_COLUMNS) if c.metric is not None}
    assert {m.field for m in METRICS if m.label and m.source == "run"} == in_tables
    # the cold-start table: its labelled figures in the registry's order, between the row's name and its errors
    labels = [c.label for c in cold_table([]).columns]
    assert labels == ["Client", *(m.label for m in of_source("cold") if m.label), "Errors", "Status"]


@pytest.mark.parametrize("terminal", [False, True])
def test_the_run_tables_columns_are_the_registrys(terminal):
    closed = [row(), row("py-y", gil="released")]
    opened = [open_row("a", 1000, 100, repeats=2)]
    for rows, registry in ((closed, COLUMNS), (opened, OPEN_COLUMNS)):
        table = run_table(rows, terminal=terminal)
        expected = [c for c in registry if (c.terminal or not terminal) and c.show(rows, context(rows))]
        assert [c.label for c in table.columns] == [c.label for c in expected]
        assert [c.label for c in shown(rows, context(rows), terminal=terminal)] == [c.label for c in table.columns]
        assert [c.numeric for c in table.columns] == [c.numeric for c in expected]


def test_a_metrics_cell_is_its_median_with_the_registrys_digits_and_its_spread_its_min_max():
    rows = [row(benches=(10.0, 12.0, 11.0))]
    table = run_table(rows)
    columns = {c.label: c for c in shown(rows, context(rows))}
    agg = rows[0].aggregate
    assert agg is not None
    checked = 0
    for j, column in enumerate(table.columns):
        metric = columns[column.label].metric
        if metric is None or metric.summed or getattr(agg.median, metric.field) is None:
            continue
        assert table.rows[0][j] == f"{getattr(agg.median, metric.field):.{metric.digits}f}", column.label
        r = agg.ranges[metric.field]
        expected = f"{r.low:.{metric.digits}f}-{r.high:.{metric.digits}f}" if r.low != r.high else ""
        assert table.spreads[0][j] == expected, column.label
        checked += 1
    assert checked >= 10
    assert table.spreads[0][[c.label for c in table.columns].index("Bench(ms)")] == "10.00-12.00"


def test_every_gate_name_is_a_registry_metric():
    assert list(TIMED) == ["bench", "lmean", "mean", "p50", "p99", "p999", "max", "cpu", "rss", "rps", "own"]
    assert list(COUNTED) == ["instructions", "syscalls", "allocations"]
    assert list(COLD) == ["import", "construct", "first", "second", "answer", "exit", "rss"]
    for name, metric in (*TIMED.items(), *COUNTED.items(), *COLD.items()):
        assert metric in METRICS and metric.gate == name
        assert parse_fail_on(f"{name}=5%") == [Threshold(name, 5.0)]
    assert all(m.source == "run" for m in TIMED.values()) and all(m.source == "cost" for m in COUNTED.values())
    assert all(m.source == "cold" for m in COLD.values())
    assert not TIMED["rps"].smaller and TIMED["bench"].smaller  # which way is better: the gate's direction
    a = json.loads((REFERENCE / "cost" / "before" / "cost.json").read_text())
    checks = judge_costs(a, a, [Threshold("syscalls", 1.0)])
    assert checks and {c.unit for c in checks} == {COUNTED["syscalls"].gate_unit}
    cold = json.loads((REFERENCE / "cold" / "cold.json").read_text())
    checks = judge_colds(cold, cold, [Threshold("rss", 1.0)])
    assert checks and {c.unit for c in checks} == {COLD["rss"].unit} and not any(c.failed for c in checks)


def test_the_dashboards_track_the_registrys_measures_all_smaller_is_better():
    rows = [row(), row("py-y", gil="released")]
    found = metrics(Report("table", results=results(rows)))
    tracked = {m.slug: m for m in METRICS if m.slug}
    # (these rows recorded no phases: the client's own time is tracked where a row has it)
    assert {t.slug for t in found} == {m.slug for m in tracked.values() if m.source == "run" and not m.phase}
    for t in found:
        assert (t.title, t.unit) == (tracked[t.slug].title, tracked[t.slug].unit)
    assert all(m.smaller for m in tracked.values())  # github-action-benchmark's customSmallerIsBetter
    cost = json.loads((REFERENCE / "cost" / "before" / "cost.json").read_text())
    assert {t.slug for t in metrics(Report("cost", document=cost))} == {
        m.slug for m in tracked.values() if m.source == "cost"
    }
    cold = json.loads((REFERENCE / "cold" / "cold.json").read_text())
    found = metrics(Report("cold", document=cold))
    assert {t.slug for t in found} == {m.slug for m in tracked.values() if m.source == "cold"}
    for t in found:
        assert (t.title, t.unit) == (tracked[t.slug].title, tracked[t.slug].unit)


def test_the_plots_axis_titles_are_the_registrys():
    assert axis_title("p99_ms") == "latency P99 (ms)" and axis_title("service_p999_ms") == "service time P99.9 (ms)"
    rows = [row(), row("py-y", gil="released")]
    for name in figure_names(medians(rows)):
        assert not BY_FIELD[name].summed
    plot = bars(rows, "cpu_us_per_req", "t", "us")
    assert plot is not None and plot.series[0].name == BY_FIELD["cpu_us_per_req"].axis_title
    sweep = drawing(Figure("sweep", "s.png", "t", points=[(1, rows), (2, rows)], axis="workers"))
    assert sweep is not None
    assert [p.y.title for p in sweep.plots] == [BY_FIELD["bench_ms"].axis_title, BY_FIELD["throughput_rps"].axis_title]


# -- the docs ------------------------------------------------------------------------------------------


def _documented(page: str) -> list[str]:
    """The labels the first column of a page's "The columns" table lists (comma-separated)."""
    text = (DOCS / page).read_text().split("## The columns", 1)[1].split("\n## ", 1)[0]
    cells = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")]
    return [label.strip() for cell in cells[1:] for label in cell.split(",")]  # cells[0]: the header


def test_the_docs_describe_every_column_of_the_tables_and_no_other():
    closed = _documented("measurement.md")
    assert [c.label for c in COLUMNS if c.label not in closed] == [], "columns missing from docs/measurement.md"
    assert [label for label in closed if label not in {c.label for c in COLUMNS}] == []
    opened = _documented("open-loop.md")
    assert [c.label for c in OPEN_COLUMNS if c.label not in opened] == [], "columns missing from docs/open-loop.md"
    assert [label for label in opened if label not in {c.label for c in OPEN_COLUMNS}] == []
    cold = [c.label for c in cold_table([]).columns]
    assert sorted(_documented("cold-start.md")) == sorted(cold), "docs/cold-start.md's columns are not the table's"


def test_the_docs_say_which_columns_the_terminal_leaves_out():
    text = (DOCS / "measurement.md").read_text()
    sentence = re.search(r"the terminal\s+leaves out (.+?), which", text, re.S)
    assert sentence is not None
    named = [s.strip() for s in re.split(r",|\band\b", sentence[1].replace("\n", " ")) if s.strip()]
    assert named == [c.label for c in COLUMNS if not c.terminal]
