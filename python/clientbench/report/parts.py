"""What the HTML report shows of a results folder: one `Part` per folder a command wrote (a run, a GIL report, a sweep,
a soak, a cost, a cold-start or a profile folder), built here from what the command measured, as the blocks and
figures every exporter renders: each results document's run table (report/table.py, the table.md of it, each median
with its min-max), the charts beside it, a sweep's curves, the timelines, the environment. A command builds its
parts from memory as it ends; `clientbench report DIR` reads a folder back (folder.py) into the same inputs and
builds them with the same functions, so both pages are the same page. The HTML exporter (report/export/html) only
renders them: it computes nothing.

A part's reading and summary are blocks of the documents the command wrote (gil.md, sweep.md, soak.md), taken
from those documents' Report, never parsed back from Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..analysis import modes
from ..analysis.gil import GilFigures
from ..model import Results, Row
from ..registry.shipped import CLIENTS
from ..workload import number
from .base import Block, Column, Figure, Heading, Part, Phase, Report, Table, Text, Timeline
from .figures import figure_names, medians
from .table import run_table

#: the headings of the sections a command generated from its figures (gil.md has them)
GENERATED = "generated from the figures"


def _without_title(report: Report) -> list[Block]:
    blocks = list(report.blocks)
    return blocks[1:] if blocks and isinstance(blocks[0], Heading) and blocks[0].level == 1 else blocks


def generated_sections(report: Report) -> list[Block]:
    """The sections (a level-2 heading and what follows it) whose heading says they were generated from the
    figures: a document's reading."""
    out: list[Block] = []
    keep = False
    for block in report.blocks:
        if isinstance(block, Heading) and block.level <= 2:
            keep = block.level == 2 and GENERATED in block.text
        if keep:
            out.append(block)
    return out


# -- one results document --------------------------------------------------------------------------


def phase(key: str, title: str, results: Results, *, charts: bool = True) -> Phase:
    """A results document's run table and what its failed rows report; with `charts`, the rows ranked by Bench
    (an open loop's: by its corrected P99) and by client CPU per request, coloured by mode, latency by percentile
    (the default rows drawn, the others a click away), and an open loop's series second by second."""
    rows = results.rows
    failed = [f"{r.client.label}: {r.status}" + (f" ({r.reason})" if r.reason else "") for r in rows if r.failed]
    if not rows:
        failed.append("no row ran (the command was interrupted before the first one)")
    figures = []
    if charts:
        headline = modes.headline(rows)
        shown = default_rows(rows)
        latency = "Request latency by percentile"
        if shown:
            hidden = len(rows) - len(shown)
            latency += f": the rows `clientbench run` runs by default; {hidden} more in the legend, a click away"
        figures = [
            Figure("ranked", "bench", f"{'Bench' if headline == 'bench_ms' else 'P99'} per client, best first", rows,
                   metric=headline),
            Figure("ranked", "cpu", "Client CPU per request, least first", rows, metric="cpu_us_per_req"),
            Figure("latency", "cdf", latency, rows, shown=shown),
            Figure("phases", "phases", "Where a request's time goes: each phase's mean and the client's own time, "
                   "fastest first", rows),
            Figure("series", "series", "", rows),  # an open loop second by second (report/timeseries.py)
        ]  # fmt: skip
    return Phase(key, title, describe(results), run_table(rows), failed, figures)


def default_rows(rows: Sequence[Row]) -> tuple[str, ...]:
    """The rows (names) of these that `clientbench run` runs by default (the registry's default set; a row under
    another interpreter as its own, a row from outside the registry as one), when some are and some are not;
    else none (every row is drawn alike)."""
    default = {spec.client.name: spec.default for spec in CLIENTS}
    names = [r.client.name for r in rows if default.get(r.client.name.partition("@")[0], True)]
    return tuple(names) if 0 < len(names) < len(rows) else ()


def reading(results: Results) -> list[Block]:
    """A run's reading (analysis/modes.py): per mode its fastest, slowest and least CPU-hungry row, and the GIL
    reading of the bindings with both GIL rows."""
    lines = modes.reading(results.rows, results.workload.workers)
    return [Heading(f"Reading ({GENERATED} below)", 2), Text(lines)] if lines else []


