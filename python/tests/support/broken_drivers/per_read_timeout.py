"""Leaves --timeout to http.client, whose timeout bounds each socket operation: a body that trickles in for
longer than --timeout, a byte at a time, succeeds."""

from typing import Any

from base import main
from clientbench.harness import record, workers


class Unbounded(record.Worker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limit_ns = 1 << 62


workers.Worker = Unbounded  # type: ignore[misc]
main()
