"""The JSON formats and their validation: the raw document every driver prints (clientbench.raw/1,
docs/raw-format.md), the line every soak target prints (clientbench.soak/1, docs/soak-format.md), and
results.json (clientbench.results/2, written by the runner: model.py)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

RAW_SCHEMA_ID = "clientbench.raw/1"


class InvalidResult(ValueError):
    """A driver printed something that is not a valid raw document."""


class InvalidResults(RuntimeError):
    """The runner made a results.json that does not match its own schema: a bug in clientbench, not in a
    driver or in the user's input."""


@cache
def _load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))
    return doc


def raw_schema() -> dict[str, Any]:
    return _load("raw-result.schema.json")


def results_schema() -> dict[str, Any]:
    """The schema of results.json (its `$id`: clientbench.results/2)."""
    return _load("results.schema.json")


def validate_results(doc: Any) -> None:
    """Raise InvalidResults, naming the offending field, when doc is not a valid results.json."""
    schema = results_schema()
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    if error is not None:
        raise InvalidResults(
            f"results.json does not match {schema['$id']} at {_where(error)}: {error.message} "
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
    validator = jsonschema.Draft202012Validator(raw_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        raise InvalidResult(f"driver output does not match {RAW_SCHEMA_ID} at {_where(error)}: {error.message}")
    wl = doc["workload"]
    if len(doc["workers"]) != wl["workers"]:
        raise InvalidResult(f"{len(doc['workers'])} workers reported, workload says {wl['workers']}")
    for i, w in enumerate(doc["workers"]):
        n = wl["requests"]
        if len(w["latencies_ns"]) != n or len(w["start_ns"]) != n:
            raise InvalidResult(
                f"worker {i} reported {len(w['latencies_ns'])} latencies and "
                f"{len(w['start_ns'])} starts, workload says {n} requests"
            )
        bad = [f["index"] for f in w["failures"] if f["index"] >= n]
        if bad:
            raise InvalidResult(f"worker {i} has failures with out-of-range indexes {bad[:5]}")
        if len({f["index"] for f in w["failures"]}) != len(w["failures"]):
            raise InvalidResult(f"worker {i} reports the same request as failed twice")
