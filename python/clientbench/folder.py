"""A results folder read back from disk, whatever command wrote it, for the HTML report.

A run folder has results.json (and raw/ with the drivers' documents, plots/); a GIL report adds gil.md and the
serial/ and rtt/ phases; a sweep has sweep.md and points/<dimension>-<value>/results.json; a soak has soak.json
and soak.md. A folder of such folders (results/reference/tls) is read as one part per sub-folder. Whatever is
missing or unreadable becomes one line in `missing` (the page says it) or, when nothing is left to show, one
SetupError line."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SetupError
from .model import READS, SCHEMA_ID, Results
from .registry.shipped import CLIENTS
from .workload import number

RESULTS = "results.json"
#: the GIL report's phases besides the W-worker one at the top
GIL_PHASES = ("rtt", "serial")


@dataclass
class Phase:
    """One results.json: a run, one phase of the GIL report, or one point of a sweep."""

    key: str  # its folder relative to the part's ("" for the part's own results.json)
    title: str
    results: Results
    value: Any = None  # a sweep point's value


@dataclass
class Part:
    """One results folder as the page shows it."""

    path: Path
    kind: str  # "run" | "gil" | "sweep" | "soak"
    title: str
    phases: list[Phase] = field(default_factory=list)
    dimension: str | None = None  # a sweep's
    markdown: str | None = None  # what the command wrote for people: gil.md, sweep.md or soak.md
    soak: dict[str, Any] | None = None  # soak.json
    images: dict[str, bytes] = field(default_factory=dict)  # PNGs the command drew, by path in the folder
    missing: list[str] = field(default_factory=list)

    @property
    def environment(self) -> Mapping[str, Any]:
        if self.phases:
            return self.phases[0].results.environment
        return (self.soak or {}).get("environment") or {}


def _read_json(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SetupError(f"no results at {file}") from None
    except (OSError, ValueError) as exc:
        raise SetupError(f"cannot read {file}: {exc}") from None


def load_results(file: Path) -> Results:
    """results.json, converted from an older version this one reads; a one-line SetupError naming the versions
    it reads for any other."""
    doc = _read_json(file)
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in READS:
        found = f"is {schema}" if isinstance(schema, str) else "has no clientbench schema"
        raise SetupError(
            f"{file} {found}; this clientbench reads {', '.join(READS)} (rerun the command to write {SCHEMA_ID})"
        )
    results = Results.load(file)
    if schema == "clientbench.results/1":
        # results/1 did not record fixed_workers, floor and optional: the client registry knows them
        registry = {c.name: c.client for c in CLIENTS}
        for row in results.rows:
            if row.client.name in registry:
                row.client = registry[row.client.name]
                for run in row.runs:
                    run.client = row.client
    return results


def _attach_raw(phase_dir: Path, results: Results, counts: dict[str, int]) -> None:
    """The drivers' raw documents (raw/), which the latency curves and timelines are drawn from; counts the
    ones that are absent or unreadable."""
    for row in results.rows:
        for run in row.runs:
            if run.raw_file is None or run.raw is not None:
                continue
            try:
                run.raw = json.loads((phase_dir / run.raw_file).read_text(encoding="utf-8"))
            except FileNotFoundError:
                counts["absent"] = counts.get("absent", 0) + 1
            except (OSError, ValueError):
                counts["unreadable"] = counts.get("unreadable", 0) + 1


def _raw_notes(part: Part, counts: dict[str, int]) -> None:
    if counts.get("absent"):
        part.missing.append(
            f"{counts['absent']} of the drivers' raw documents are not in this folder (raw/ was not kept): the "
            "latency curves are drawn through the table's percentiles, and the timelines are the plots the "
            "command drew, where it kept them"
        )
    if counts.get("unreadable"):
        part.missing.append(f"{counts['unreadable']} raw document(s) under raw/ could not be read")


def _image(part: Part, relative: str) -> None:
    file = part.path / relative
    if file.is_file():
        part.images[relative] = file.read_bytes()


def _linked_images(part: Part) -> None:
    """The PNGs the part's Markdown shows (sweep.md's plots), to inline them."""
    for relative in re.findall(r"!\[[^\]]*\]\(([^)\s]+\.png)\)", part.markdown or ""):
        if not relative.startswith(("/", "..")):
            _image(part, relative)


def _text(file: Path) -> str | None:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _point_order(markdown: str | None, dimension: str, values: list[str]) -> list[str]:
    """Points in the order sweep.md's table has them (the order they ran), else numbers first, ascending."""
    if markdown:
        header = next((line for line in markdown.splitlines() if line.startswith("| Client |")), "")
        ordered = re.findall(rf"\| {re.escape(dimension)}=([^|]+?) (?=\|)", header)
        if sorted(ordered) == sorted(values):
            return ordered

    def key(v: str) -> tuple[int, float, str]:
        try:
            return (0, float(v), v)
        except ValueError:
            return (1, 0.0, v)

    return sorted(values, key=key)


