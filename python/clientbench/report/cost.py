"""cost.md, `clientbench cost`'s document: instructions, syscalls and allocations per request per row, and how
they were counted (docs/cost.md); from cost.json's rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..options import UNSET, CostSettings
from .base import Column, Report, Table, Text

#: the rows the ratio column divides by, when they are measured: the Python floor for Python rows (the interpreter
#: and the harness before any client), for an async Python row the asyncio floor of its event loop, the native one
#: for the others
FLOOR = "cpp-floor"
PYTHON_FLOOR = "py-floor"
ASYNC_FLOORS = {"asyncio": "py-floor-async", "uvloop": "py-floor-uvloop"}


def _event_loop(label: str) -> str | None:
    """The event loop of a row labelled `Python httpx+uvloop (async)`: uvloop (asyncio without `+`); None when sync."""
    library, _, mode = label.partition(" (")
    if not mode.startswith("async"):
        return None
    return library.rpartition("+")[2] if "+" in library else "asyncio"


def _calls(syscalls: dict[str, float]) -> str:
    shown = sorted(((v, k) for k, v in syscalls.items() if abs(v) >= 0.005), key=lambda x: (-x[0], x[1]))
    return ", ".join(f"{k} {round(v, 2):g}" for v, k in shown) or "-"


def table(rows: Sequence[dict[str, Any]], title: str | None = None) -> Table:
    """The cost table of cost.json's rows; the ratio column when a floor row was measured (a Python row's against the
    Python floor, the others' against the native one)."""
    floors = {
        name: r["instructions_per_request"]
        for name in (FLOOR, PYTHON_FLOOR, *ASYNC_FLOORS.values())
        for r in rows
        if r["name"] == name and r["status"] == "ok" and r["instructions_per_request"]
    }

    def floor_of(r: dict[str, Any]) -> float | None:
        label = str(r.get("label") or "")
        on_loop = ASYNC_FLOORS.get(_event_loop(label) or "", "")
        if label.startswith("Python ") and on_loop in floors:
            return float(floors[on_loop])
        python = label.startswith("Python ") and PYTHON_FLOOR in floors
        return floors.get(PYTHON_FLOOR if python else FLOOR)

    columns = [Column("Client", False), Column("Instructions/req")]
    if floors:
        columns.append(Column("x floor"))
    columns += [
        Column("Syscalls/req"),
        Column("Syscalls per request", False),
        Column("Allocations/req"),
        Column("Counted", False),
        # the whole process's counts: for a row counted on its request threads, what its other threads add (an
        # async client's loop or runtime threads)
        Column("Process instr/req"),
        Column("Process syscalls/req"),
    ]
    out = Table(columns, [], title=title)

    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    for r in rows:
        if r["status"] != "ok":
            cells = [r["name"], r["reason"] or r["status"]] + ["-"] * (len(columns) - 2)
            out.rows.append(cells)
            out.styles.append("dim" if r["status"] in ("unavailable", "skipped") else "red")
            continue
        instr = r["instructions_per_request"]
        cells = [r["name"], num(instr, ",.0f")]
        if floors:
            base = floor_of(r)
            cells.append(num(instr / base if instr is not None and base else None, ".2f"))
        cells += [
            num(r["syscalls_per_request"], ".2f"),
            _calls(r["syscalls"]) if r["syscalls"] is not None else "-",
            num(r["allocations_per_request"], ",.2f"),
            SCOPES[r["scope"]],
            num((r.get("process") or {}).get("instructions_per_request"), ",.0f"),
            num((r.get("process") or {}).get("syscalls_per_request"), ".2f"),
        ]
        out.rows.append(cells)
        out.styles.append(None)
    return out


#: what the Counted column says
SCOPES = {"threads": "request threads", "process": "whole process"}


def method(settings: CostSettings, unset: Sequence[str]) -> list[str]:
    n, m = settings.requests, settings.baseline
    return [
        f"One worker, keep-alive GET {settings.path}, no warm-up; every figure is (count at {n} requests - "
        f"count at {m}) / {n - m}: the cost of one request without the start-up. Counted: the threads that "
        "sent the requests, or the whole process when its main thread sent them (its raw document included).",
        "Instructions: valgrind --tool=callgrind (user space). Syscalls: strace -f. Allocations: calls of "
        "malloc, calloc, realloc and the aligned allocators, under callgrind (Python rows with "
        f"PYTHONMALLOC=malloc). PYTHONHASHSEED=0; unset: {', '.join(unset)}.",
    ]


def summary(document: Mapping[str, Any]) -> Report:
    """cost.md of a cost.json: the table and how it was counted."""
    settings = CostSettings(
        int(document["requests"]), int(document["baseline"]), str(document["path"]), tuple(document["measures"])
    )
    return Report("cost", [table(document["rows"]), Text(method(settings, UNSET))], document=dict(document))
