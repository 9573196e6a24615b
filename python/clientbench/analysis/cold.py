"""What is read of `clientbench cold`'s rows (cold.json), and the reading generated from them (docs/cold-start.md).

The figures themselves (field, unit, column, gate name, dashboard slug, what each spans) are the registry's
(metrics.py, `source` "cold"); their medians and min-max over the samples are stats.py's, kept in each row's
`figures`. The reading works on cold.json's rows, so a folder read back (folder.py) gets the same sentences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..stats import Range, middle


def median(row: Mapping[str, Any], field: str) -> float | None:
    """A row's median of a figure over its samples (None where it has none)."""
    spread = (row.get("figures") or {}).get(field)
    return float(spread["median"]) if spread else None


def span(row: Mapping[str, Any], field: str) -> Range | None:
    """A row's min-max of a figure over its samples, and their number (None where it has none)."""
    spread = (row.get("figures") or {}).get(field)
    return Range(float(spread["low"]), float(spread["high"]), int(spread["n"])) if spread else None


def _ok(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in rows if r.get("status") == "ok" and r.get("figures")]


def _ms(value: float) -> str:
    return f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms"


#: the parts of a Python row's time to its first answer, for "which part dominates"
PARTS = (
    ("start_ms", "the interpreter's start-up"),
    ("library_ms", "the library's import"),
    ("construct_ms", "building the client"),
    ("first_ms", "the first request"),
)


def imports(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Which import dominates: the heaviest library import against the lightest, and of each Python row's time to
    its first answer, the part that is the largest."""
    python = [r for r in _ok(rows) if median(r, "library_ms") is not None]
    if not python:
        return []
    by_import = sorted(python, key=lambda r: median(r, "library_ms") or 0.0)
    heavy, light = by_import[-1], by_import[0]
    h, lo = median(heavy, "library_ms") or 0.0, median(light, "library_ms") or 0.0
    answer = median(heavy, "answer_ms")
    out = []
    if len(python) > 1:
        text = f"Of the Python rows, {heavy['name']}'s import of {heavy.get('module')} is the heaviest: {_ms(h)}"
        if lo > 0:
            text += f", {h / lo:.1f}x {light['name']}'s of {light.get('module')}, the lightest ({_ms(lo)})"
    else:
        text = f"{heavy['name']}'s import of {heavy.get('module')} takes {_ms(h)}"
    if answer:
        text += f"; it is {100 * h / answer:.0f}% of {heavy['name']}'s {_ms(answer)} to its first answer"
    shown = (heavy.get("importtime") or {}).get("top") or []
    if shown:
        parts = ", ".join(f"{t['module']} ({_ms(t['cumulative_ms'])})" for t in shown)
        text += f". Within that import, python -X importtime names {parts} as its heaviest parts"
    out.append(text + ".")
    groups: dict[str, list[str]] = {}
    for r in python:
        answer = median(r, "answer_ms")
        if not answer:
            continue
        share = {name: (median(r, field) or 0.0) / answer for field, name in PARTS}
        top = max(share, key=lambda k: share[k])
        groups.setdefault(top, []).append(f"{r['name']} {100 * share[top]:.0f}%")
    if groups:
        said = "; ".join(f"{part} for {', '.join(names)}" for part, names in groups.items())
        out.append(f"The largest part of each Python row's time to its first answer: {said}.")
    start = [s for r in python if (s := median(r, "start_ms")) is not None]
    if start:
        out.append(
            "Every Python row pays the interpreter's start-up before any import: Start, "
            f"{_ms(middle(start))} (the middle of the Python rows' medians)."
        )
    return out


def first_request(rows: Sequence[Mapping[str, Any]], scheme: str, http: str) -> list[str]:
    """The first request's cost over the second on the same client, per row: its connection, its TLS handshake
    over https, and what the library does only once."""
    ok = [r for r in _ok(rows) if median(r, "first_ms") is not None and median(r, "second_ms") is not None]
    if not ok:
        return []
    extra = sorted(((median(r, "first_ms") or 0.0) - (median(r, "second_ms") or 0.0), r) for r in ok)
    over = "HTTPS (the TLS handshake included)" if scheme == "https" else "plain HTTP (no TLS)"
    over += "" if http == "1.1" else f", HTTP/{http}"
    listed = ", ".join(
        f"{r['name']} +{_ms(d)} ({_ms(median(r, 'first_ms') or 0.0)} vs {_ms(median(r, 'second_ms') or 0.0)})"
        for d, r in extra
    )
    cheapest, dearest = extra[0], extra[-1]
    text = (
        f"Over {over}, the first request costs more than the second on the same client (its connection, "
        f"{'handshake, ' if scheme == 'https' else ''}and what the library does once): {listed}."
    )
    if len(extra) > 1 and cheapest[0] > 0:
        text += f" {dearest[1]['name']}'s first request costs {dearest[0] / cheapest[0]:.0f}x {cheapest[1]['name']}'s."
    return [text]


def to_first_answer(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The native rows' time to a first answer next to the quickest Python row's."""
    ok = [r for r in _ok(rows) if median(r, "answer_ms") is not None]
    native = sorted((r for r in ok if r.get("kind") == "program"), key=lambda r: median(r, "answer_ms") or 0.0)
    python = sorted((r for r in ok if r.get("kind") == "python"), key=lambda r: median(r, "answer_ms") or 0.0)
    if not native or not python:
        return []
    names = ", ".join(f"{r['name']} {_ms(median(r, 'answer_ms') or 0.0)}" for r in native)
    quick = python[0]
    start = median(quick, "start_ms")
    text = (
        f"From exec to the first answer: {names}; the quickest Python row, {quick['name']}, "
        f"{_ms(median(quick, 'answer_ms') or 0.0)}"
    )
    if start is not None:
        text += f", of which the interpreter's start-up is {_ms(start)}"
    return [text + "."]


def reading(rows: Sequence[Mapping[str, Any]], scheme: str, http: str) -> list[str]:
    """The sentences generated from cold.json's rows."""
    return [*imports(rows), *first_request(rows, scheme, http), *to_first_answer(rows)]
