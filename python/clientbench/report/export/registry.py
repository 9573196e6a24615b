"""The exporter interface: one registered exporter per format, each rendering the Report it is given
(report/base.py); `export()` hands a report to the formats asked for, in that order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from ..base import Report


class Exporter(Protocol):
    def export(self, report: Report, out: Path | None) -> list[Path]:
        """Write (or show) the report; return the files written."""
        ...


EXPORTERS: dict[str, Exporter] = {}


def register(name: str) -> Callable[[type], type]:
    def add(cls: type) -> type:
        EXPORTERS[name] = cls()
        return cls

    return add


def export(report: Report, out: Path | None, formats: Sequence[str]) -> list[Path]:
    written: list[Path] = []
    for name in formats:
        written += EXPORTERS[name].export(report, out)
    return written


#: the formats every run folder gets
FILES = ("json", "markdown", "csv")