def provenance(results: Results) -> str:
    """Which run the figures come from: the command, the commit, the machine, the interpreter, the day and the
    load when it started (the figures move with the machine: a reading quoted elsewhere names its own)."""
    env = results.environment
    git, cpu, py = env.get("git") or {}, env.get("cpu") or {}, env.get("python") or {}
    commit = f"commit {str(git['commit'])[:7]}" if git.get("commit") else "an unknown commit"
    if git.get("dirty"):
        commit += " (with local changes)"
    machine = ", ".join(
        part
        for part in (
            f"{cpu.get('model') or 'an unknown CPU'} ({cpu.get('usable_cores', '?')} usable cores)",
            f"{env['memory_gib']:g} GiB" if env.get("memory_gib") else "",
            str(env.get("os") or ""),
            f"kernel {env['kernel']}" if env.get("kernel") else "",
        )
        if part
    )
    load = env.get("load_average") or []
    loaded = f"; load average {load[0]:.2f} when it started" if load else ""
    interp = " ".join(str(py[k]) for k in ("implementation", "version") if py.get(k)) or "an unknown Python"
    return (
        f"Measured by `{' '.join(results.command)}` at {commit} on {results.created[:10]}: {machine}; {interp}{loaded}."
    )


def reading_report(results: Results) -> Report:
    """reading.md: the run's reading under the line that says where its figures come from."""
    blocks = reading(results)
    return Report("reading", [Text([provenance(results)]), *blocks] if blocks else [])


def describe(results: Results) -> str:
    return ", ".join(f"{k} {v}" for k, v in results.workload.to_json().items() if v is not None)


def versions(rows: Sequence[Row]) -> Table:
    """Every row's library version, interpreter and notes, as its driver reported them."""
    body = []
    for r in rows:
        info = r.info or {}
        py = info.get("python") or {}
        interp = " ".join(str(py[k]) for k in ("implementation", "version") if py.get(k))
        if py.get("free_threaded"):
            interp += ", free-threaded, GIL " + ("enabled" if py.get("gil_enabled") else "off")
        body.append(
            [r.client.label, r.client.library, str(info.get("library_version") or "-"), interp or "-",
             str(info.get("notes") or "")]
        )  # fmt: skip
    columns = [Column(label, numeric=False) for label in ("Client", "Library", "Version", "Interpreter", "Notes")]
    return Table(columns, body, styles=[None] * len(body))


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


