"""The result model (model.py): rows over repeats, the row statuses and the peers' crash policy, and
results.json (clientbench.results/3) to and from JSON, including reading clientbench.results/1 and /2 documents."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from clientbench.errors import SetupError
from clientbench.model import SCHEMA_ID, Client, DriverRun, Results, Row, RunStatus
from clientbench.schema import validate_results
from clientbench.stats import ProcessUsage, aggregate, row_stats
from clientbench.workload import Workload
from support import REPO
from support.rows import client, crashed_run, good_run, make_row, raw, results, row

REFERENCE_RUN = REPO / "results" / "reference" / "run-e13771f"  # written by clientbench.results/1


# -- a row over its repeats ----------------------------------------------------------------------


def test_aggregate_is_the_median_with_bench_spread():
    r = row(benches=(10.0, 30.0, 12.0))
    agg = r.aggregate
    assert agg.repeats == 3
    assert agg.median.bench_ms == 12.0
    assert (agg.bench_min_ms, agg.bench_max_ms) == (10.0, 30.0)
    singles = [x.stats for x in r.runs]
    assert agg.median.mean_ms == pytest.approx(np.median([s.mean_ms for s in singles]))
    assert agg.median.requests == sum(s.requests for s in singles)


def test_cpu_and_rss_figures():
    s = row().runs[0].stats
    assert s.cpu_us_per_req == pytest.approx(2_000_000 / 1e3 / 100)  # the driver's own cpu_ns wins
    assert s.peak_rss_mib == 20.0
    doc = raw()
    del doc["cpu_ns"]
    assert row_stats(doc, ProcessUsage(0.5, 1024)).cpu_us_per_req == pytest.approx(0.5e6 / 100)


def test_aggregate_rejects_nothing():
    with pytest.raises(ValueError):
        aggregate([])


def test_add_keeps_the_driver_client_section():
    r = Row(client())
    r.add(crashed_run(r.client))
    assert r.info is None and r.raw is None
    r.add(good_run(r.client))
    assert r.info == raw()["client"] and r.raw is r.runs[-1].raw


def test_client_label():
    assert client(gil="held").label == "Python x (sync, GIL held)"
    assert (
        Client(name="s", language="C++", library="beast", mode="sync", fixed_workers=1).label == "C++ beast (sync, W=1)"
    )


# -- statuses and the exit-status policy ---------------------------------------------------------


@pytest.mark.parametrize(
    "runs, optional, status, counts",
    [
        ((), False, "not run", True),  # interrupted before its first run: no good repeat
        (("ok", "ok", "ok"), False, "ok", False),
        (("ok", "ok", "ok"), True, "ok", False),
        (("unavailable",), True, "unavailable", False),  # not installed here: shown, not failed
        (("unavailable",), False, "unavailable", False),  # ours too (the exit status judges -c names apart)
        (("skipped",), True, "unavailable", False),  # read from an older document
        # ours: any bad repeat fails the row and the run
        (("ok", "crash", "ok"), False, "failed", True),
        (("ok", "errors", "ok"), False, "failed", True),
        # a peer that crashed in some repeats and ran cleanly in the others keeps its row
        (("ok", "crash", "ok"), True, "crashed", False),
        (("crash", "crash", "ok"), True, "crashed", False),
        # a peer's failed requests are reported (failed row), not fatal while some repeat was good
        (("ok", "errors", "ok"), True, "failed", False),
        (("ok", "errors", "crash"), True, "failed", False),
        # no good repeat at all: fatal, peer or not
        (("crash", "crash", "crash"), True, "failed", True),
        (("errors", "crash"), True, "failed", True),
    ],
)  # fmt: skip
def test_status_and_what_counts_against_the_run(runs, optional, status, counts):
    r = make_row(*runs, optional=optional)
    assert r.status == status
    assert r.counts_against_run == counts
    assert r.tolerated == (status == "crashed")
    if status in ("ok", "crashed", "unavailable"):
        assert not r.failed


def test_a_tolerated_peer_says_how_often_it_crashed_and_keeps_the_median_of_its_good_repeats():
    r = make_row("ok", "crash", "ok", optional=True)
    assert r.reason == "crashed 1/3: driver exited with status 3: boom 1"
    assert r.aggregate.repeats == 2
    assert r.aggregate.median.bench_ms == pytest.approx(np.median([10.0, 12.0]))
    assert [run.status for run in r.runs] == ["ok", "failed", "ok"]


# -- results.json --------------------------------------------------------------------------------


def test_results_round_trip_through_json():
    rows = [
        row(),
        make_row("ok", "crash", "ok", optional=True),
        make_row("unavailable", optional=True),
        Row(client("py-z")),
        make_row("ok", "errors"),
    ]
    doc = results(rows).to_json()
    validate_results(doc)
    assert doc["schema"] == SCHEMA_ID == "clientbench.results/3"
    assert doc["complete"] is True and doc["phase"] == "parallel"
    assert [r["status"] for r in doc["rows"]] == ["ok", "crashed", "unavailable", "not run", "failed"]
    assert len(doc["rows"][0]["runs"]) == 3
    assert set(doc["rows"][0]["aggregate"]["median"]) >= {
        "mean_ms", "p50_ms", "p99_ms", "p999_ms", "max_ms", "lmean_ms", "bench_ms", "throughput_rps", "cpu_us_per_req",
        "peak_rss_mib", "bench_over_lmean", "errors",
    }  # fmt: skip
    back = Results.from_json(json.loads(json.dumps(doc)))
    assert back.to_json() == doc
    assert back.workload == results([]).workload and back.phase == "parallel" and back.scheme is None
    assert [r.client for r in back.rows] == [r.client for r in rows]
    assert back.rows[1].reason == rows[1].reason and back.rows[1].aggregate == rows[1].aggregate
    assert back.rows[4].failed and back.rows[4].counts_against_run


def test_an_interrupted_run_is_incomplete():
    doc = Results(**{**results([]).__dict__, "interrupted": "interrupted (Ctrl-C)"}).to_json()
    validate_results(doc)
    assert doc["complete"] is False and doc["interrupted"] == "interrupted (Ctrl-C)"


def test_a_run_whose_bytes_were_missing_stays_failed_after_a_round_trip():
    r = Row(client())
    run = good_run(r.client)
    run.status, run.reason = RunStatus.FAILED, "body integrity: received 1 bytes, expected 2"
    r.add(run)
    back = Results.from_json(results([r]).to_json()).rows[0]
    assert back.failed and back.runs[0].status is RunStatus.FAILED and back.runs[0].reason == run.reason
    assert not back.runs[0].crashed and back.crashes == []  # it printed its document: a failure, not a crash


@pytest.mark.parametrize("status", list(RunStatus))
def test_a_run_status_is_written_as_its_value_and_read_back(status):
    run = DriverRun(client(), status, reason=None if status is RunStatus.OK else "why")
    doc = run.to_json()
    assert doc["status"] == status.value and type(doc["status"]) is str
    back = DriverRun.from_json(client(), json.loads(json.dumps(doc)))
    assert back.status is status and back.reason == run.reason


def test_an_unknown_run_status_is_not_read():
    doc = results([row()]).to_json()
    doc["rows"][0]["runs"][0]["status"] = "maybe"
    with pytest.raises(ValueError, match="maybe"):
        Results.from_json(doc)


def test_reading_a_results_1_document():
    doc = json.loads((REFERENCE_RUN / "results.json").read_text())
    assert doc["schema"] == "clientbench.results/1" and "connection" not in doc["workload"]
    res = Results.load(REFERENCE_RUN)
    assert res.workload == Workload(workers=10, requests=100, warmup=10, timeout_s=30.0, repeat=10)
    assert res.complete and [r.status for r in res.rows] == ["ok"] * 9
    cpp = res.rows[0]
    assert cpp.client == Client(name="cpp-beast", language="C++", library="beast", mode="sync")
    assert cpp.info["library_version"] == "1.81.0"
    assert cpp.aggregate.repeats == 10 and round(cpp.aggregate.median.bench_ms, 2) == 16.94  # its table.md
    # and it is written back as a valid document of the current version
    again = res.to_json()
    validate_results(again)
    assert again["schema"] == SCHEMA_ID and again["workload"]["connection"] == "keep-alive"
    assert Results.from_json(again).to_json() == again


def test_load_accepts_a_folder_or_a_file(tmp_path):
    assert Results.load(REFERENCE_RUN / "results.json").to_json() == Results.load(REFERENCE_RUN).to_json()


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no results"),
        ("{not json", "cannot read"),
        ('{"schema": "something/1"}', "is not a clientbench results.json"),
        ("[]", "is not a clientbench results.json"),
        ('{"schema": "clientbench.results/2", "rows": []}', "is not a valid clientbench results.json"),
    ],
)
def test_load_errors_are_setup_errors(tmp_path, content, message):
    if content is not None:
        (tmp_path / "results.json").write_text(content)
    with pytest.raises(SetupError, match=message):
        Results.load(tmp_path)


def test_from_json_does_not_modify_its_input():
    doc = results([row(), make_row("ok", "crash", optional=True)]).to_json()
    before = copy.deepcopy(doc)
    Results.from_json(doc)
    assert doc == before
