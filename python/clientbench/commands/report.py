"""`clientbench report RESULTS_DIR [--compare OTHER_DIR] [-o FILE]`: the HTML report of any results folder (a
run, a sweep, a GIL report, a soak, or a folder of them), or the compare view of two runs. The folder is read back
(folder.py) into the parts its command would have shown (report/parts.py), which the HTML exporter renders; every
other command writes the same page into its own folder as report.html."""

from __future__ import annotations

import json
from pathlib import Path

from ..analysis.compare import compare_rows
from ..errors import SetupError
from ..folder import RESULTS, load, load_results
from ..report.base import Report
from ..report.compare import comparison
from ..report.export import export
from ..report.export.html import FILE

#: the compare view's file when -o is not given (report.html stays the folder's own page)
COMPARE_FILE = "compare.html"


def default_out(results: Path, compare: Path | None) -> Path:
    folder = results.parent if results.is_file() else results
    return folder / (COMPARE_FILE if compare is not None else FILE)


def folder_report(path: Path, compare: Path | None = None) -> Report:
    """The page's report of one results folder, or of two runs compared (`compare` is B: ratios are B / A)."""
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
    return path / RESULTS if path.is_dir() else path


def dashboards(path: Path, formats: tuple[str, ...]) -> list[Path]:
    """The dashboard files of a run, cost or cold-start folder, written into it (--export)."""
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
    for given in (results, compare):
        if given is not None and not given.exists():
            raise SetupError(f"no such folder: {given}")
    target = out if out is not None else default_out(results, compare)
    if target.is_dir():
        raise SetupError(f"-o {target} is a folder: give the HTML file to write")
    if not target.parent.is_dir():
        raise SetupError(f"cannot write {target}: no folder {target.parent}")
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
