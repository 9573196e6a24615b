"""What the HTML report shows: a report's parts (report/parts.py) and its comparison of two runs, as the page's
views of the same blocks and figures every exporter renders: each table as its block has it (the run table as in
table.md, each median with its min-max over the repeats: `Table.spreads`), each figure as its charts
(report/export/html/charts.py), a document's blocks as HTML. It computes nothing: every figure, table and text
comes from the Report. report/export/html renders it."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markupsafe import Markup

from ...base import Block, Comparison, Figure, Image, Part, Phase, Report, Table
from ...drawing import curves, drawing
from ..markdown import render as render_markdown
from .charts import Chart, chart, menu

_markdown = MarkdownIt("js-default")  # CommonMark with tables; raw HTML in a file stays text


def markdown(text: str, images: Mapping[str, bytes] | None = None) -> Markup:
    """Markdown as HTML, its headings one level down (the page's own sections are h2); the images it shows are
    inlined from `images` (by their path in the folder), the others left out, with their alt text."""

    def image(m: re.Match[str]) -> str:
        data = (images or {}).get(m[2])
        return f"![{m[1]}](data:image/png;base64,{base64.b64encode(data).decode('ascii')})" if data else f"({m[1]})"

    text = re.sub(r"(?m)^(#{1,5}) ", r"#\1 ", re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", image, text))
    html = _markdown.render(text).replace("<table>", '<table class="sortable md">')
    return Markup(html)  # markdown-it escaped the text (raw HTML is off in js-default)


def figure_charts(figure: Figure) -> list[Chart]:
    """A figure (report/figures.py) as the page draws it: one chart per plot of its drawing."""
    drawn = drawing(figure)
    return [c for plot in (drawn.plots if drawn is not None else []) if (c := chart(plot)) is not None]


@dataclass(frozen=True)
class Flame:
    """A flame graph (`clientbench profile`'s SVG) as the page embeds it: in a frame of its own, where its script
    (zoom, search) runs apart from the page's."""

    title: str
    url: str  # the SVG as a data: URL
    height: int  # the SVG's own height, px
    file: str  # where it is in the folder


@dataclass
class Piece:
    """A stretch of a document on the page: HTML, one of the page's charts (a figure the document shows), or a
    flame graph."""

    html: Markup | None = None
    chart: str | None = None
    flame: Flame | None = None


_SVG_HEIGHT = re.compile(rb"<svg\b[^>]*?\sheight=\"(\d+)")


def flame(title: str, file: str, svg: bytes) -> Flame:
    """An SVG of the folder as the page embeds it, as tall as the SVG says it is."""
    m = _SVG_HEIGHT.search(svg[:4096])
    height = int(m[1]) if m else 600
    return Flame(title, "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii"), height, file)


@dataclass
class Cell:
    text: str
    sort: str = ""  # the value the column sorts on ("" sorts last)
    spread: str = ""  # min-max over the repeats


@dataclass
class TableView:
    columns: list[tuple[str, bool]]  # (label, numeric)
    rows: list[list[Cell]]
    failed: list[bool] = field(default_factory=list)


@dataclass
class Timeline:
    title: str
    chart: str | None = None  # a chart's id
    image: str | None = None  # the plot the command drew, as a data: URL
    note: str = ""


@dataclass
class PhaseView:
    id: str
    title: str
    workload: str
    table: TableView
    charts: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # what the failed rows report


@dataclass
class PartView:
    id: str
    title: str
    kind: str
    path: str
    lines: list[str]
    missing: list[str]
    reading: list[Piece] = field(default_factory=list)
    summary: list[Piece] = field(default_factory=list)
    timelines: list[Timeline] = field(default_factory=list)
    sweep_charts: list[str] = field(default_factory=list)
    phases: list[PhaseView] = field(default_factory=list)
    points: list[PhaseView] = field(default_factory=list)
    environment: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    versions: TableView | None = None


@dataclass
class CompareRow:
    label: str
    name: str
    cells: list[Cell]
    verdict: str
    change: int


@dataclass
class CompareView:
    a: str
    b: str
    columns: list[str]  # the labels of `CompareRow.cells`
    rows: list[CompareRow]
    summary: list[str]
    chart: str | None


@dataclass
class Page:
    title: str
    parts: list[PartView]
    charts: dict[str, Chart]
    compare: CompareView | None = None


# -- tables ----------------------------------------------------------------------------------------


def _number(text: str) -> str:
    m = re.match(r"-?\d+(\.\d+)?", text)
    return m[0] if m else ""


def table_view(table: Table) -> TableView:
    """A table as its block has it, each cell with the min-max its block gives (`Table.spreads`); a red row (a
    failed one) marked."""
    body: list[list[Cell]] = []
    for i, cells in enumerate(table.rows):
        spreads = table.spreads[i] if i < len(table.spreads) else [""] * len(cells)
        body.append(
            [
                Cell(text, _number(text) if column.numeric else text.lower(), spread)
                for column, text, spread in zip(table.columns, cells, spreads, strict=True)
            ]
        )
    failed = [_style(table, i) == "red" for i in range(len(table.rows))]
    return TableView([(c.label, c.numeric) for c in table.columns], body, failed)


def _style(table: Table, i: int) -> str | None:
    return table.styles[i] if i < len(table.styles) else None


# -- parts -----------------------------------------------------------------------------------------


class Builder:
    def __init__(self) -> None:
        self.charts: dict[str, Chart] = {}

    def add(self, chart_id: str, chart: Chart | None) -> str | None:
        if chart is None:
            return None
        self.charts[chart_id] = chart
        return chart_id

    def figure(self, figure: Figure, prefix: str) -> list[str]:
        """A figure's charts, one per plot of its drawing: `prefix-file`, or `prefix-file-j` for each plot of a
        stacked drawing (an open loop's series)."""
        charts = figure_charts(figure)
        if figure.kind == "series" or len(charts) > 1:
            ids = [self.add(f"{prefix}-{figure.file}-{j}", c) for j, c in enumerate(charts)]
        else:
            ids = [self.add(f"{prefix}-{figure.file}", c) for c in charts]
        return [i for i in ids if i is not None]

    def phase(self, pid: str, phase: Phase) -> PhaseView:
        view = PhaseView(pid, phase.title, phase.workload, table_view(phase.table), failed=list(phase.failed))
        view.charts = [c for figure in phase.figures for c in self.figure(figure, pid)]
        return view

    def timelines(self, part: Part, pid: str) -> list[Timeline]:
        out: list[Timeline] = []
        for t in part.timelines:
            ids = [c for figure in t.figures for c in self.figure(figure, pid)]
            if ids:
                out += [Timeline(t.title if i == 0 else "", chart=c) for i, c in enumerate(ids)]
            elif t.image in part.images:
                url = "data:image/png;base64," + base64.b64encode(part.images[t.image]).decode("ascii")
                out.append(
                    Timeline(t.title, image=url, note=f"the plot the command drew ({t.image}): no raw samples here")
                )
            else:
                out.append(Timeline(t.title, note="no raw samples and no timeline plot in this folder"))
        return out

    def sweep(self, part: Part, pid: str) -> list[str]:
        """Each curve as a chart whose figure the page can switch to any other the rows have."""
        found = [self.add(f"{pid}-{figure.file}", menu(curves(figure), figure.metric)) for figure in part.curves]
        return [c for c in found if c is not None]

    def document(self, blocks: Sequence[Block], part: Part, pid: str) -> list[Piece]:
        """A document's blocks as the page shows them: the text and tables as HTML (through their Markdown, as the
        command wrote it), each image as the chart of the figure it shows, or the PNG the command drew."""
        pieces: list[Piece] = []
        text: list[Block] = []

        def flush() -> None:
            if text:
                pieces.append(Piece(html=markdown(render_markdown(Report("doc", list(text))), part.images)))
                text.clear()

        for i, block in enumerate(blocks):
            if isinstance(block, Image) and block.path.endswith(".svg") and block.path in part.images:
                flush()  # a profile's flame graph
                pieces.append(Piece(flame=flame(block.alt, block.path, part.images[block.path])))
                continue
            figure = next(
                (f for f in part.figures if isinstance(block, Image) and block.path == f"plots/{f.file}"), None
            )
            drawn = [self.add(f"{pid}-{i}-{j}", c) for j, c in enumerate(figure_charts(figure))] if figure else []
            if any(drawn):
                flush()
                pieces += [Piece(chart=c) for c in drawn if c is not None]
            else:
                text.append(block)
        flush()
        return pieces

    def part(self, part: Part, pid: str) -> PartView:
        view = PartView(pid, part.title, part.kind, str(part.path), list(part.lines), list(part.missing))
        view.reading = self.document(part.reading, part, f"{pid}-reading")
        view.summary = self.document(part.summary, part, f"{pid}-summary")
        view.phases = [self.phase(f"{pid}-{i}", p) for i, p in enumerate(part.phases)]
        view.timelines = self.timelines(part, pid)
        view.sweep_charts = self.sweep(part, pid)
        view.points = [self.phase(f"{pid}-p{i}", p) for i, p in enumerate(part.points)]
        view.environment = list(part.environment)
        view.versions = table_view(part.versions) if part.versions is not None else None
        return view


#: how a comparison's table marks a row (report/compare.py): red slower in B beyond the noise, green faster
CHANGES = {"red": +1, "green": -1}


def compare_view(comparison: Comparison, builder: Builder) -> CompareView:
    """The comparison's table (`clientbench compare`'s, with the rows' labels first: label, name, figures, verdict)
    and its chart."""
    table = comparison.table
    rows = [
        CompareRow(
            cells[0],
            cells[1],
            [Cell(c, _number(c)) for c in cells[2:-1]],
            cells[-1],
            CHANGES.get(_style(table, i) or "", 0),
        )
        for i, cells in enumerate(table.rows)
    ]
    columns = [c.label for c in table.columns[2:-1]]
    charts = builder.figure(comparison.figure, "compare")
    return CompareView(
        comparison.a, comparison.b, columns, rows, list(comparison.summary), charts[0] if charts else None
    )


def build(parts: Sequence[Part], title: str) -> tuple[Page, Builder]:
    builder = Builder()
    views = [builder.part(p, f"part{i}") for i, p in enumerate(parts)]
    return Page(title, views, builder.charts), builder
