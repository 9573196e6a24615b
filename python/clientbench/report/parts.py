"""What the HTML report shows of a results folder: one `Part` per folder a command wrote (a run, a GIL report, a
sweep, a soak, a cost or a profile folder), built here from what the command measured. A command builds its parts
from memory as it ends; `clientbench report DIR` reads a folder back (folder.py) into the same inputs and builds
them with the same functions, so both pages are the same page. The HTML exporter (report/export/html) only renders
them.

A part's reading and summary are blocks of the documents the command wrote (gil.md, sweep.md, soak.md), taken
from those documents' Report, never parsed back from Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..analysis.gil import GilFigures
from ..model import Results
from ..workload import number
from .base import Block, Heading, Part, Phase, Report

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


def run_part(path: Path, title: str, results: Results) -> Part:
    return Part(path, "run", title, [Phase("", "Table", results)])


def gil_part(path: Path, title: str, document: Report, phases: Mapping[str, Results], figures: GilFigures) -> Part:
    """The GIL report: its reading (gil.md's generated sections), the W-worker phase, then the round trip and the
    serial baseline."""
    workers = figures.workload.workers
    part = Part(path, "gil", title, reading=generated_sections(document))
    if "" in phases:
        part.phases.append(Phase("", f"{workers} workers", phases[""]))
    if "rtt" in phases:
        part.phases.append(Phase("rtt", f"{workers} workers at rtt {figures.rtt_ms} ms", phases["rtt"]))
    if "rtt-h3" in phases:
        title = f"{workers} workers at rtt {figures.rtt_ms} ms over HTTP/3"
        part.phases.append(Phase("rtt-h3", title, phases["rtt-h3"]))
    if "serial" in phases:
        title = f"serial baseline (1 worker x {phases['serial'].workload.requests} requests)"
        part.phases.append(Phase("serial", title, phases["serial"]))
    for key, over in (("shared", "HTTP/1.1"), ("shared-h2", "HTTP/2")):
        if key in phases:
            part.phases.append(Phase(key, f"{workers} workers, one shared client, {over}", phases[key]))
    return part


def sweep_part(path: Path, title: str, dimension: str, points: Sequence[tuple[Any, Results]], summary: Report) -> Part:
    phases = [
        Phase(f"points/{dimension}-{_shown(v)}", f"{dimension} = {_shown(v)}", results, v) for v, results in points
    ]
    return Part(path, "sweep", title, phases, dimension, summary=_without_title(summary), figures=summary.figures)


def soak_part(path: Path, title: str, document: Mapping[str, Any], summary: Report) -> Part:
    return Part(path, "soak", title, soak=document, summary=_without_title(summary))


def cost_part(path: Path, title: str, document: Mapping[str, Any], summary: Report) -> Part:
    """A cost folder: its table and how it counted (cost.json's environment is the page's)."""
    return Part(path, "cost", title, soak=document, summary=list(summary.blocks))


def profile_part(
    path: Path, title: str, document: Mapping[str, Any], summary: Report, flames: Mapping[str, bytes]
) -> Part:
    """A profile folder: profile.md's sections, each row's flame graph (its SVG, by its path in the folder, where
    the document's image shows it) and profile.json's environment."""
    return Part(path, "profile", title, soak=document, summary=_without_title(summary), images=dict(flames))


def _shown(value: Any) -> str:
    return number(value) if isinstance(value, float) else str(value)
