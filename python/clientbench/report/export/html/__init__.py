"""`report.html`: a report's parts (a part per results folder, report/parts.py: their tables, documents and
figures) and its comparison as one self-contained page; page.py lays them out, charts.py draws their figures.

Everything is inlined: plotly.js (from the pinned `plotly` package), the page's script and styles, and the data,
so the file opens with no network. The exporter renders the Report it is given and reads nothing: a command gives
the parts it measured, `clientbench report` the parts of a folder read back (folder.py)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import jinja2

from ....errors import SetupError
from ....files import write_atomic
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


def page(report: Report, title: str) -> Page:
    """The page of a report's parts (report/parts.py), and of its comparison of two runs when it has one."""
    view, builder = build(report.parts, title)
    if report.compare is not None:
        view.compare = compare_view(report.compare, builder)
        view.charts = builder.charts
    return view


@register("html")
class Html:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        """out/report.html (or the file `report.html_file` names) with the report's parts; nothing without parts."""
        if out is None or not report.parts and report.compare is None:
            return []
        target = report.html_file or out / FILE
        title = report.title or f"clientbench: {out.resolve().name}"
        write_atomic(target, render(page(report, title)))
        return [target]
