"""Reports: what a command shows and writes, through one exporter per format.

A command describes its output once, as a `Report`: a document of blocks (headings, text, tables, images)
and, for the machine-readable formats, the results model and the figures to draw. `export()` hands it to
the exporters asked for; each format is one small module here with one `@register`ed class:

    markdown.py  <name>.md        every block, as GitHub Markdown
    csv.py       <name>.csv       the tables, as CSV
    json.py      results.json     the results model (or the report's own JSON document)
    terminal.py  (stdout)         the tables and text, with rich
    plots.py     plots/*.png      the figures, with matplotlib
    html.py      report.html      the whole results folder as one self-contained page (plotly.js inlined),
                                  read back from disk: exported last (folder.py reads, page.py and charts.py
                                  say what it shows, assets/ hold its template, script and styles)

Adding a format = one new module with a registered exporter (`@register("name")` from `.base`), plus its
name in the registry import line below. What goes into a report, apart from the formats: `table.py` (the run
table), `gil.py` (the GIL report's document and reading) and `compare.py` (two runs row by row, and the one
rule that flags a change beyond the noise).
"""

# the registry: one module per format, each registering its exporter when imported
from .export import csv, html, json, markdown, plots, terminal  # noqa: E402,F401,I001
from .base import (
    EXPORTERS,
    FILES,
    Block,
    Column,
    Exporter,
    Figure,
    Heading,
    Image,
    Report,
    Table,
    Text,
    export,
    register,
)

__all__ = [
    "EXPORTERS",
    "FILES",
    "Block",
    "Column",
    "Exporter",
    "Figure",
    "Heading",
    "Image",
    "Report",
    "Table",
    "Text",
    "export",
    "register",
]
