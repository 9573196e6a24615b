"""Reports: what a command shows, described once as a `Report` (base.py): a document of blocks (headings, text,
tables, images) and, for the machine-readable formats, the results model and the figures to draw.

What goes into each command's report: table.py (the run table), figures.py (every plot, defined once for both
renderers), gil.py (gil.md), sweep.py and rates.py (a sweep's sweep.md). The readings those documents quote are
computed in analysis/. How a report is written: export/, one module per format (`export.export(report, out,
formats)`).
"""

from .base import Block, Column, Figure, Heading, Image, Report, Table, Text

__all__ = ["Block", "Column", "Figure", "Heading", "Image", "Report", "Table", "Text"]
