"""`clientbench report RESULTS_DIR [--compare OTHER_DIR] [-o FILE]`: the HTML report of any results folder (a
run, a sweep, a GIL report, a soak, or a folder of them), or the compare view of two runs. The folder is read back
(folder.py) into the parts its command would have shown (report/parts.py), which the HTML exporter renders; every
other command writes the same page into its own folder as report.html."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import arguments
from ..errors import SetupError
from ..options.settings import report_file

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from ..report.base import Report
    from . import Command


def add_parser(sub: Subparsers, command: Command) -> None:
    p = sub.add_parser(
        command.name,
        help=command.help,
        description="Render one self-contained HTML page (no network needed) of a results folder: a run, a "
        "sweep, a GIL report, a soak, or a folder of them. The tables sort by any column and show each "
        "figure's min-max over the repeats; Bench and CPU per request with their min-max, latency by "
        "percentile (rows toggled in the legend), the GIL timeline and reading, sweep curves, the "
        "environment. Every command writes this page into its folder as report.html. With --compare, "
        "the ratio B / A per row, flagged by the rules of `clientbench compare`.",
    )
    p.add_argument("results", type=Path, metavar="RESULTS_DIR", help="a results folder (A with --compare)")
    p.add_argument("--compare", type=Path, metavar="OTHER_DIR", help="the run to compare with (B: ratios B / A)")
    arguments.add_export_option(p)
    p.add_argument(
        "-o",
        "--out",
        type=Path,
        metavar="FILE",
        help="the HTML file to write (default RESULTS_DIR/report.html, with --compare RESULTS_DIR/compare.html)",
    )


@dataclass(frozen=True)
class ReportOptions:
    results: Path
    compare: Path | None
    out: Path  # the HTML file
    exports: tuple[str, ...] = ()  # --export: the dashboard files written into the results folder


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> ReportOptions:
    out = report_file(args.results, args.compare, args.out, default_out(args.results, args.compare))
    return ReportOptions(args.results, args.compare, out, arguments.exports(args))


def run(o: ReportOptions) -> int:
    return report(o.results, o.compare, o.out, o.exports)


#: the compare view's file when -o is not given (report.html stays the folder's own page)
COMPARE_FILE = "compare.html"


def default_out(results: Path, compare: Path | None) -> Path:
    from ..report.export.html import FILE

    folder = results.parent if results.is_file() else results
    return folder / (COMPARE_FILE if compare is not None else FILE)


def folder_report(path: Path, compare: Path | None = None) -> Report:
    """The page's report of one results folder, or of two runs compared (`compare` is B: ratios are B / A)."""
    from ..analysis.compare import compare_rows
    from ..folder import load, load_results
    from ..report.base import Report
    from ..report.compare import comparison

    if compare is None:
        return Report("report", parts=load(path), title=f"clientbench: {path.resolve().name}")
    a, b = load_results(_results_file(path)), load_results(_results_file(compare))
    parts_a, parts_b = load(path), load(compare)
    for p in parts_a:
        p.title = f"A: {p.title}"
    for p in parts_b:
        p.title = f"B: {p.title}"
    return Report(
        "report",
        parts=[*parts_a, *parts_b],
        compare=comparison(str(path), str(compare), compare_rows(a, b)),
        title=f"clientbench: {path.name} vs {compare.name}",
    )


def _results_file(path: Path) -> Path:
    from ..folder import RESULTS

    return path / RESULTS if path.is_dir() else path


def dashboards(path: Path, formats: tuple[str, ...]) -> list[Path]:
    """The dashboard files of a run, cost or cold-start folder, written into it (--export)."""
    from ..folder import RESULTS, load_results
    from ..report.base import Report
    from ..report.export import export

    folder = path.parent if path.is_file() else path
    own = [folder / name for name in ("cost.json", "cold.json") if (folder / name).is_file()]
    if own:
        try:
            doc = json.loads(own[0].read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SetupError(f"cannot read {own[0]}: {exc}") from None
        source = Report(own[0].stem, document=doc)
    else:
        source = Report("table", results=load_results(folder / RESULTS))
    written = export(source, folder, formats)
    if not written:
        raise SetupError(f"{folder} has no row with figures to export")
    return written


def report(results: Path, compare: Path | None = None, out: Path | None = None, exports: tuple[str, ...] = ()) -> int:
    """The page of `results` (or of it and `compare`) into `out` (checked by the options layer; default beside the
    results), and the dashboard files of `exports`."""
    from ..report.export import export

    target = out if out is not None else default_out(results, compare)
    page = folder_report(results, compare)
    page.html_file = target
    try:
        export(page, target.parent, ("html",))
    except OSError as exc:
        raise SetupError(f"cannot write {target}: {exc.strerror or exc}") from None
    print(f"report: {target}")
    for path in dashboards(results, exports) if exports else []:
        print(f"export: {path}")
    return 0
