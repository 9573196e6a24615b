"""The JSON formats and their validation: the raw document every driver prints (clientbench.raw/4,
docs/raw-format.md; raw/1 to raw/3 documents are still read), the line every soak target prints
(clientbench.soak/1, docs/soak-format.md), and results.json (written by the runner: model.py)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
import numpy as np

from ..contract import schema_id as _contract_schema
from ..harness.phases import check_keys

#: the raw document's schema, of the driver contract's version (contract.py, schema/contract.json)
RAW_SCHEMA_ID = _contract_schema()
#: the raw documents the runner reads, and their schemas: raw/1 is the closed loop with samples only; raw/2 has
#: raw/3's shape (the rules that changed are not a schema's: docs/raw-format.md, "Versions"); raw/4 adds the
#: optional phases
RAW_SCHEMAS = {
    RAW_SCHEMA_ID: "raw-result.schema.json",
    "clientbench.raw/3": "raw-result-3.schema.json",
    "clientbench.raw/2": "raw-result-2.schema.json",
    "clientbench.raw/1": "raw-result-1.schema.json",
}


class InvalidResult(ValueError):
    """A driver printed something that is not a valid raw document."""


class InvalidResults(RuntimeError):
    """The runner made a results.json that does not match its own schema: a bug in clientbench, not in a
    driver or in the user's input."""


@cache
def _load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))
    return doc


def raw_schema(schema_id: str = RAW_SCHEMA_ID) -> dict[str, Any]:
    """The schema of a raw document (`clientbench.raw/4`, or an older version the runner reads)."""
    return _load(RAW_SCHEMAS[schema_id])


def results_schema() -> dict[str, Any]:
    """The schema of results.json (its `$id` is model.SCHEMA_ID)."""
    return _load("results.schema.json")


#: the documents the runner writes (besides results.json) and their schemas: validated when written
DOCUMENT_SCHEMAS = {
    "clientbench.soak-report/1": "soak.schema.json",
    "clientbench.cost/1": "cost.schema.json",
    "clientbench.sweep/1": "sweep.schema.json",
    "clientbench.gil/1": "gil.schema.json",
    "clientbench.profile/1": "profile.schema.json",
    "clientbench.cold/1": "cold.schema.json",
}
SOAK_REPORT_ID = "clientbench.soak-report/1"
COST_ID = "clientbench.cost/1"
SWEEP_ID = "clientbench.sweep/1"
GIL_ID = "clientbench.gil/1"
PROFILE_ID = "clientbench.profile/1"
COLD_ID = "clientbench.cold/1"


def validate_results(doc: Any) -> None:
    """Raise InvalidResults, naming the offending field, when doc is not a valid results.json."""
    _validate(doc, results_schema(), "results.json")


def validate_document(doc: Any) -> None:
    """Raise InvalidResults, naming the offending field, when doc is not a valid document of the schema it names
    (soak.json, cost.json)."""
    schema_id = doc.get("schema") if isinstance(doc, dict) else None
    if schema_id not in DOCUMENT_SCHEMAS:
        raise InvalidResults(f"a document of unknown schema {schema_id!r} (a bug in clientbench: please report it)")
    _validate(doc, _load(DOCUMENT_SCHEMAS[schema_id]), f"{schema_id} document")


def _validate(doc: Any, schema: dict[str, Any], what: str) -> None:
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    if error is not None:
        raise InvalidResults(
            f"{what} does not match {schema['$id']} at {_where(error)}: {error.message} "
            "(a bug in clientbench: please report it with the command that ran)"
        )


def _where(error: jsonschema.ValidationError) -> str:
    """The offending field as a path, e.g. rows/0/runs/1/status."""
    return "/".join(str(p) for p in error.absolute_path) or "(root)"


SOAK_SCHEMA_ID = "clientbench.soak/1"


def soak_schema() -> dict[str, Any]:
    """The schema of the one line a soak target prints (docs/soak-format.md)."""
    return _load("soak-line.schema.json")


def parse_soak_line(text: str) -> dict[str, Any]:
    """Parse and validate a soak target's line; raises InvalidResult with a one-line reason."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidResult(f"soak line is not JSON: {exc}") from None
    validator = jsonschema.Draft202012Validator(soak_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        raise InvalidResult(f"soak line does not match {SOAK_SCHEMA_ID} at {_where(error)}: {error.message}")
    return dict(doc)


def parse_raw(text: str) -> dict[str, Any]:
    """Parse and validate a driver's stdout; raises InvalidResult with a one-line reason."""
    text = text.strip()
    if not text:
        raise InvalidResult("driver printed nothing on stdout")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidResult(f"driver output is not JSON: {exc}") from None
    validate_raw(doc)
    return dict(doc)


