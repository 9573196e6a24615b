"""`clientbench compare A B [--fail-on SPEC] [--rows PATTERNS] [-o DIR]`: two runs (or two cost or cold folders) row by
row, the changes beyond the measured noise flagged (analysis/compare.py, shared with the HTML report's compare view);
with --fail-on, a gate that exits 1 when a row got worse than a threshold (analysis/gate.py). A side may be several
run folders, comma-separated, of the same workload: their repeats are pooled (runs taken in turns, e.g. pinned and
unpinned alternately, so that a slow spell of the machine falls on both sides)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..analysis.compare import MIN_REPEATS, compare_rows, summary
from ..analysis.gate import Check, gated, gated_patterns, judge_colds, judge_costs, judge_runs, parse_fail_on
from ..errors import SetupError
from ..model import Results
from ..report import Report, Text
from ..report.compare import colds_table, costs_table, gate_summary, gate_table, runs_table
from ..report.export import export
from ..schema import COLD_ID, COST_ID

__all__ = ["MIN_REPEATS", "compare"]


def _document(path: Path, name: str, schema: str) -> dict[str, Any] | None:
    """A folder's own document (cost.json, cold.json), or the file itself; None when `path` is not one."""
    file = path / name if path.is_dir() else path
    if not file.is_file() or file.name != name:
        return None
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SetupError(f"cannot read {file}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        raise SetupError(f"{file} is not a clientbench {name} ({schema})")
    return doc


def _cost(path: Path) -> dict[str, Any] | None:
    """A cost folder's cost.json (or the file itself); None when `path` is not one."""
    return _document(path, "cost.json", COST_ID)


def _cold(path: Path) -> dict[str, Any] | None:
    """A cold-start folder's cold.json (or the file itself); None when `path` is not one."""
    return _document(path, "cold.json", COLD_ID)


def pooled(spec: Path) -> Results:
    """A run folder, or several comma-separated ones of the same workload: each row's repeats from all of them."""
    paths = [Path(p) for p in str(spec).split(",") if p]
    if not paths:
        raise SetupError(f"no results folder in {str(spec)!r}")
    first = Results.load(paths[0])
    rows = {r.client.name: r for r in first.rows}
    for path in paths[1:]:
        more = Results.load(path)
        if more.workload.describe() != first.workload.describe():
            raise SetupError(
                f"{path} ran another workload ({more.workload.describe()}) than {paths[0]} "
                f"({first.workload.describe()}): only runs of one workload pool"
            )
        for row in more.rows:
            if row.client.name in rows:
                rows[row.client.name].runs.extend(row.runs)
            else:
                first.rows.append(rows.setdefault(row.client.name, row))
    return first


def compare(
    a_path: Path, b_path: Path, fail_on: str | None = None, rows: str | None = None, out: Path | None = None
) -> int:
    thresholds = parse_fail_on(fail_on) if fail_on is not None else []
    patterns = gated_patterns(rows)
    if patterns and not thresholds:
        raise SetupError("--rows chooses the rows the gate judges: it goes with --fail-on")
    several = "," in str(a_path) or "," in str(b_path)
    cost_a, cost_b = (None, None) if several else (_cost(a_path), _cost(b_path))
    cold_a, cold_b = (None, None) if several else (_cold(a_path), _cold(b_path))
    if (cost_a is None) != (cost_b is None) or (cold_a is None) != (cold_b is None):
        raise SetupError(
            f"compare a run with a run, a cost folder with a cost folder, a cold folder with a cold folder ({a_path}, "
            f"{b_path})"
        )
    title = f"B / A   (A = {a_path}, B = {b_path})"
    checks: list[Check] = []
    if cold_a is not None and cold_b is not None:
        blocks: list[Any] = [colds_table(cold_a, cold_b, title)]
        names = [r["name"] for r in cold_a["rows"]]
        if thresholds:
            checks = judge_colds(cold_a, cold_b, thresholds, patterns)
    elif cost_a is not None and cost_b is not None:
        blocks = [costs_table(cost_a, cost_b, title)]
        names = [r["name"] for r in cost_a["rows"]]
        if thresholds:
            checks = judge_costs(cost_a, cost_b, thresholds, patterns)
    else:
        a, b = pooled(a_path), pooled(b_path)
        compared = compare_rows(a, b)
        blocks = [runs_table(compared, title), Text(summary(compared))]
        names = [r.client.name for r in a.rows]
        if thresholds:
            checks = judge_runs(a, b, thresholds, patterns)
    if patterns and not any(gated(n, patterns) for n in names):
        raise SetupError(f"--rows {rows!r} matches no row of {a_path}")
    if thresholds:
        blocks += [gate_table(checks), Text(gate_summary(checks))]
    export(Report("compare", blocks), None, ("terminal",))
    if out is not None:  # compare.md, for a document to quote
        out.mkdir(parents=True, exist_ok=True)
        export(Report("compare", blocks), out, ("markdown",))
    return 1 if any(c.failed for c in checks) else 0
