"""`results.json`: the results model (schema: python/clientbench/schema/results.schema.json), or the
report's own JSON document as `<name>.json`."""

from __future__ import annotations

import json
from pathlib import Path

from ..files import write_atomic
from .base import Report, register


@register("json")
class Json:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        if out is None:
            return []
        if report.results is not None:
            path, doc = out / "results.json", report.results.to_json()
        elif report.document is not None:
            path, doc = out / f"{report.name}.json", report.document
        else:
            return []
        write_atomic(path, json.dumps(doc, indent=2) + "\n")
        return [path]
