"""`clientbench history FOLDER...`: every row's figures across runs, for a trend: history.csv (one line per run and
row, every median figure, the run's time and commit), history.md (Bench, P99 and CPU per request per row and run)
and the HTML report, whose charts draw any figure of every row against the runs (a history is a sweep over runs:
report/parts.py's sweep part). The runs are ordered by when they were made."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from . import Command


def add_parser(sub: Subparsers, command: Command) -> None:
    p = sub.add_parser(
        command.name,
        help=command.help,
        description="Read run folders (or folders of them, e.g. results/) and write history.csv (one line per run "
        "and row: when, which commit, every median figure), history.md (Bench, P99, CPU per request per row and "
        "run) and report.html, whose charts draw any figure of every row against the runs, oldest first.",
    )
    p.add_argument("folders", nargs="+", type=Path, metavar="FOLDER", help="run folders, or folders of them")
    p.add_argument("-o", "--out", type=Path, default=None, help="where the history folder goes (default ./results)")


@dataclass(frozen=True)
class HistoryOptions:
    folders: tuple[Path, ...]
    out: Path | None = None  # the parent of the history folder (default: results/)


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> HistoryOptions:
    return HistoryOptions(tuple(args.folders), args.out)


def run(o: HistoryOptions) -> int:
    return history(o.folders, o.out)


def history(paths: Sequence[Path], out: Path | None = None) -> int:
    import json

    from ..execution.testbed import link_latest, new_results_dir
    from ..files import write_atomic
    from ..folder import history_runs
    from ..report.export import export
    from ..report.history import document, history_csv
    from ..report.parts import sweep_part

    runs = history_runs(paths)
    folder = new_results_dir(out, "history")
    write_atomic(folder / "history.csv", history_csv(runs))
    report = document(runs)
    index = {"runs": [{"label": label, "folder": str(f.resolve())} for label, f, _ in runs]}
    write_atomic(folder / "history.json", json.dumps(index, indent=2) + "\n")
    report.parts = [sweep_part(folder, folder.name, "run", [(label, r) for label, _, r in runs], report)]
    export(report, folder, ("markdown", "plots", "html"))
    link_latest(folder)
    print(f"history of {len(runs)} run(s): {folder / 'history.csv'}, {folder / 'report.html'}")
    return 0
