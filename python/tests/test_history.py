"""`clientbench history`: every row's figures across runs (history.csv, history.md, report.html), the runs ordered by
when they were made, a folder named twice counted once, and read back by `clientbench report`."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from clientbench import cli
from support import REPO

REFERENCE = REPO / "results" / "reference"


@pytest.mark.slow
def test_history_of_runs_in_the_order_they_were_made(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copytree(REFERENCE / "run-e13771f", runs / "b-newer")
    shutil.copytree(REFERENCE / "run-e13771f", runs / "a-older")
    doc = json.loads((runs / "a-older" / "results.json").read_text())
    doc["created"] = "2020-01-01T00:00:00+00:00"
    for r in doc["rows"]:  # the older run: every row twice as slow
        for run in r["runs"]:
            run["stats"]["bench_ms"] *= 2
    (runs / "a-older" / "results.json").write_text(json.dumps(doc))
    out = tmp_path / "out"
    assert cli.main(["history", str(runs), str(runs / "b-newer"), "-o", str(out)]) == 0
    folder = out / "latest"
    lines = list(csv.DictReader((folder / "history.csv").open()))
    assert len(lines) == 2 * 9  # two runs (b-newer named twice: once) x nine rows
    assert [line["run"] for line in lines[::9]] == [str(runs / "a-older"), str(runs / "b-newer")]  # oldest first
    beast = [float(line["bench_ms"]) for line in lines if line["row"] == "cpp-beast"]
    assert beast[0] == 2 * beast[1] and round(beast[1], 4) == 16.9388
    md = (folder / "history.md").read_text()
    assert "| C++ beast (sync) | 33.88 | 16.94 |" in md
    page = (folder / "report.html").read_text()
    assert page.count('class="chart"') == 2 and "C++ beast (sync)" in page
    # read back: the runs history.json names
    assert cli.main(["report", str(folder), "-o", str(tmp_path / "again.html")]) == 0
    assert (tmp_path / "again.html").read_text().count('class="chart"') == 2


def test_history_without_runs_is_one_line(tmp_path, capsys):
    assert cli.main(["history", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
