"""Counts a request as late when it started after its intended time (a wake-up after it too), not when the
previous one ended after it."""

from typing import Any

from base import main


def late_by_start(doc: dict[str, Any]) -> None:
    for w in doc["workers"]:
        if "intended_ns" in w:
            w["late"] = sum(1 for s, i in zip(w["start_ns"][1:], w["intended_ns"][1:], strict=True) if s > i)


main(late_by_start)
