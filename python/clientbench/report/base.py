"""The report model and the exporter interface (see the package docstring)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model import Results, Row


@dataclass(frozen=True)
class Column:
    label: str
    numeric: bool = True


@dataclass
class Table:
    columns: list[Column]
    rows: list[list[str]]
    title: str | None = None  # shown on the terminal; Markdown puts headings in their own block
    styles: list[str | None] = field(default_factory=list)  # per row, terminal only (e.g. "red")


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 1


@dataclass(frozen=True)
class Text:
    lines: Sequence[str]  # each line one paragraph or list item, as Markdown


@dataclass(frozen=True)
class Image:
    alt: str
    path: str  # relative to the report's folder


Block = Heading | Text | Table | Image


@dataclass(frozen=True)
class Figure:
    """A plot to draw: `kind` names a function of report/export/plots.py, `file` goes under plots/."""

    kind: str  # "latency" | "bench" | "timeline" | "sweep" | "rate"
    file: str
    title: str
    rows: Sequence[Row] = ()
    points: Sequence[tuple[Any, Sequence[Row]]] = ()  # for "sweep" and "rate": (value, rows) per point
    axis: str = ""  # for "sweep" and "rate": the x axis label
    log_x: bool = False
    slo_ms: float | None = None  # for "rate": the latency objective, drawn as a line


@dataclass
class Report:
    name: str  # file stem: table -> table.md, table.csv
    blocks: list[Block] = field(default_factory=list)
    results: Results | None = None  # the json exporter writes results.json from it
    document: dict[str, Any] | None = None  # or a JSON document of its own (<name>.json)
    figures: list[Figure] = field(default_factory=list)

    @property
    def tables(self) -> list[Table]:
        return [b for b in self.blocks if isinstance(b, Table)]
