"""The JSON formats (schema/): a driver's raw document (raw/3, and raw/2 and raw/1, which the runner still reads)
is checked with a one-line reason, and results.json's schema is the one the model writes."""

import copy
import re

import pytest
from clientbench import contract
from clientbench.model import SCHEMA_ID, RunStatus
from clientbench.schema import (
    RAW_SCHEMA_ID,
    RAW_SCHEMAS,
    InvalidResult,
    parse_raw,
    raw_schema,
    results_schema,
    validate_raw,
)
from support.rows import OPEN, histogram_doc

GOOD = {
    "schema": "clientbench.raw/1",
    "client": {"language": "C++", "library": "beast", "library_version": "1.81.0", "mode": "sync", "gil": None},
    "workload": {"url": "http://127.0.0.1:1/", "workers": 2, "requests": 2, "warmup": 0, "timeout_s": 30},
    "wall_ns": 100,
    "workers": [
        {"elapsed_ns": 90, "start_ns": [0, 50], "latencies_ns": [40, 40], "bytes": 26, "failures": []},
        {
            "elapsed_ns": 80,
            "start_ns": [1, 41],
            "latencies_ns": [40, 39],
            "bytes": 13,
            "failures": [{"index": 1, "reason": "status 500", "status": 500}],
        },
    ],
}


def test_good_document_validates():
    validate_raw(copy.deepcopy(GOOD))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("wall_ns"), "wall_ns"),
        (lambda d: d["client"].update(mode="threads"), "mode"),
        (lambda d: d.update(schema="other/1"), "schema"),
        (lambda d: d["workers"].pop(), "workers reported"),
        (lambda d: d["workers"][0]["latencies_ns"].pop(), "latencies"),
        (lambda d: d["workers"][1]["failures"].append({"index": 7, "reason": "x"}), "out-of-range"),
        (lambda d: d["workers"][1]["failures"].append({"index": 1, "reason": "x"}), "twice"),
        (lambda d: d["workers"][0].update(bytes=-1), "bytes"),
    ],
)
def test_bad_documents_are_rejected_with_a_reason(mutate, message):
    doc = copy.deepcopy(GOOD)
    mutate(doc)
    with pytest.raises(InvalidResult, match=message):
        validate_raw(doc)


@pytest.mark.parametrize("text", ["", "   \n", "not json", "[1, 2]", '{"schema": "clientbench.raw/1"}'])
def test_parse_raw_rejects_garbage(text):
    with pytest.raises(InvalidResult):
        parse_raw(text)


def test_the_results_schema_is_the_models():
    schema = results_schema()
    assert schema["$id"] == schema["properties"]["schema"]["const"] == SCHEMA_ID
    run = schema["properties"]["rows"]["items"]["properties"]["runs"]["items"]
    assert run["properties"]["status"]["enum"] == [s.value for s in RunStatus]


# -- clientbench.raw/3 (and raw/2) ---------------------------------------------------------------------


def test_the_raw_schemas_are_the_contracts_versions():
    """raw/4 is the contract's version (schema/contract.json): raw/3's shape and the optional phases; raw/2 has raw/3's
    shape (what raw/3 changed are rules of behaviour, docs/raw-format.md's "Versions"), and the runner reads every
    version the contract lists."""
    assert RAW_SCHEMA_ID == contract.schema_id() == "clientbench.raw/4"
    assert set(RAW_SCHEMAS) == {contract.schema_id(v) for v in contract.READ}
    for version in contract.READ:
        schema = raw_schema(contract.schema_id(version))
        assert schema["$id"] == contract.schema_id(version)
    four, three, two = (raw_schema(f"clientbench.raw/{v}") for v in (4, 3, 2))
    assert "phases" in four["properties"]["client"]["properties"] and "phase_key" in four["$defs"]
    assert "phases" not in three["properties"]["client"]["properties"] and "phase_key" not in three["$defs"]
    assert two["properties"]["schema"]["const"] == "clientbench.raw/2"
    assert {k: v for k, v in two.items() if k not in ("$id", "title", "description", "properties")} == {
        k: v for k, v in three.items() if k not in ("$id", "title", "description", "properties")
    }
    assert {k: v for k, v in two["properties"].items() if k != "schema"} == {
        k: v for k, v in three["properties"].items() if k != "schema"
    }


