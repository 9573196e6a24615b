"""`clientbench compare A B [--fail-on SPEC] [--rows PATTERNS] [-o DIR]`: two runs (or two cost or cold folders) row by
row, the changes beyond the measured noise flagged (analysis/compare.py, shared with the HTML report's compare view);
with --fail-on, a gate that exits 1 when a row got worse than a threshold (analysis/gate.py). A side may be several
run folders, comma-separated, of the same workload: their repeats are pooled (runs taken in turns, e.g. pinned and
unpinned alternately, so that a slow spell of the machine falls on both sides)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SetupError
from ..options.settings import check_gate

if TYPE_CHECKING:
    from ..analysis.gate import Threshold
    from ..arguments import Subparsers
    from ..model import Results
    from . import Command


def add_parser(sub: Subparsers, command: Command) -> None:
    p = sub.add_parser(
        command.name,
        help=command.help,
        description="Compare two results folders (or results.json files): Bench ratio B/A "
        "per row, flagged when the two runs' Bench ranges (min-max over the repeats) do not overlap; "
        "a verdict needs at least 4 repeats in each run. Two cost folders: each count per request in A and B. "
        "With --fail-on, a gate for CI: exit 1 when a row got worse beyond its threshold (docs/gate.md).",
    )
    p.add_argument(
        "a",
        type=Path,
        help="baseline: a run folder (or its results.json), several comma-separated run folders of one workload "
        "(their repeats pooled), or a cost folder",
    )
    p.add_argument("b", type=Path, help="new: as A")
    p.add_argument(
        "--fail-on",
        metavar="SPEC",
        help="a gate: exit 1 when a row got worse than a threshold, e.g. bench=10%%,p99=20%% for runs (beyond the "
        "measured noise too; needs 4 repeats a side) or instructions=1%%,syscalls=0%% for cost folders; figures: "
        "bench lmean mean p50 p99 p999 max cpu rss rps, instructions syscalls allocations",
    )
    p.add_argument("--rows", metavar="PATTERNS", help="with --fail-on: judge only these rows (names or globs)")
    p.add_argument(
        "--scope",
        choices=("counted", "process"),
        default="counted",
        help="two cost folders: compare each row's counts as counted (its request threads; default) or the whole "
        "process's (an async client's loop and runtime threads included)",
    )
    p.add_argument("-o", "--out", type=Path, metavar="DIR", help="also write the comparison to DIR/compare.md")


@dataclass(frozen=True)
class CompareOptions:
    a: Path
    b: Path
    thresholds: tuple[Threshold, ...] = ()  # --fail-on
    patterns: tuple[str, ...] = ()  # --rows
    rows: str | None = None  # --rows as given, for its message
    out: Path | None = None
    scope: str = "counted"  # --scope: two cost folders' counts as counted or the whole process's


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> CompareOptions:
    from ..analysis.gate import gated_patterns, parse_fail_on

    thresholds = parse_fail_on(args.fail_on) if args.fail_on is not None else []
    patterns = gated_patterns(args.rows)
    check_gate(thresholds, patterns)
    return CompareOptions(args.a, args.b, tuple(thresholds), tuple(patterns), args.rows, args.out, args.scope)


def run(o: CompareOptions) -> int:
    return compare(o.a, o.b, o.thresholds, o.patterns, o.out, rows=o.rows, scope=o.scope)


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
    from ..schema import COST_ID

    return _document(path, "cost.json", COST_ID)


def _cold(path: Path) -> dict[str, Any] | None:
    """A cold-start folder's cold.json (or the file itself); None when `path` is not one."""
    from ..schema import COLD_ID

    return _document(path, "cold.json", COLD_ID)


def pooled(spec: Path) -> Results:
    """A run folder, or several comma-separated ones of the same workload: each row's repeats from all of them."""
    from ..model import Results

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
    a_path: Path,
    b_path: Path,
    thresholds: Sequence[Threshold] = (),
    patterns: Sequence[str] = (),
    out: Path | None = None,
    *,
    rows: str | None = None,
    scope: str = "counted",
) -> int:
    """A and B row by row; with `thresholds` (--fail-on) the gate's verdict on the rows of `patterns` (--rows, as
    given: `rows`), exit 1 when one got worse. `scope`: which counts of two cost folders (--scope)."""
    from ..analysis.compare import compare_rows, summary
    from ..analysis.gate import Check, gated, judge_colds, judge_costs, judge_runs
    from ..report import Report, Text
    from ..report.compare import colds_table, costs_table, gate_summary, gate_table, runs_table
    from ..report.export import export

    several = "," in str(a_path) or "," in str(b_path)
    cost_a, cost_b = (None, None) if several else (_cost(a_path), _cost(b_path))
    cold_a, cold_b = (None, None) if several else (_cold(a_path), _cold(b_path))
    if (cost_a is None) != (cost_b is None) or (cold_a is None) != (cold_b is None):
        raise SetupError(
            f"compare a run with a run, a cost folder with a cost folder, a cold folder with a cold folder ({a_path}, "
            f"{b_path})"
        )
    if scope != "counted" and cost_a is None:
        raise SetupError(f"--scope {scope}: only two cost folders have counts of the whole process")
    title = f"B / A   (A = {a_path}, B = {b_path})"
    checks: list[Check] = []
    if cold_a is not None and cold_b is not None:
        blocks: list[Any] = [colds_table(cold_a, cold_b, title)]
        names = [r["name"] for r in cold_a["rows"]]
        if thresholds:
            checks = judge_colds(cold_a, cold_b, thresholds, patterns)
    elif cost_a is not None and cost_b is not None:
        if scope == "process":
            title += "   (whole process)"
        blocks = [costs_table(cost_a, cost_b, title, scope)]
        names = [r["name"] for r in cost_a["rows"]]
        if thresholds:
            checks = judge_costs(cost_a, cost_b, thresholds, patterns, scope)
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
