"""What the HTML report shows, built from results folders (folder.py): per folder its tables (every cell
as in table.md, with its min-max over the repeats), charts (report/export/html/charts.py), the reading the command
generated, the environment; and the compare view of two runs. report/export/html renders it."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markupsafe import Markup

from ....analysis.compare import RowComparison
from ....metrics import axis_title
from ....model import Results, Row
from ...base import Block, Figure, Image, Part, Phase, Report
from ...drawing import drawing
from ...table import run_table
from ...timeseries import plots as series_plots
from ..markdown import render as render_markdown
from .charts import (
    Chart,
    bars,
    chart,
    compare_bars,
    figures,
    latency_cdf,
    medians,
    sweep_curve,
    timeline,
    with_variants,
)

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
    cells: list[str]
    verdict: str
    change: int


@dataclass
class CompareView:
    a: str
    b: str
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


def table_view(rows: Sequence[Row]) -> TableView:
    """The run table (as table.md has it), each median with its min-max over the repeats (`Table.spreads`)."""
    table = run_table(rows)
    body = [
        [
            Cell(text, _number(text) if column.numeric else text.lower(), spread)
            for column, text, spread in zip(table.columns, cells, spreads, strict=True)
        ]
        for cells, spreads in zip(table.rows, table.spreads, strict=True)
    ]
    return TableView([(c.label, c.numeric) for c in table.columns], body, [r.failed for r in rows])


def versions(rows: Sequence[Row]) -> TableView:
    """Every row's library version, interpreter and notes, as its driver reported them."""
    body = []
    for r in rows:
        info = r.info or {}
        py = info.get("python") or {}
        interp = " ".join(str(py[k]) for k in ("implementation", "version") if py.get(k))
        if py.get("free_threaded"):
            interp += ", free-threaded, GIL " + ("enabled" if py.get("gil_enabled") else "off")
        body.append(
            [
                Cell(r.client.label, r.client.label.lower()),
                Cell(r.client.library, r.client.library),
                Cell(str(info.get("library_version") or "-")),
                Cell(interp or "-"),
                Cell(str(info.get("notes") or "")),
            ]
        )
    columns = [("Client", False), ("Library", False), ("Version", False), ("Interpreter", False), ("Notes", False)]
    return TableView(columns, body, [False] * len(body))


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        out: list[tuple[str, str]] = []
        for k, v in value.items():
            out += _flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(value, (list, tuple)):
        return [(prefix, ", ".join(str(v) for v in value))]
    return [(prefix, "-" if value is None else str(value))]


def environment(results: Results) -> list[tuple[str, list[tuple[str, str]]]]:
    """The machine, kernel, toolchains, packages and build flags; the command, workload and server."""
    run = {
        "command": " ".join(results.command),
        "created": results.created,
        "clientbench": results.version,
        "complete": "yes" if results.complete else f"no: {results.interrupted}",
        **{k: v for k, v in results.to_json().items() if k in ("network", "scheme", "tls", "phase", "sweep", "pin")},
    }
    machine = {k: v for k, v in results.environment.items() if not isinstance(v, Mapping) and k != "command"}
    sections = [
        ("run", _flatten(run)),
        ("workload", _flatten(results.workload.to_json())),
        ("server", _flatten(results.server)),
        ("machine", _flatten(machine)),
    ]
    sections += [(k, _flatten(v)) for k, v in results.environment.items() if isinstance(v, Mapping)]
    return sections


def describe(results: Results) -> str:
    return ", ".join(f"{k} {v}" for k, v in results.workload.to_json().items() if v is not None)


# -- parts -----------------------------------------------------------------------------------------


