"""Compares an upload's answer before its status: a 404 becomes a digest mismatch instead of `status 404`."""

from typing import Any

from base import main


def digest_first(doc: dict[str, Any]) -> None:
    if doc["workload"]["method"] == "GET":
        return
    for w in doc["workers"]:
        for f in w["failures"]:
            if f["reason"].startswith("status "):
                f["reason"], f["status"] = "Error: upload digest mismatch: got '', expected '30 ...'", None


main(digest_first)
