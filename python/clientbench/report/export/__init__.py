"""One module per output format, each a registered exporter (`@register("name")`, registry.py) that renders the
Report it is given (report/base.py):

    markdown.py  <name>.md        every block, as GitHub Markdown
    csv.py       <name>.csv       the tables, as CSV
    json.py      results.json     the results model (or the report's own JSON document)
    terminal.py  (stdout)         the tables and text, with rich
    plots.py     plots/*.png      the figures (report/figures.py), with matplotlib
    html/        report.html      the whole report as one self-contained page (plotly.js inlined)
    github_benchmark.py  github-benchmark.json   the tracked figures for github-action-benchmark
    bencher.py   bencher.json     the tracked figures in Bencher Metric Format

Adding a format = one new module with a registered exporter, plus its name in the import line below.
"""

# the registry: one module per format, each registering its exporter when imported
from . import bencher, csv, github_benchmark, html, json, markdown, plots, terminal  # noqa: F401
from .registry import EXPORTERS, FILES, Exporter, export, register

__all__ = ["EXPORTERS", "FILES", "Exporter", "export", "register"]