class Builder:
    def __init__(self) -> None:
        self.charts: dict[str, Chart] = {}

    def add(self, chart_id: str, chart: Chart | None) -> str | None:
        if chart is None:
            return None
        self.charts[chart_id] = chart
        return chart_id

    def phase(self, pid: str, phase: Phase, with_charts: bool) -> PhaseView:
        rows = phase.results.rows
        view = PhaseView(pid, phase.title, describe(phase.results), table_view(rows))
        view.failed = [
            f"{r.client.label}: {r.status}" + (f" ({r.reason})" if r.reason else "") for r in rows if r.failed
        ]
        if not rows:
            view.failed.append("no row ran (the command was interrupted before the first one)")
        if with_charts:
            found = [
                self.add(f"{pid}-bench", bars(rows, "bench_ms", "Bench per client", "ms")),
                self.add(f"{pid}-cpu", bars(rows, "cpu_us_per_req", "Client CPU per request", "us")),
                self.add(f"{pid}-cdf", latency_cdf(rows, "Request latency by percentile")),
            ]
            # an open loop second by second, from each run's series in results.json (report/timeseries.py)
            found += [self.add(f"{pid}-series-{j}", chart(p)) for j, p in enumerate(series_plots(rows))]
            view.charts = [c for c in found if c is not None]
        return view

    def timelines(self, part: Part, pid: str) -> list[Timeline]:
        out: list[Timeline] = []
        for phase in part.phases:
            if phase.key not in ("", "rtt"):
                continue
            gil_rows = [r for r in phase.results.rows if r.client.gil]
            rows = gil_rows or (phase.results.rows if part.kind == "gil" else [])
            if not rows:
                continue
            title = "Requests per worker over time" + (f", {phase.title}" if phase.key else "")
            drawn = [self.add(f"{pid}-tl{phase.key}-{i}", timeline(r, r.client.label)) for i, r in enumerate(rows)]
            ids = [d for d in drawn if d is not None]
            if ids:
                out += [Timeline(title if i == 0 else "", chart=c) for i, c in enumerate(ids)]
                continue
            png = "rtt/plots/timeline-rtt.png" if phase.key == "rtt" else "plots/timeline.png"
            if png in part.images:
                url = "data:image/png;base64," + base64.b64encode(part.images[png]).decode("ascii")
                out.append(Timeline(title, image=url, note=f"the plot the command drew ({png}): no raw samples here"))
            else:
                out.append(Timeline(title, note="no raw samples and no timeline plot in this folder"))
        return out

    def sweep(self, part: Part, pid: str) -> list[str]:
        points = [(p.value, medians(p.results.rows)) for p in part.phases]
        names = figures([m for _, rows in points for m in rows])
        axis = part.dimension or "value"
        # an open loop (offered_rps measured) is read as latency against the offered load
        left = "p99_ms" if "offered_rps" in names else "bench_ms"
        out = []
        for side, default in (("a", left), ("b", "throughput_rps")):
            chart = with_variants(names, default, lambda n: sweep_curve(points, n, axis, f"{axis_title(n)} vs {axis}"))
            if (cid := self.add(f"{pid}-sweep-{side}", chart)) is not None:
                out.append(cid)
        return out

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
        first = part.phases[0].results if part.phases else None
        lines = []
        if first is not None:
            lines.append(f"{' '.join(first.command)}, {first.created}")
            if not first.complete:
                lines.append(f"interrupted: {first.interrupted}; the rows that ran are shown")
        view = PartView(pid, part.title, part.kind, str(part.path), lines, list(part.missing))
        view.reading = self.document(part.reading, part, f"{pid}-reading")
        view.summary = self.document(part.summary, part, f"{pid}-summary")
        if part.kind in ("run", "gil"):
            view.phases = [self.phase(f"{pid}-{i}", p, True) for i, p in enumerate(part.phases)]
            view.timelines = self.timelines(part, pid)
        if part.kind == "sweep":
            view.sweep_charts = self.sweep(part, pid)
            view.points = [self.phase(f"{pid}-p{i}", p, False) for i, p in enumerate(part.phases)]
        if first is not None:
            view.environment = environment(first)
            view.versions = versions([r for p in part.phases for r in p.results.rows if p is part.phases[0]])
        elif part.environment:
            view.environment = [(k, _flatten(v)) for k, v in part.environment.items()]
        return view


def compare_view(a: str, b: str, rows: Sequence[RowComparison], summary: list[str], builder: Builder) -> CompareView:
    out = []
    for r in rows:
        if r.a is None or r.b is None:
            out.append(CompareRow(r.label, r.name, ["-"] * 5, r.verdict.text, r.verdict.change))
            continue
        ratios = ["-" if (v := r.ratio(k)) is None else f"{v:.2f}" for k in ("bench_ms", "mean_ms", "p99_ms")]
        benches = [
            f"{x.median.bench_ms:.2f} ({x.bench_min_ms:.2f}-{x.bench_max_ms:.2f}, {x.repeats} repeats)"
            for x in (r.a, r.b)
        ]
        out.append(CompareRow(r.label, r.name, [*benches, *ratios], r.verdict.text, r.verdict.change))
    chart = builder.add("compare-bench", compare_bars(rows))
    return CompareView(a, b, out, summary, chart)


def build(parts: Sequence[Part], title: str) -> tuple[Page, Builder]:
    builder = Builder()
    views = [builder.part(p, f"part{i}") for i, p in enumerate(parts)]
    return Page(title, views, builder.charts), builder