def test_raw_3_and_raw_2_documents_validate_and_raw_1_is_still_read():
    assert OPEN["schema"] == "clientbench.raw/3"
    validate_raw(copy.deepcopy(OPEN))
    validate_raw({**copy.deepcopy(OPEN), "schema": "clientbench.raw/2"})
    validate_raw(histogram_doc())
    validate_raw(copy.deepcopy(GOOD))  # raw/1
    closed = copy.deepcopy(OPEN)
    closed["workload"].update(loop="closed", rate=None, arrival=None, seed=None, requests=2, duration_s=None)
    for w in closed["workers"]:
        del w["intended_ns"]
        w.update(late=0, missed=0, count=2)
    closed["workers"][1].update(start_ns=[0, 1], latencies_ns=[2, 3])
    validate_raw(closed)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["workers"][0].pop("count"), "'count' is a required property"),
        (lambda d: d["workers"][0].pop("intended_ns"), "has arrays of"),
        (lambda d: d["workers"][0]["start_ns"].pop(), "has arrays of"),
        (lambda d: d["workers"][0]["latencies_ns"].__setitem__(0, -1), "workers/0/latencies_ns: expected whole"),
        (lambda d: d["workers"][0]["latencies_ns"].__setitem__(0, 1.5), "workers/0/latencies_ns: expected whole"),
        (lambda d: d["workers"][0]["start_ns"].__setitem__(0, "0"), "workers/0/start_ns: expected whole"),
        (lambda d: d["workers"][0].update(late=3), "3 late starts of 2 requests"),
        (lambda d: d["workers"][1].update(failure_count=0), "counts 0 failures and lists 1"),
        (lambda d: d["workers"][1]["failures"][0].update(index=1), "out-of-range"),
        (lambda d: d["workload"].update(rate=None), "rate"),
        (lambda d: d["workload"].update(loop="closed"), "a closed loop with rate 4000"),
        (lambda d: d["workload"].update(requests=5), "exactly one of them is set"),
        (lambda d: d["workload"].update(record="everything"), "record"),
        (lambda d: d["workload"].update(body_size=(1 << 30) + 1), "body_size"),
        (lambda d: d["workers"][0].update(failures=[{"index": 0, "reason": "x"}] * 1001), "failures"),
        (lambda d: d.update(schema="clientbench.raw/5"), "its schema is 'clientbench.raw/5'"),
    ],
)
def test_bad_raw_3_documents_are_rejected_with_a_reason(mutate, message):
    doc = copy.deepcopy(OPEN)
    mutate(doc)
    with pytest.raises(InvalidResult, match=re.escape(message)):
        validate_raw(doc)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["workers"][0]["histograms"].pop("corrected"), "records histograms ['service']"),
        (lambda d: d["workers"][0]["histograms"]["service"]["counts"].pop(), "holds 1 requests, expected the 2"),
        (lambda d: d["workers"][0]["histograms"]["service"]["counts"].reverse(), "buckets by increasing value"),
        (lambda d: d["workers"][0]["histograms"]["service"]["counts"][0].__setitem__(1, 0), "counts >= 1"),
        (lambda d: d["workers"][0]["histograms"]["service"]["counts"].__setitem__(0, [1, 2, 3]), "pairs"),
        (lambda d: d["workers"][0]["histograms"]["service"].update(significant_digits=2), "significant_digits"),
        (lambda d: d["workers"][0].update(latencies_ns=[1, 2]) or d["workers"][0]["histograms"].pop("corrected"),
         "records histograms"),
    ],
)  # fmt: skip
def test_bad_histograms_are_rejected_with_a_reason(mutate, message):
    doc = histogram_doc()
    mutate(doc)
    with pytest.raises(InvalidResult, match=re.escape(message)):
        validate_raw(doc)
