"""soak.md, `clientbench soak`'s document: every target's requests, failures, RSS and verdict, from soak.json."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import Column, Report, Table


def table(results: Sequence[dict[str, Any]], title: str) -> Table:
    columns = [
        Column("target", False),
        Column("requests"),
        Column("failures"),
        Column("RSS warm (MiB)"),
        Column("RSS end (MiB)"),
        Column("growth (MiB)"),
        Column("time (s)"),
        Column("req/s"),
        Column("result", False),
    ]
    rows = []
    for r in results:
        if r.get("requests") is not None:
            rows.append(
                [
                    r["target"],
                    str(r["requests"]),
                    str(r["failures"]),
                    f"{r['rss_warm_kib'] / 1024:.1f}" if r["rss_warm_kib"] else "-",
                    f"{r['rss_end_kib'] / 1024:.1f}",
                    f"{r['rss_growth_mib']:.2f}",
                    f"{r['elapsed_s']:.1f}",
                    f"{r['requests'] / r['elapsed_s']:.0f}" if r["elapsed_s"] else "-",
                    "pass" if r["passed"] else "FAIL",
                ]
            )
        else:
            rows.append([r["target"], *["-"] * 7, f"FAIL: {r['error']}"])
    return Table(columns, rows, title=title, styles=[None if r["passed"] else "red" for r in results])


def summary(document: Mapping[str, Any]) -> Report:
    """The report of a soak.json (its settings give the table's title; a soak.json of an older version has none)."""
    s = document.get("settings")
    title = (
        f"soak: {s['requests']} requests x target, {s['workers']} workers, "
        f"RSS growth limit {s['max_rss_growth_mib']:g} MiB"
        if s
        else "soak"
    )
    return Report("soak", [table(document["results"], title)], document=dict(document))
