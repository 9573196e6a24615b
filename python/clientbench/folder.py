"""A results folder read back from disk, whatever command wrote it: the same inputs the command had, given to the
same builders (report/parts.py), so that `clientbench report DIR` shows what the command's own report.html shows.

A run folder has results.json (and raw/ with the drivers' documents, plots/); a GIL report adds gil.json and the
serial/, rtt/, rtt-h3/, shared/, shared-h2/ and open-loop/ phases; a sweep has sweep.json and
points/<dimension>-<value>/results.json; a soak has soak.json. A folder of such folders (results/reference/tls)
is read as one part per sub-folder. Readings and summaries are computed anew from the figures (analysis/), never
parsed back from the Markdown the command wrote. Whatever is missing or unreadable becomes one line in the part's
`missing` (the page says it) or, when nothing is left to show, one SetupError line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .analysis.gil import GilFigures
from .analysis.profile import ProfileError, Summary, read_folded, summarize
from .dimensions import DIMENSIONS
from .errors import SetupError
from .model import READS, SCHEMA_ID, Results, Row
from .registry.shipped import CLIENTS
from .report import cold as cold_document
from .report import cost as cost_document
from .report import gil as gil_document
from .report import history as history_document
from .report import profile as profile_document
from .report import rates as rate_document
from .report import soak as soak_document
from .report import sweep as sweep_document
from .report.base import Part
from .report.parts import cold_part, cost_part, gil_part, profile_part, run_part, soak_part, sweep_part
from .schema import COLD_ID, PROFILE_ID

RESULTS = "results.json"
#: the GIL report's phases besides the W-worker one at the top, by folder
GIL_PHASES = ("serial", "rtt", "rtt-h3", "shared", "shared-h2")
#: the plots a command drew that the page shows where the raw samples are not in the folder
TIMELINES = ("plots/timeline.png", "rtt/plots/timeline-rtt.png")


def _read_json(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SetupError(f"no results at {file}") from None
    except (OSError, ValueError) as exc:
        raise SetupError(f"cannot read {file}: {exc}") from None


def _index(file: Path, schema: str, part: Part) -> Mapping[str, Any]:
    """A command's index document (sweep.json, gil.json); empty, with a line in `missing`, when absent or of another
    version (a folder written before clientbench recorded it)."""
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        part.missing.append(f"{file.name} ({schema}) is not in this folder: its settings are taken as the defaults")
        return {}
    return doc


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


def _phase(path: Path, counts: dict[str, int]) -> Results:
    results = load_results(path / RESULTS)
    _attach_raw(path, results, counts)
    return results


def _notes(part: Part, counts: dict[str, int]) -> Part:
    if counts.get("absent"):
        part.missing.append(
            f"{counts['absent']} of the drivers' raw documents are not in this folder (raw/ was not kept): the "
            "latency curves are drawn through the table's percentiles, and the timelines are the plots the "
            "command drew, where it kept them"
        )
    if counts.get("unreadable"):
        part.missing.append(f"{counts['unreadable']} raw document(s) under raw/ could not be read")
    for relative in TIMELINES:
        file = part.path / relative
        if file.is_file():
            part.images[relative] = file.read_bytes()
    return part


def _run(path: Path, title: str) -> Part:
    counts: dict[str, int] = {}
    results = _phase(path, counts)
    if (path / "gil.json").is_file() or (path / "gil.md").is_file() or (path / "serial" / RESULTS).is_file():
        return _gil(path, title, results, counts)
    return _notes(run_part(path, title, results), counts)


def _interpreters(rows: list[Row]) -> list[str | None]:
    """The interpreters of a GIL report's Python rows, from their names (`py-beast-held@3.13t`)."""
    labels: list[str | None] = [None]
    for r in rows:
        label = r.client.name.partition("@")[2]
        if label and label not in labels:
            labels.append(label)
    return labels


