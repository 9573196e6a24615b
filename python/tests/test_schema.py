"""The JSON formats (schema/): a driver's raw document is checked with a one-line reason, and results.json's
schema is the one the model writes."""

import copy

import pytest
from clientbench.model import SCHEMA_ID, RunStatus
from clientbench.schema import InvalidResult, parse_raw, results_schema, validate_raw

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
