"""Puts its failed requests in its histograms too (the runner rejects the document: a histogram holds the
successful requests only)."""

from typing import Any

from base import main


def count_all(doc: dict[str, Any]) -> None:
    for w in doc["workers"]:
        for h in w.get("histograms", {}).values():
            if w["failure_count"]:
                h["counts"] = sorted([*h["counts"], [1_000_000, w["failure_count"]]])


main(count_all)