def _gil(path: Path, title: str, top: Results, counts: dict[str, int]) -> Part:
    phases = {"": top} | {k: _phase(path / k, counts) for k in GIL_PHASES if (path / k / RESULTS).is_file()}
    points = sorted(
        ((r.sweep.value if r.sweep else r.workload.rate or 0.0), r)
        for r in (load_results(f) for f in (path / "open-loop" / "points").glob(f"*/{RESULTS}"))
    )
    part = Part(path, "gil", title)
    index = _index(path / "gil.json", "clientbench.gil/1", part)
    rtt, rtt_h3 = phases.get("rtt"), phases.get("rtt-h3")
    figures = GilFigures(
        workload=top.workload,
        serial_requests=phases["serial"].workload.requests if "serial" in phases else top.workload.requests,
        serial=phases["serial"].rows if "serial" in phases else [],
        parallel=top.rows,
        network=index.get("network") or (top.network.describe() if top.network else "loopback"),
        command=index.get("command") or " ".join(top.command),
        rtt_ms=index.get("rtt_ms", rtt.network.rtt_ms if rtt is not None and rtt.network else 0),
        rtt_network=rtt.network.describe() if rtt is not None and rtt.network else None,
        at_rtt=rtt.rows if rtt is not None else [],
        rtt_h3_network=rtt_h3.network.describe(quic=True) if rtt_h3 is not None and rtt_h3.network else None,
        at_rtt_h3=rtt_h3.rows if rtt_h3 is not None else [],
        interpreters=index.get("interpreters") or _interpreters(top.rows),
        pauses=index.get("pauses") or {},
        progress=index.get("progress") or {},
        open_points=[(float(v), r.rows) for v, r in points],
        open_workload=points[0][1].workload if points else None,
        slo_ms=index.get("slo_ms", 10.0),
        shared=phases["shared"].rows if "shared" in phases else [],
        shared_h2=phases["shared-h2"].rows if "shared-h2" in phases else [],
    )
    built = gil_part(path, title, gil_document.document(figures), phases, figures)
    built.missing = part.missing
    return _notes(built, counts)


def _value_key(value: Any) -> tuple[int, float, str]:
    return (0, float(value), "") if isinstance(value, (int, float)) else (1, 0.0, str(value))


def _sweep(path: Path, title: str) -> Part:
    counts: dict[str, int] = {}
    found: dict[str, tuple[Any, Results]] = {}
    dimension: str | None = None
    for file in sorted((path / "points").glob(f"*/{RESULTS}")):
        results = _phase(file.parent, counts)
        point_dim = results.sweep.dimension if results.sweep else file.parent.name.split("-", 1)[0]
        if dimension not in (None, point_dim):
            raise SetupError(f"{path} mixes the sweeps of {dimension} and {point_dim}")
        dimension = point_dim
        value = results.sweep.value if results.sweep else file.parent.name.split("-", 1)[-1]
        found[str(value)] = (value, results)
    if dimension is None:
        raise SetupError(f"{path}/points holds no results.json")
    probe = Part(path, "sweep", title)
    index = _index(path / "sweep.json", "clientbench.sweep/1", probe)
    order = [str(v) for v in index.get("points", []) if str(v) in found]
    # without sweep.json: the order the points were written in (each point's results.json says when)
    order += sorted((k for k in found if k not in order), key=lambda k: (found[k][1].created, _value_key(found[k][0])))
    points = [found[k] for k in order]
    measured = [(v, r.rows) for v, r in points]
    base = points[0][1].workload
    if dimension in DIMENSIONS and DIMENSIONS[dimension].ladder:
        every = bool(index.get("every_rate", False))
        summary = rate_document.summary(measured, float(index.get("slo_ms") or 10.0), base, every_rate=every)
    elif dimension in DIMENSIONS:
        repeat = int(index.get("repeat") or base.repeat)
        summary = sweep_document.summary(DIMENSIONS[dimension], measured, repeat)
    else:
        raise SetupError(f"{path}: a sweep over {dimension!r}, which this clientbench does not know")
    part = sweep_part(path, title, dimension, points, summary)
    part.missing = probe.missing
    return _notes(part, counts)


def _soak(path: Path, title: str) -> Part:
    doc = _read_json(path / "soak.json")
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise SetupError(f"{path / 'soak.json'} is not a clientbench soak document")
    return soak_part(path, title, doc, soak_document.summary(doc))


def _cost(path: Path, title: str) -> Part:
    doc = _read_json(path / "cost.json")
    if not isinstance(doc, dict) or doc.get("schema") != "clientbench.cost/1" or not isinstance(doc.get("rows"), list):
        raise SetupError(f"{path / 'cost.json'} is not a clientbench cost document")
    return cost_part(path, title, doc, cost_document.summary(doc))


def _cold(path: Path, title: str) -> Part:
    """A cold-start folder: cold.md's document made anew from cold.json (its reading computed again)."""
    doc = _read_json(path / "cold.json")
    if not isinstance(doc, dict) or doc.get("schema") != COLD_ID or not isinstance(doc.get("rows"), list):
        raise SetupError(f"{path / 'cold.json'} is not a clientbench cold-start document")
    return cold_part(path, title, doc, cold_document.document(doc))


