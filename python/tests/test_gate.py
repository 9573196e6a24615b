"""The regression gate (`clientbench compare A B --fail-on SPEC`, analysis/gate.py) and the dashboard exports
(`--export github-benchmark`, `--export bencher`), each export checked against its format's published shape
(support/formats/)."""

from __future__ import annotations

import json
import shutil

import jsonschema
import pytest
from clientbench import cli
from clientbench.analysis.gate import Threshold, judge_costs, judge_runs, parse_fail_on
from clientbench.errors import SetupError
from clientbench.report import Report
from clientbench.report.export import export
from support import REPO
from support.rows import results, row

REFERENCE = REPO / "results" / "reference"
FORMATS = REPO / "python" / "tests" / "support" / "formats"


def _stamp(r, benches):
    """Set the row's Bench per repeat (and its median) to `benches`."""
    for run, b in zip(r.runs, benches, strict=True):
        run.stats = type(run.stats)(**{**run.stats.__dict__, "bench_ms": b})
    return r


def test_fail_on_specs():
    assert parse_fail_on("bench=10%, instructions=1") == [Threshold("bench", 10.0), Threshold("instructions", 1.0)]
    for bad, message in (
        ("", "is empty"),
        ("speed=5%", "a figure among bench"),
        ("bench=ten", "a percentage"),
        ("bench=5%,bench=6%", "names bench twice"),
        ("p99=-1%", "within 0% and 1000%"),
    ):
        with pytest.raises(SetupError, match=message):
            parse_fail_on(bad)


def _pair(a_benches, b_benches):
    a = results([_stamp(row("py-x", benches=a_benches), a_benches)])
    b = results([_stamp(row("py-x", benches=b_benches), b_benches)])
    return a, b


@pytest.mark.parametrize(
    "a_benches, b_benches, verdict, failed",
    [
        ((10, 11, 10, 11), (13, 14, 13, 14), "worse", True),  # +30%, ranges apart
        ((10, 11, 10, 11), (10.5, 11, 10.5, 11), "ok", False),  # +2.5%: within the threshold
        ((10, 15, 10, 15), (12, 13, 12, 13), "ok", False),  # within the threshold and the noise
        ((10, 20, 10, 11), (12, 14, 12, 14), "within noise", False),  # worse than 10%, but the ranges overlap
        ((10, 11, 10), (13, 14, 13), "cannot judge (needs 4 repeats)", True),  # a gate that cannot judge fails
        ((10, 11, 10, 11), (8, 9, 8, 9), "ok", False),  # faster
    ],
)
def test_a_timed_figure_fails_beyond_its_threshold_and_the_noise(a_benches, b_benches, verdict, failed):
    a, b = _pair(a_benches, b_benches)
    (check,) = judge_runs(a, b, [Threshold("bench", 10.0)])
    assert (check.verdict, check.failed) == (verdict, failed)


def test_a_row_missing_or_failed_in_b_fails_and_rows_choose_what_is_judged():
    a = results([row("py-x", benches=(10, 11, 10, 11)), row("py-y", benches=(10, 11, 10, 11))])
    b = results([row("py-x", benches=(10, 11, 10, 11))])
    checks = judge_runs(a, b, [Threshold("bench", 10.0)])
    assert [(c.row, c.verdict, c.failed) for c in checks] == [("py-x", "ok", False), ("py-y", "missing", True)]
    assert [c.row for c in judge_runs(a, b, [Threshold("bench", 10.0)], ["py-x"])] == ["py-x"]
    with pytest.raises(SetupError, match="compare timed figures"):
        judge_runs(a, b, [Threshold("instructions", 1.0)])


def test_counts_fail_on_the_plain_percentage():
    a = json.loads((REFERENCE / "cost" / "before" / "cost.json").read_text())
    b = json.loads((REFERENCE / "cost" / "after" / "cost.json").read_text())
    checks = {c.row: c for c in judge_costs(a, b, [Threshold("instructions", 1.0)])}
    assert not checks["cpp-beast"].failed and checks["cpp-beast"].change_pct == pytest.approx(-87.9, abs=0.1)
    assert checks["cpp-floor"].failed and checks["cpp-floor"].verdict == "worse"  # 1,368 -> 1,424: +4.1%
    assert not judge_costs(a, a, [Threshold("instructions", 0.0), Threshold("syscalls", 0.0)])[0].failed


def test_counts_of_the_whole_process_are_judged_with_scope_process(tmp_path, capsys, monkeypatch):
    """The async Beast row's counts on its request threads and in the whole process (its IoThread's hand-off): the
    gate on the whole process sees what the request threads hide."""
    monkeypatch.setenv("COLUMNS", "200")
    a = json.loads((REFERENCE / "cost" / "async-after" / "cost.json").read_text())
    b = json.loads(json.dumps(a))
    for r in b["rows"]:  # a hand-off more per request, on a thread the request threads' counts do not see
        if r["name"] == "py-beast-async":
            r["process"]["syscalls_per_request"] += 2
    assert not any(c.failed for c in judge_costs(a, b, [Threshold("syscalls", 10.0)]))
    (check,) = [c for c in judge_costs(a, b, [Threshold("syscalls", 10.0)], scope="process") if c.failed]
    assert check.row == "py-beast-async" and check.b == pytest.approx(check.a + 2)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "cost.json").write_text(json.dumps(b))
    folder = str(REFERENCE / "cost" / "async-after")
    argv = ["compare", folder, str(tmp_path / "b"), "--fail-on", "syscalls=10%"]
    assert cli.main(argv) == 0
    assert cli.main([*argv, "--scope", "process"]) == 1
    out = capsys.readouterr().out
    assert "(whole process)" in out and "- py-beast-async: syscalls worse by +" in out
    run = str(REFERENCE / "run")
    assert cli.main(["compare", run, run, "--scope", "process"]) == 2
    assert "--scope process: only two cost folders" in capsys.readouterr().err


