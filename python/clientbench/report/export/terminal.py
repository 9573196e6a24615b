"""The terminal: the report's tables (rich) and text on stdout. Not a terminal (CI, a pipe): the tables
are not squeezed into 80 columns."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable
from rich.text import Text as RichText

from ..base import Report, Table, Text
from .registry import register


def rich_table(table: Table) -> RichTable:
    """The table as rich draws it; its text is text, never markup (a hint like `pip install "clientbench[peers]"`
    would lose its brackets)."""
    out = RichTable(title=escape(table.title) if table.title else None, header_style="bold")
    for c in table.columns:
        out.add_column(
            escape(c.label),
            justify="right" if c.numeric else "left",
            overflow="fold",
            max_width=48 if c.label == "Status" else None,
        )
    for i, cells in enumerate(table.rows):
        out.add_row(*(RichText(cell) for cell in cells), style=table.styles[i] if i < len(table.styles) else None)
    return out


def console() -> Console:
    return Console(width=None if sys.stdout.isatty() else 220, highlight=False)


@register("terminal")
class Terminal:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        con = console()
        for block in report.blocks:
            if isinstance(block, Table):
                con.print(rich_table(block))
            elif isinstance(block, Text):
                con.print("\n".join(block.lines), markup=False)
        return []
