"""The report model and the exporter interface (see the package docstring)."""

from __future__ import annotations

from collections.abc import Sequence
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
    #: per row, how it is marked: "red" (failed; in a comparison, slower), "yellow" (to look at), "green" (faster):
    #: the terminal's colours, the HTML page's marks
    styles: list[str | None] = field(default_factory=list)
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
    """A plot to draw (report/drawing.py says how each kind is drawn): `file` goes under plots/ (for a part's
    figures, which only the HTML page draws: the id of its chart)."""

    #: "latency" | "bench" | "bars" | "ranked" | "timeline" | "sweep" | "curve" | "rate" | "series" | "compare"
    kind: str
    file: str
    title: str
    rows: Sequence[Row] = ()
    points: Sequence[tuple[Any, Sequence[Row]]] = ()  # for "sweep", "curve" and "rate": (value, rows) per point
    axis: str = ""  # for "sweep", "curve" and "rate": the x axis label
    log_x: bool = False
    slo_ms: float | None = None  # for "rate": the latency objective, drawn as a line
    metric: str = ""  # for "bars", "ranked" and "curve": the figure drawn (a RowStats field; a curve: any)
    shown: Sequence[str] = ()  # for "latency": the rows (names) drawn at first, the others a click away (none: all)
    compared: Sequence[RowComparison] = ()  # for "compare": two runs row by row


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
    """One results document as the HTML page shows it (a run, one phase of the GIL report, or one point of a
    sweep): its run table (report/table.py, each median with its min-max) and the charts beside it."""

    key: str  # its folder relative to the part's ("" for the part's own results.json)
    title: str
    workload: str  # the workload, in one line
    table: Table
    failed: list[str] = field(default_factory=list)  # what its failed rows report (or that none ran)
    figures: list[Figure] = field(default_factory=list)  # the charts beside the table (none for a sweep's points)


@dataclass(frozen=True)
class Timeline:
    """The requests per worker over time of some rows: their charts, drawn from the raw samples where the folder
    kept them, else the plot the command drew (`image`, a path in the part's images)."""

    title: str
    figures: Sequence[Figure]
    image: str


@dataclass
class Part:
    """One results folder as the HTML page shows it, built by report/parts.py."""

    path: Path
    kind: str  # "run" | "gil" | "sweep" | "soak" | "cost" | "cold" | "profile"
    title: str
    lines: list[str] = field(default_factory=list)  # the command, when it ran, whether it was interrupted
    phases: list[Phase] = field(default_factory=list)  # a run's, or a GIL report's phases
    points: list[Phase] = field(default_factory=list)  # a sweep's points
    curves: list[Figure] = field(default_factory=list)  # a sweep's: figures against the swept value
    timelines: list[Timeline] = field(default_factory=list)
    reading: list[Block] = field(default_factory=list)  # the GIL report's generated sections
    summary: list[Block] = field(default_factory=list)  # a sweep's or a soak's document, without its title
    figures: list[Figure] = field(default_factory=list)  # what the summary's images show, to draw them
    #: plots a command drew, for folders without raw samples; a profile's flame graphs (SVG)
    images: dict[str, bytes] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # what the folder lacks, one line each
    environment: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)  # sections of (key, value)
    versions: Table | None = None  # every row's library version and interpreter


@dataclass(frozen=True)
class Comparison:
    """Two runs row by row (`clientbench report A --compare B`): the table `clientbench compare` shows (with the
    rows' labels), its summary, and the chart of Bench in both (report/compare.py)."""

    a: str  # where A was read from
    b: str
    table: Table
    summary: Sequence[str]
    figure: Figure
