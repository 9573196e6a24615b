"""The report model and the exporter interface (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis.compare import RowComparison
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
    #: per row and column, the min-max over the repeats of the median the cell shows ("" none): the HTML page shows
    #: it beside the cell, the files and the terminal show the median alone
    spreads: list[list[str]] = field(default_factory=list)


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

    kind: str  # "latency" | "bench" | "timeline" | "sweep" | "rate" | "series"
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
    #: what the HTML page shows: a part per results folder (report/parts.py), and two runs compared
    parts: list[Part] = field(default_factory=list)
    compare: Comparison | None = None
    title: str = ""  # the page's title (default: clientbench and the folder's name)
    html_file: Path | None = None  # where the page goes (default: report.html in the folder)

    @property
    def tables(self) -> list[Table]:
        return [b for b in self.blocks if isinstance(b, Table)]


@dataclass
class Phase:
    """One results document: a run, one phase of the GIL report, or one point of a sweep."""

    key: str  # its folder relative to the part's ("" for the part's own results.json)
    title: str
    results: Results
    value: Any = None  # a sweep point's value


@dataclass
class Part:
    """One results folder as the page shows it."""

    path: Path
    kind: str  # "run" | "gil" | "sweep" | "soak" | "cost" | "profile"
    title: str
    phases: list[Phase] = field(default_factory=list)
    dimension: str | None = None  # a sweep's
    reading: list[Block] = field(default_factory=list)  # the GIL report's generated sections
    summary: list[Block] = field(default_factory=list)  # a sweep's or a soak's document, without its title
    figures: list[Figure] = field(default_factory=list)  # what the summary's images show, to draw them
    soak: Mapping[str, Any] | None = None  # soak.json (or cost.json): its document, for its environment
    #: plots a command drew, for folders without raw samples; a profile's flame graphs (SVG)
    images: dict[str, bytes] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # what the folder lacks, one line each

    @property
    def environment(self) -> Mapping[str, Any]:
        if self.phases:
            return self.phases[0].results.environment
        return (self.soak or {}).get("environment") or {}


@dataclass(frozen=True)
class Comparison:
    """Two runs row by row (`clientbench report A --compare B`): B / A, flagged by analysis/compare.py's rule."""

    a: str  # where A was read from
    b: str
    rows: Sequence[RowComparison]
    summary: Sequence[str]