def _run(path: Path, title: str) -> Part:
    results = load_results(path / RESULTS)
    gil = (path / "gil.md").is_file() or (path / "serial" / RESULTS).is_file()
    part = Part(path, "gil" if gil else "run", title)
    workers = results.workload.workers
    part.phases.append(Phase("", f"{workers} workers" if gil else "Table", results))
    counts: dict[str, int] = {}
    _attach_raw(path, results, counts)
    _image(part, "plots/timeline.png")
    if gil:
        part.markdown = _text(path / "gil.md")
        if part.markdown is None:
            part.missing.append("gil.md is missing: the reading generated from the figures is not shown")
        for key in GIL_PHASES:
            if (path / key / RESULTS).is_file():
                phase = load_results(path / key / RESULTS)
                _attach_raw(path / key, phase, counts)
                rtt = phase.network.rtt_ms if phase.network else None
                title = (
                    f"{workers} workers at rtt {rtt} ms"
                    if key == "rtt"
                    else f"serial baseline (1 worker x {phase.workload.requests} requests)"
                )
                part.phases.append(Phase(key, title, phase))
        _image(part, "rtt/plots/timeline-rtt.png")
    _raw_notes(part, counts)
    return part


def _sweep(path: Path, title: str) -> Part:
    part = Part(path, "sweep", title, markdown=_text(path / "sweep.md"))
    found: dict[str, Phase] = {}
    counts: dict[str, int] = {}
    for file in sorted((path / "points").glob(f"*/{RESULTS}")):
        results = load_results(file)
        dimension = results.sweep.dimension if results.sweep else file.parent.name.split("-", 1)[0]
        if part.dimension not in (None, dimension):
            raise SetupError(f"{path} mixes the sweeps of {part.dimension} and {dimension}")
        part.dimension = dimension
        value = results.sweep.value if results.sweep else file.parent.name.split("-", 1)[-1]
        _attach_raw(file.parent, results, counts)
        shown = number(value) if isinstance(value, float) else value
        found[str(value)] = Phase(f"points/{file.parent.name}", f"{dimension} = {shown}", results, value)
    if part.dimension is None:
        raise SetupError(f"{path}/points holds no results.json")
    part.phases = [found[v] for v in _point_order(part.markdown, part.dimension, list(found))]
    _raw_notes(part, counts)
    if part.markdown is None:
        part.missing.append("sweep.md is missing: the sweep's summary tables and reading are not shown")
    _linked_images(part)
    return part


def _soak(path: Path, title: str) -> Part:
    doc = _read_json(path / "soak.json")
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise SetupError(f"{path / 'soak.json'} is not a clientbench soak document")
    part = Part(path, "soak", title, markdown=_text(path / "soak.md"), soak=doc)
    if part.markdown is None:
        part.missing.append("soak.md is missing: the soak table is not shown")
    return part


def _kind(path: Path) -> str | None:
    if (path / RESULTS).is_file():
        return "run"
    if (path / "points").is_dir():
        return "sweep"
    if (path / "soak.json").is_file():
        return "soak"
    return None


def _part(path: Path, title: str) -> Part:
    kind = _kind(path)
    if kind == "sweep":
        return _sweep(path, title)
    if kind == "soak":
        return _soak(path, title)
    return _run(path, title)


#: sub-folders that belong to their parent's part (a GIL report's phases, the drivers' files)
OWN = {"serial", "rtt", "points", "raw", "logs", "plots"}


def load(path: Path) -> list[Part]:
    """The parts of a results folder: its own, then one per results sub-folder (the GIL report's open-loop
    ladder, or every folder of a collection such as results/reference/tls); SetupError when there is none."""
    if path.is_file() and path.name == RESULTS:
        path = path.parent
    if not path.exists():
        raise SetupError(f"no such folder: {path}")
    if not path.is_dir():
        raise SetupError(f"{path} is not a results folder")
    own = [_part(path, path.name)] if _kind(path) is not None else []
    subs = sorted(
        p for p in path.iterdir() if p.is_dir() and not p.is_symlink() and p.name not in OWN and _kind(p) is not None
    )
    if not own and not subs:
        raise SetupError(f"{path} holds no clientbench results (no results.json, points/ or soak.json)")
    return own + [_part(p, f"{path.name}/{p.name}" if own else p.name) for p in subs]