def _profile(path: Path, title: str) -> Part:
    """A profile folder: profile.json's rows, each row's top frames and shares computed anew from its folded
    stacks, its flame graph as drawn."""
    doc = _read_json(path / "profile.json")
    if not isinstance(doc, dict) or doc.get("schema") != PROFILE_ID or not isinstance(doc.get("rows"), list):
        raise SetupError(f"{path / 'profile.json'} is not a clientbench profile document")
    missing: list[str] = []
    summaries: dict[str, Summary] = {}
    flames: dict[str, bytes] = {}
    for row in doc["rows"]:
        files = row.get("files") or {}
        if row.get("status") != "ok" or "folded" not in files or "svg" not in files:
            continue
        try:
            summaries[row["name"]] = summarize(read_folded((path / files["folded"]).read_text(encoding="utf-8")))
            flames[files["svg"]] = (path / files["svg"]).read_bytes()
        except (OSError, ProfileError) as exc:
            missing.append(f"{row['name']}: {exc}")
    part = profile_part(path, title, doc, profile_document.document(doc, summaries), flames)
    part.missing = missing
    return part


def history_runs(paths: Sequence[Path]) -> list[tuple[str, Path, Results]]:
    """(label, folder, results) of every run folder given (or found one level below a folder given), by time."""
    found: list[tuple[Path, Results]] = []
    for path in paths:
        if (path / RESULTS).is_file() or path.name == RESULTS:
            folder = path.parent if path.name == RESULTS else path
            found.append((folder, load_results(folder / RESULTS)))
        elif path.is_dir():
            subs = sorted(p for p in path.iterdir() if (p / RESULTS).is_file() and not p.is_symlink())
            found += [(p, load_results(p / RESULTS)) for p in subs]
        else:
            raise SetupError(f"{path}: not a run folder (no results.json)")
    if not found:
        raise SetupError("history: no run folder among the paths given (each holds a results.json)")
    by_folder: dict[Path, tuple[Path, Results]] = {}
    for folder, results in found:  # a folder named twice (a glob and results/latest) counts once
        by_folder.setdefault(folder.resolve(), (folder, results))
    unique = sorted(by_folder.values(), key=lambda fr: (fr[1].created, str(fr[0])))
    out = []
    for folder, results in unique:
        commit = ((results.environment.get("git") or {}).get("commit") or "")[:8]
        label = results.created.replace("T", " ")[:16] + (f" {commit}" if commit else "")
        out.append((label, folder, results))
    labels = [label for label, _, _ in out]
    return [(f"{label} ({i + 1})" if labels.count(label) > 1 else label, f, r) for i, (label, f, r) in enumerate(out)]


def _history(path: Path, title: str) -> Part:
    """A history folder: the runs its history.json names, read again (history.md is not parsed)."""

    index = _read_json(path / "history.json")
    folders = [Path(r["folder"]) for r in (index.get("runs") or []) if isinstance(r, dict) and "folder" in r]
    present = [f for f in folders if (f / RESULTS).is_file()]
    if not present:
        raise SetupError(f"{path / 'history.json'}: none of the run folders it names is still there")
    runs = history_runs(present)
    report = history_document.document(runs)
    part = sweep_part(path, title, "run", [(label, r) for label, _, r in runs], report)
    gone = len(folders) - len(present)
    if gone:
        part.missing.append(f"{gone} of the {len(folders)} run folders history.json names are gone")
    return part


def _kind(path: Path) -> str | None:
    if (path / RESULTS).is_file():
        return "run"
    if (path / "history.json").is_file():
        return "history"
    if (path / "cost.json").is_file():
        return "cost"
    if (path / "cold.json").is_file():
        return "cold"
    if (path / "profile.json").is_file():
        return "profile"
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
    if kind == "cost":
        return _cost(path, title)
    if kind == "cold":
        return _cold(path, title)
    if kind == "profile":
        return _profile(path, title)
    if kind == "history":
        return _history(path, title)
    return _run(path, title)


#: sub-folders that belong to their parent's part (a GIL report's phases, the drivers' files)
OWN = {*GIL_PHASES, "points", "raw", "logs", "plots"}


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
        raise SetupError(
            f"{path} holds no clientbench results (no results.json, points/, soak.json, cost.json, cold.json or "
            "profile.json)"
        )
    return own + [_part(p, f"{path.name}/{p.name}" if own else p.name) for p in subs]