def validate_raw(doc: Any) -> None:
    """Raise InvalidResult, with a one-line reason, when doc is not a raw document the runner reads."""
    schema_id = doc.get("schema") if isinstance(doc, dict) else None
    if schema_id not in RAW_SCHEMAS:
        raise InvalidResult(
            f"driver output is not a raw document: its schema is {schema_id!r}, expected {RAW_SCHEMA_ID}"
            if isinstance(doc, dict)
            else f"driver output is not a JSON object but {type(doc).__name__}"
        )
    validator = jsonschema.Draft202012Validator(raw_schema(schema_id))
    shallow, arrays = _without_arrays(doc)
    error = jsonschema.exceptions.best_match(validator.iter_errors(shallow))
    if error is not None:
        raise InvalidResult(f"driver output does not match {schema_id} at {_where(error)}: {error.message}")
    for where, values, columns in arrays:
        _check_array(schema_id, where, values, columns)
    wl = doc["workload"]
    if len(doc["workers"]) != wl["workers"]:
        raise InvalidResult(f"{len(doc['workers'])} workers reported, workload says {wl['workers']}")
    for i, w in enumerate(doc["workers"]):
        n = _check_samples_1(i, w, wl) if schema_id == "clientbench.raw/1" else _check_counts(i, w, wl)
        bad = [f["index"] for f in w["failures"] if f["index"] >= n]
        if bad:
            raise InvalidResult(f"worker {i} has failures with out-of-range indexes {bad[:5]}")
        if len({f["index"] for f in w["failures"]}) != len(w["failures"]):
            raise InvalidResult(f"worker {i} reports the same request as failed twice")
    _check_phases(doc)


def _check_phases(doc: dict[str, Any]) -> None:
    """With `client.phases` (raw/4, --phases), every worker has its `phases`, over its successful requests at most,
    with a sum of every key the client names and of no other (docs/raw-format.md, "Phases")."""
    keys = doc["client"].get("phases")
    have = [i for i, w in enumerate(doc["workers"]) if "phases" in w]
    if keys is None:
        if have:
            raise InvalidResult(f"worker {have[0]} has phases but client.phases does not name them")
        return
    try:
        check_keys(keys)
    except ValueError as exc:
        raise InvalidResult(f"client.phases: {exc}") from None
    for i, w in enumerate(doc["workers"]):
        ph = w.get("phases")
        if ph is None:
            raise InvalidResult(f"client.phases names {keys} but worker {i} has no phases")
        if sorted(ph["sum_ns"]) != sorted(keys):
            raise InvalidResult(f"worker {i}'s phases sum {sorted(ph['sum_ns'])}, client.phases names {keys}")
        if ph["count"] > w["count"] - w["failure_count"]:
            raise InvalidResult(
                f"worker {i}'s phases count {ph['count']} requests, more than its "
                f"{w['count'] - w['failure_count']} successful ones"
            )


#: per-request arrays and histogram buckets: checked with numpy, a schema validator would take seconds
ARRAYS = ("start_ns", "latencies_ns", "intended_ns")


def _without_arrays(doc: Any) -> tuple[Any, list[tuple[str, Any, int]]]:
    """A copy of doc whose workers' per-request arrays and histogram buckets are empty (the schema checks
    the rest), and those arrays: (where, values, columns: 1 for values, 2 for [value, count] pairs)."""
    workers = doc.get("workers")
    if not isinstance(workers, list):
        return doc, []
    arrays: list[tuple[str, Any, int]] = []
    shallow_workers: list[Any] = []
    for i, w in enumerate(workers):
        if not isinstance(w, dict):
            shallow_workers.append(w)
            continue
        w = dict(w)
        for key in ARRAYS:
            if isinstance(w.get(key), list):
                arrays.append((f"workers/{i}/{key}", w[key], 1))
                w[key] = []
        hists = w.get("histograms")
        if isinstance(hists, dict):
            w["histograms"] = hists = {k: dict(h) if isinstance(h, dict) else h for k, h in hists.items()}
            for kind, h in hists.items():
                if isinstance(h, dict) and isinstance(h.get("counts"), list):
                    arrays.append((f"workers/{i}/histograms/{kind}/counts", h["counts"], 2))
                    h["counts"] = []
        shallow_workers.append(w)
    return {**doc, "workers": shallow_workers}, arrays


