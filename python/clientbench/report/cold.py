"""cold.md, `clientbench cold`'s document: per row the medians of its cold starts, their spreads, the reading
generated from them and what each figure spans (docs/cold-start.md); from cold.json's rows, so a folder read back
(folder.py) gives the same document. The figures, their columns and what they span are the registry's (metrics.py,
`source` "cold")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.cold import median, reading, span
from ..metrics import of_source
from .base import Column, Heading, Report, Table, Text
from .parts import GENERATED

#: every figure of a cold start, in the registry's order
FIGURES = of_source("cold")
#: the figures the cold-start table shows, as its columns
COLUMNS = tuple(m for m in FIGURES if m.label)


def _cell(row: Mapping[str, Any], field: str, digits: int) -> str:
    value = median(row, field)
    return "-" if value is None else f"{value:.{digits}f}"


def _range(row: Mapping[str, Any], field: str, digits: int) -> str:
    found = span(row, field)
    return "-" if found is None else f"{found.low:.{digits}f}-{found.high:.{digits}f}"


def _status(row: Mapping[str, Any]) -> str:
    if row["status"] == "ok":
        return "ok"
    reason = row.get("reason") or ""
    if row["status"] == "failed":
        return f"FAILED: {reason}" if reason else "FAILED"
    return reason or row["status"]


def _style(row: Mapping[str, Any]) -> str | None:
    return {"ok": None, "failed": "red"}.get(row["status"], "dim")


def table(rows: Sequence[Mapping[str, Any]], title: str | None = None, status: bool = True) -> Table:
    """The medians over each row's samples, and its errors (failed samples)."""
    columns = [Column("Client", False), *(Column(f.label) for f in COLUMNS), Column("Errors")]
    if status:
        columns.append(Column("Status", False))
    out = Table(columns, [], title=title)
    for r in rows:
        cells = [r["name"], *(_cell(r, f.field, f.digits) for f in COLUMNS), str(r.get("errors", 0))]
        out.rows.append(cells + ([_status(r)] if status else []))
        out.styles.append(_style(r))
    return out


def spreads(rows: Sequence[Mapping[str, Any]]) -> Table:
    """Each figure's min-max over the row's samples."""
    columns = [Column("Client", False), *(Column(f.label.replace("(", " min-max(")) for f in COLUMNS), Column("n")]
    out = Table(columns, [])
    for r in rows:
        if not r.get("figures"):
            continue
        n = max((s["n"] for s in r["figures"].values() if s), default=0)
        out.rows.append([r["name"], *(_range(r, f.field, f.digits) for f in COLUMNS), str(n)])
        out.styles.append(_style(r))
    return out


def title(document: Mapping[str, Any]) -> str:
    http = "" if document["http"] == "1.1" else f", HTTP/{document['http']}"
    scheme = "HTTPS" if document["scheme"] == "https" else "HTTP"
    return f"Cold start (GET {document['path']} over {scheme}{http}; median of {document['samples']} fresh processes)"


def method(document: Mapping[str, Any]) -> list[str]:
    """What each figure spans, and how the samples were taken."""
    lines = [
        f"Each row ran {document['samples']} times, each time in a new process, the rows in turns (one untimed run "
        "of each first, so that the OS's file cache holds its files, and for a Python row a run under python -X "
        "importtime); each figure is the median over the samples, its min-max below. Every figure is a difference "
        "of two readings of CLOCK_MONOTONIC, the first taken by the runner just before it started the process.",
        "Python rows (the probe python/clientbench/probes/cold_start.py, under the row's interpreter):",
    ]
    lines += [f"- {f.label or f.field}: {f.python_span}" for f in FIGURES if f.python_span]
    lines.append("Rows whose driver is a program (cpp-beast, rust-reqwest: one worker, two requests, no warm-up):")
    lines += [f"- {f.label or f.field}: {f.program_span}" for f in FIGURES if f.program_span]
    lines.append("Errors: samples that failed (a request not answered 200 with its whole body, or the process failed).")
    return lines


def document(document: Mapping[str, Any]) -> Report:
    """cold.md of a cold.json."""
    rows = document["rows"]
    blocks: list[Any] = [Heading(title(document))]
    said = reading(rows, document["scheme"], document["http"])
    if said:
        blocks += [Heading(f"The reading ({GENERATED})", 2), Text(said)]
    blocks += [Heading("Medians", 2), table(rows), Heading("Min-max over the samples", 2), spreads(rows)]
    blocks += [Heading("What each figure spans", 2), Text(method(document))]
    return Report("cold", blocks, document=dict(document))


def terminal(document: Mapping[str, Any]) -> Report:
    """What the terminal shows: the reading, then the medians under the title."""
    said = reading(document["rows"], document["scheme"], document["http"])
    blocks: list[Any] = [Text(said)] if said else []
    return Report("cold", [*blocks, table(document["rows"], title(document))])
