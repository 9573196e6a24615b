"""`report.html`: a results folder as one self-contained page (report/export/html/page.py says what it shows).

Everything is inlined: plotly.js (from the pinned `plotly` package), the page's script and styles, and the data,
so the file opens with no network. The exporter renders the folder it writes into from what is on disk, so
it runs after the other exporters of a command; `clientbench report` renders any folder the same way."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import jinja2

from ....analysis.compare import compare_rows, summary
from ....errors import SetupError
from ....files import write_atomic
from ....folder import RESULTS, load, load_results
from ...base import Report
from ..registry import register
from .page import Page, build, compare_view

FILE = "report.html"


def _asset(name: str) -> str:
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


def plotly_js() -> str:
    try:
        return (resources.files("plotly") / "package_data" / "plotly.min.js").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        raise SetupError("the HTML report needs the plotly package (pinned in python/requirements.txt)") from None


def _template() -> jinja2.Template:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.from_string(_asset("report.html.j2"))


def render(view: Page) -> str:
    """The page as one HTML document with every script, style and datum inlined."""
    return _template().render(
        page=view,
        data={"charts": view.charts},
        plotly=plotly_js(),
        script=_asset("report.js"),
        style=_asset("report.css"),
    )


def folder_page(paths: Sequence[Path], compare: Path | None = None) -> Page:
    """The page of one results folder, or the compare view of two runs (`compare` is B: ratios are B / A)."""
    if compare is None:
        parts = load(paths[0])
        title = f"clientbench: {paths[0].resolve().name}"
        view, _ = build(parts, title)
        return view
    a, b = load_results(_results_file(paths[0])), load_results(_results_file(compare))
    parts_a, parts_b = load(paths[0]), load(compare)
    for p in parts_a:
        p.title = f"A: {p.title}"
    for p in parts_b:
        p.title = f"B: {p.title}"
    view, builder = build([*parts_a, *parts_b], f"clientbench: {paths[0].name} vs {compare.name}")
    rows = compare_rows(a, b)
    view.compare = compare_view(str(paths[0]), str(compare), rows, summary(rows), builder)
    view.charts = builder.charts
    return view


def _results_file(path: Path) -> Path:
    return path / RESULTS if path.is_dir() else path


def write(path: Path, out: Path, compare: Path | None = None) -> Path:
    """Render `path` (and `compare`) into the file `out`; SetupError with one line when there is nothing to show."""
    write_atomic(out, render(folder_page([path], compare)))
    return out


def error_page(path: Path, message: str) -> str:
    return render(Page(f"clientbench: {path.name}", [], {}, error=message))


@register("html")
class Html:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        """out/report.html from the folder as written so far; a page that says what is missing when it cannot be
        read (a command's results are never lost to its report)."""
        if out is None:
            return []
        target = out / FILE
        try:
            write(out, target)
        except SetupError as exc:
            write_atomic(target, error_page(out, str(exc)))
        return [target]