def _check_array(schema_id: str, where: str, values: list[Any], columns: int) -> None:
    """Whole numbers >= 0; for histogram buckets [value, count] pairs by increasing value, counts >= 1."""
    if not values:
        return
    try:
        a = np.asarray(values)
    except ValueError:  # ragged
        a = np.asarray([], dtype=object)
    shape = (len(values),) if columns == 1 else (len(values), 2)
    if a.shape != shape or a.dtype.kind not in "iu" or (a < 0).any():
        what = "whole numbers >= 0" if columns == 1 else "[value, count] pairs of whole numbers"
        raise InvalidResult(f"driver output does not match {schema_id} at {where}: expected {what}")
    if columns == 2 and ((a[:, 1] < 1).any() or (np.diff(a[:, 0]) <= 0).any()):
        raise InvalidResult(
            f"driver output does not match {schema_id} at {where}: buckets by increasing value, counts >= 1"
        )


def _check_samples_1(i: int, w: dict[str, Any], wl: dict[str, Any]) -> int:
    n: int = wl["requests"]
    if len(w["latencies_ns"]) != n or len(w["start_ns"]) != n:
        raise InvalidResult(
            f"worker {i} reported {len(w['latencies_ns'])} latencies and "
            f"{len(w['start_ns'])} starts, workload says {n} requests"
        )
    return n


def _check_counts(i: int, w: dict[str, Any], wl: dict[str, Any]) -> int:
    """A raw/2, raw/3 or raw/4 worker: its counts agree with the workload, and it has the arrays or the histograms its
    workload says it records (docs/raw-format.md). Returns its count."""
    n: int = w["count"]
    is_open = wl["loop"] == "open"
    if (wl["requests"] is None) == (wl["duration_s"] is None):
        raise InvalidResult("workload.requests and workload.duration_s: exactly one of them is set")
    if is_open != (wl["rate"] is not None) or (wl["duration_s"] is not None and not is_open):
        raise InvalidResult(f"a {wl['loop']} loop with rate {wl['rate']} and duration_s {wl['duration_s']}")
    if wl["requests"] is not None and n != wl["requests"]:
        raise InvalidResult(f"worker {i} sent {n} requests, workload says {wl['requests']}")
    if not is_open and (w["late"] or w["missed"]):
        raise InvalidResult(f"worker {i} of a closed loop reports late or missed requests")
    if w["late"] > n:
        raise InvalidResult(f"worker {i} reports {w['late']} late starts of {n} requests")
    if w["failure_count"] < len(w["failures"]) or w["failure_count"] > n:
        raise InvalidResult(f"worker {i} counts {w['failure_count']} failures and lists {len(w['failures'])}")
    arrays = ("start_ns", "latencies_ns", *(("intended_ns",) if is_open else ()))
    if wl["record"] == "samples":
        lengths = {a: len(w[a]) if a in w else None for a in arrays}
        if any(length != n for length in lengths.values()):
            raise InvalidResult(f"worker {i} sent {n} requests but has arrays of {lengths}")
    else:
        kinds = ("service", "corrected") if is_open else ("service",)
        hists = w.get("histograms") or {}
        if sorted(hists) != sorted(kinds):
            raise InvalidResult(f"worker {i} records histograms {sorted(hists)}, expected {list(kinds)}")
        for kind in kinds:
            total = sum(c for _, c in hists[kind]["counts"])
            if total != n - w["failure_count"]:
                raise InvalidResult(
                    f"worker {i}'s {kind} histogram holds {total} requests, "
                    f"expected the {n - w['failure_count']} successful ones"
                )
    return n


PROBE_LINE_ID = "clientbench.cold-probe/1"


def validate_probe_line(line: Any) -> None:
    """Raise InvalidResult, with a one-line reason, when a cold-start probe's line (probes/cold_start.py) is not
    one (stamps out of order included)."""
    validator = jsonschema.Draft202012Validator(_load("cold-probe.schema.json"))
    error = jsonschema.exceptions.best_match(validator.iter_errors(line))
    if error is not None:
        raise InvalidResult(f"the probe's line does not match {PROBE_LINE_ID} at {_where(error)}: {error.message}")
    stamps = [line["stamps_ns"][k] for k in PROBE_STAMPS]
    if stamps != sorted(stamps):
        raise InvalidResult(f"the probe's stamps are out of order: {', '.join(PROBE_STAMPS)}")


#: the probe's stamps, in the order it takes them
PROBE_STAMPS = ("start", "import0", "imported", "loaded", "construct0", "constructed", "first0", "first", "second0",
                "second")  # fmt: skip
