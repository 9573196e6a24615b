"""`results.json`: the results model, or the report's own JSON document as `<name>.json` (soak.json, cost.json),
each checked against its schema (python/clientbench/schema/) before it is written."""

from __future__ import annotations

import json
from pathlib import Path

from ...files import write_atomic
from ...schema import validate_document, validate_results
from ..base import Report
from .registry import register


@register("json")
class Json:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        if out is None:
            return []
        if report.results is not None:
            path, doc = out / "results.json", report.results.to_json()
            validate_results(doc)  # a document that does not match is a bug: raised, never written
        elif report.document is not None:
            path, doc = out / f"{report.name}.json", report.document
            validate_document(doc)  # as results.json: a document that does not match is never written
        else:
            return []
        write_atomic(path, json.dumps(doc, indent=2) + "\n")
        return [path]