def _document_environment(document: Mapping[str, Any]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The environment a command's own document (soak.json, cost.json, profile.json) recorded."""
    return [(k, _flatten(v)) for k, v in (document.get("environment") or {}).items()]


def _part(path: Path, kind: str, title: str, first: Results | None) -> Part:
    """A part with what its first results document says of the run: the command, when, the environment."""
    part = Part(path, kind, title)
    if first is not None:
        part.lines.append(f"{' '.join(first.command)}, {first.created}")
        if not first.complete:
            part.lines.append(f"interrupted: {first.interrupted}; the rows that ran are shown")
        part.environment = environment(first)
        part.versions = versions(first.rows)
    return part


def _timelines(part: Part, phases: Sequence[tuple[str, str, Results]]) -> None:
    """The requests per worker over time of the GIL rows (every row, in a GIL report) of the first phase and of the
    one at a round trip: a chart per row from the raw samples, or the plot the command drew."""
    for key, title, results in phases:
        if key not in ("", "rtt"):
            continue
        rows = [r for r in results.rows if r.client.gil] or (results.rows if part.kind == "gil" else [])
        if not rows:
            continue
        heading = "Requests per worker over time" + (f", {title}" if key else "")
        charts = [Figure("timeline", f"tl{key}-{i}", r.client.label, [r]) for i, r in enumerate(rows)]
        png = "rtt/plots/timeline-rtt.png" if key == "rtt" else "plots/timeline.png"
        part.timelines.append(Timeline(heading, charts, png))


# -- each kind of folder ---------------------------------------------------------------------------


def run_part(path: Path, title: str, results: Results) -> Part:
    """A run: its reading, its charts and its table."""
    part = _part(path, "run", title, results)
    part.reading = reading(results)
    part.phases = [phase("", "", results)]
    _timelines(part, [("", "", results)])
    return part


def gil_part(path: Path, title: str, document: Report, phases: Mapping[str, Results], figures: GilFigures) -> Part:
    """The GIL report: its reading (gil.md's generated sections), the W-worker phase, then the round trip and the
    serial baseline."""
    workers = figures.workload.workers
    shown: list[tuple[str, str, Results]] = []
    if "" in phases:
        shown.append(("", f"{workers} workers", phases[""]))
    if "rtt" in phases:
        shown.append(("rtt", f"{workers} workers at rtt {figures.rtt_ms} ms", phases["rtt"]))
    if "rtt-h3" in phases:
        shown.append(("rtt-h3", f"{workers} workers at rtt {figures.rtt_ms} ms over HTTP/3", phases["rtt-h3"]))
    if "serial" in phases:
        title_serial = f"serial baseline (1 worker x {phases['serial'].workload.requests} requests)"
        shown.append(("serial", title_serial, phases["serial"]))
    for key, over in (("shared", "HTTP/1.1"), ("shared-h2", "HTTP/2")):
        if key in phases:
            shown.append((key, f"{workers} workers, one shared client, {over}", phases[key]))
    part = _part(path, "gil", title, shown[0][2] if shown else None)
    part.reading = generated_sections(document)
    part.phases = [phase(key, t, results) for key, t, results in shown]
    _timelines(part, shown)
    return part


def sweep_part(path: Path, title: str, dimension: str, points: Sequence[tuple[Any, Results]], summary: Report) -> Part:
    """A sweep (or a history: a sweep over runs): two curves of any figure against the swept value (an open loop's
    P99, else Bench; and the throughput), every point's table, and sweep.md without its title."""
    part = _part(path, "sweep", title, points[0][1] if points else None)
    part.points = [
        phase(f"points/{dimension}-{_shown(v)}", f"{dimension} = {_shown(v)}", results, charts=False)
        for v, results in points
    ]
    measured = [(v, results.rows) for v, results in points]
    names = figure_names([m for _, rows in measured for m in medians(rows)])
    left = "p99_ms" if "offered_rps" in names else "bench_ms"
    part.curves = [
        Figure("curve", f"sweep-{side}", "", points=measured, axis=dimension, metric=metric)
        for side, metric in (("a", left), ("b", "throughput_rps"))
    ]
    part.summary, part.figures = _without_title(summary), list(summary.figures)
    return part


def soak_part(path: Path, title: str, document: Mapping[str, Any], summary: Report) -> Part:
    part = Part(path, "soak", title, summary=_without_title(summary))
    part.environment = _document_environment(document)
    return part


def cost_part(path: Path, title: str, document: Mapping[str, Any], summary: Report) -> Part:
    """A cost folder: its table and how it counted (cost.json's environment is the page's)."""
    part = Part(path, "cost", title, summary=list(summary.blocks))
    part.environment = _document_environment(document)
    return part


def cold_part(path: Path, title: str, document: Mapping[str, Any], summary: Report) -> Part:
    """A cold-start folder: cold.md's reading, tables and method (cold.json's environment is the page's)."""
    part = Part(path, "cold", title, summary=list(summary.blocks))
    part.environment = _document_environment(document)
    return part


def profile_part(
    path: Path, title: str, document: Mapping[str, Any], summary: Report, flames: Mapping[str, bytes]
) -> Part:
    """A profile folder: profile.md's sections, each row's flame graph (its SVG, by its path in the folder, where
    the document's image shows it) and profile.json's environment."""
    part = Part(path, "profile", title, summary=_without_title(summary), images=dict(flames))
    part.environment = _document_environment(document)
    return part


def _shown(value: Any) -> str:
    return number(value) if isinstance(value, float) else str(value)
