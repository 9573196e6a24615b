"""Sends one request fewer per worker than asked, and says so consistently (a valid document of another
workload)."""

from typing import Any

from base import main


def drop_one(doc: dict[str, Any]) -> None:
    doc["workload"]["requests"] = doc["workload"]["requests"] and doc["workload"]["requests"] - 1
    for w in doc["workers"]:
        w["count"] -= 1
        for key in ("start_ns", "latencies_ns", "intended_ns"):
            if key in w:
                w[key].pop()
        w["failures"] = [f for f in w["failures"] if f["index"] < w["count"]]
        w["failure_count"] = len(w["failures"])


main(drop_one)