def test_the_command_line_exits_1_on_a_regression_and_names_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    run = REFERENCE / "run"
    assert cli.main(["compare", str(run), str(run), "--fail-on", "bench=5%,p99=10%"]) == 0
    assert "the gate passed: 20 check(s)" in capsys.readouterr().out  # 10 rows x bench, p99
    doc = json.loads((run / "results.json").read_text())
    for r in doc["rows"]:  # one row 3x slower in every repeat
        if r["client"]["name"] == "py-requests":
            for dr in r["runs"]:
                dr["stats"]["bench_ms"] *= 3
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "results.json").write_text(json.dumps(doc))
    assert cli.main(["compare", str(run), str(tmp_path / "b"), "--fail-on", "bench=10%"]) == 1
    out = capsys.readouterr().out
    assert "the gate failed: 1 of 10 check(s)" in out and "- py-requests: bench worse by +" in out
    assert cli.main(["compare", str(run), str(tmp_path / "b"), "--fail-on", "bench=10%", "--rows", "cpp-*"]) == 0
    capsys.readouterr()
    cost_a, cost_b = REFERENCE / "cost" / "before", REFERENCE / "cost" / "after"
    assert cli.main(["compare", str(cost_a), str(cost_b), "--fail-on", "instructions=1%"]) == 1
    assert "- cpp-floor: instructions worse by +4.1%" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--rows", "cpp-*"], "goes with --fail-on"),
        (["--fail-on", "bench=5%", "--rows", "nothing-*"], "matches no row"),
        (["--fail-on", "wat=1%"], "a figure among"),
    ],
)
def test_bad_gate_flags_are_one_line(capsys, argv, message):
    run = str(REFERENCE / "run")
    assert cli.main(["compare", run, run, *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert cli.main(["compare", run, str(REFERENCE / "cost" / "after")]) == 2
    assert "a cost folder with a cost folder" in capsys.readouterr().err


def _validate(doc, schema_file):
    schema = json.loads((FORMATS / schema_file).read_text())
    jsonschema.Draft7Validator(schema).validate(doc)


def test_the_dashboard_exports_match_their_formats(tmp_path):
    res = results([row("py-x", benches=(10, 12, 11)), row("py-y", gil="released", benches=(9, 9.5, 10))])
    written = export(Report("table", results=res), tmp_path, ("github-benchmark", "bencher"))
    assert [p.name for p in written] == ["github-benchmark.json", "bencher.json"]
    gha = json.loads((tmp_path / "github-benchmark.json").read_text())
    _validate(gha, "github-benchmark-custom.schema.json")
    assert gha[0] == {
        "name": "py-x: Bench",
        "unit": "ms",
        "value": pytest.approx(11.0),
        "range": "10 - 12",
        "extra": "Python x (sync, GIL held); median of 3 run(s)",
    }
    assert {e["name"].split(": ")[1] for e in gha} == {"Bench", "Mean", "P99", "CPU per request"}
    bmf = json.loads((tmp_path / "bencher.json").read_text())
    _validate(bmf, "bencher-bmf.schema.json")
    assert bmf["py-y"]["bench-ms"] == {"value": pytest.approx(9.5), "lower_value": 9.0, "upper_value": 10.0}
    # and the shapes can fail: what a wrong exporter would write is refused
    with pytest.raises(jsonschema.ValidationError):
        _validate([{"name": "x", "value": "11"}], "github-benchmark-custom.schema.json")
    with pytest.raises(jsonschema.ValidationError):
        _validate({"x": {"bench-ms": {"lower_value": 1}}}, "bencher-bmf.schema.json")


def test_report_exports_a_folder_a_cost_folder_too(tmp_path, capsys):
    for name, src in (("run", REFERENCE / "run"), ("cost", REFERENCE / "cost" / "after")):
        folder = tmp_path / name
        shutil.copytree(src, folder)
        assert cli.main(["report", str(folder), "--export", "bencher", "--export", "github-benchmark"]) == 0
        _validate(json.loads((folder / "bencher.json").read_text()), "bencher-bmf.schema.json")
        _validate(json.loads((folder / "github-benchmark.json").read_text()), "github-benchmark-custom.schema.json")
    cost = json.loads((tmp_path / "cost" / "bencher.json").read_text())
    assert cost["cpp-beast"]["syscalls-per-request"] == {"value": 2.0}
    assert "export: " in capsys.readouterr().out
