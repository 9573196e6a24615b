"""The points a command measures one after another (a sweep's points, the GIL report's phases and its open-loop
rates): each point's rows as they run, its files written when it is done, and at the end those of a point the
command was interrupted in, so that an interrupted point still gets its tables. The one place that rule is."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from ..model import Row

P = TypeVar("P", bound=Hashable)


class PointLog(Generic[P]):
    """`rows = log.start(point)` before a point runs (the rows are appended as they exist), `log.done(point)` after
    it; `log.finish()` once the command is over, on every path: it writes every started point not yet written."""

    def __init__(self, write: Callable[[P, list[Row]], None]) -> None:
        self._write = write
        self.measured: list[tuple[P, list[Row]]] = []
        self._written: set[P] = set()

    def start(self, point: P) -> list[Row]:
        rows: list[Row] = []
        self.measured.append((point, rows))
        return rows

    def done(self, point: P) -> None:
        for p, rows in self.measured:
            if p == point and p not in self._written:
                self._written.add(p)
                self._write(p, rows)

    def finish(self) -> None:
        for point, _ in self.measured:
            self.done(point)

    def rows(self, point: P) -> list[Row]:
        """The rows of a started point (empty when it did not start)."""
        return next((rows for p, rows in self.measured if p == point), [])
