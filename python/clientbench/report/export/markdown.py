"""`<name>.md`: every block of the report as GitHub Markdown (pipe tables)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...files import write_atomic
from ..base import Heading, Image, Report, Table, Text
from .registry import register


def pipe_table(table: Table) -> str:
    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    header = [c.label for c in table.columns]
    align = ["---:" if c.numeric else ":---" for c in table.columns]
    return "\n".join([line(header), line(align), *(line(r) for r in table.rows)]) + "\n"


def render(report: Report) -> str:
    parts: list[str] = []
    for block in report.blocks:
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {block.text}\n")
        elif isinstance(block, Text):
            parts.append("".join(f"{line}\n" for line in block.lines))
        elif isinstance(block, Table):
            parts.append(pipe_table(block))
        elif isinstance(block, Image):
            parts.append(f"![{block.alt}]({block.path})\n")
    return "\n".join(parts)


@register("markdown")
class Markdown:
    def export(self, report: Report, out: Path | None) -> list[Path]:
        if out is None or not report.blocks:
            return []
        path = out / f"{report.name}.md"
        write_atomic(path, render(report))
        return [path]
