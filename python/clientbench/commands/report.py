"""`clientbench report RESULTS_DIR [--compare OTHER_DIR] [-o FILE]`: the HTML report of any results folder (a
run, a sweep, a GIL report, a soak, or a folder of them), or the compare view of two runs; what it shows:
report/export/html. Every other command writes the same page into its own folder as report.html."""

from __future__ import annotations

from pathlib import Path

from ..errors import SetupError
from ..report.export.html import FILE, write

#: the compare view's file when -o is not given (report.html stays the folder's own page)
COMPARE_FILE = "compare.html"


def default_out(results: Path, compare: Path | None) -> Path:
    folder = results.parent if results.is_file() else results
    return folder / (COMPARE_FILE if compare is not None else FILE)


def report(results: Path, compare: Path | None = None, out: Path | None = None) -> int:
    for given in (results, compare):
        if given is not None and not given.exists():
            raise SetupError(f"no such folder: {given}")
    target = out if out is not None else default_out(results, compare)
    if target.is_dir():
        raise SetupError(f"-o {target} is a folder: give the HTML file to write")
    if not target.parent.is_dir():
        raise SetupError(f"cannot write {target}: no folder {target.parent}")
    try:
        write(results, target, compare)
    except OSError as exc:
        raise SetupError(f"cannot write {target}: {exc.strerror or exc}") from None
    print(f"report: {target}")
    return 0
