"""The reading of a run's phases (docs/phases.md): where a request's time goes, what a binding adds to its native
client's own time (held, released, async), and what a new connection costs. Every sentence is computed from the
figures given: nothing is said of rows that recorded no phases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..metrics import PHASES
from ..model import Row
from ..stats import OWN

#: per binding: its Python rows and the native rows of its client library, the first of them that ran is compared
BINDINGS = (
    ("Python Beast", ("py-beast-released", "py-beast-held", "py-beast-async", "py-beast-uvloop"), ("cpp-beast",)),
    (
        "Python reqwest",
        ("py-reqwest-released", "py-reqwest-held", "py-reqwest-async", "py-reqwest-uvloop"),
        ("rust-reqwest", "rust-reqwest-sync"),
    ),
)
#: a phase's name in a sentence
WORDS = {m.phase: m.label.removesuffix("(ms)").lower().replace("recv", "receive") for m in PHASES}
#: the phases of opening a connection
OPENING = ("connect", "tls", "connect+tls")


def _phases(rows: Sequence[Row]) -> dict[str, tuple[Row, Mapping[str, float]]]:
    return {
        r.client.name: (r, r.aggregate.median.phases)
        for r in rows
        if not r.failed and r.aggregate is not None and r.aggregate.median.phases
    }


def reading(rows: Sequence[Row]) -> list[str]:
    """Markdown list items: where the time goes, each binding's own time against its native client's, a new
    connection's cost. None when no row recorded phases."""
    found = _phases(rows)
    if not found:
        return []
    return [_where(found), *_bindings(found), *_opening(found)]


def _where(found: Mapping[str, tuple[Row, Mapping[str, float]]]) -> str:
    """The phase that takes most of a request in most rows, and the rows with the least and the most own time."""
    largest: dict[str, int] = {}
    for _, ph in found.values():
        key = max((k for k in ph if k != OWN), key=lambda k: ph[k])
        largest[key] = largest.get(key, 0) + 1
    top = max(largest, key=lambda k: largest[k])
    own = sorted(found.values(), key=lambda item: item[1][OWN])
    (least, lp), (most, mp) = own[0], own[-1]
    text = (
        f"- **Where the time goes** ({len(found)} rows recorded their phases): the largest part of a request is "
        f"{WORDS[top]} in {largest[top]} of them. The client's own time (the latency less the phases) is least for "
        f"{least.client.label}, {lp[OWN]:.3f} ms ({_share(lp)} of its latency)"
    )
    if most is not least:
        text += f", most for {most.client.label}, {mp[OWN]:.3f} ms ({_share(mp)})"
    return text + "."


def _share(ph: Mapping[str, float]) -> str:
    total = sum(ph.values())
    return f"{100 * ph[OWN] / total:.0f}%" if total > 0 else "-"


def _bindings(found: Mapping[str, tuple[Row, Mapping[str, float]]]) -> list[str]:
    out = []
    for title, ours, natives in BINDINGS:
        native = next((found[n] for n in natives if n in found), None)
        mine = [found[n] for n in ours if n in found]
        if native is None or not mine:
            continue
        base = native[1][OWN]
        said = [f"{_how(r)} {ph[OWN]:.3f} ms ({ph[OWN] - base:+.3f})" for r, ph in mine]
        out.append(
            f"- **{title}'s own time** against {native[0].client.label}'s {base:.3f} ms per request: "
            + "; ".join(said)
            + ". The phases are the same I/O: what differs is the binding's (and, held, the GIL's)."
        )
    return out


def _how(row: Row) -> str:
    c = row.client
    if c.mode == "async":
        return f"async ({c.library.partition('+')[2] or 'asyncio'})"
    return f"GIL {c.gil}" if c.gil else "sync"


def _new(row: Row) -> bool:
    """The row's driver was run with a new connection per request."""
    return any(("--connection", "new") in zip(run.command, run.command[1:], strict=False) for run in row.runs)


def _opening(found: Mapping[str, tuple[Row, Mapping[str, float]]]) -> list[str]:
    """A new connection's cost, where the rows opened one per request (`--connection new`) and recorded it."""
    opened = [(r, ph) for r, ph in found.values() if _new(r) and sum(ph.get(k, 0.0) for k in OPENING) > 0]
    if not opened:
        return []
    cost = sorted(opened, key=lambda item: sum(item[1].get(k, 0.0) for k in OPENING))
    (cheap, cp), (dear, dp) = cost[0], cost[-1]

    def said(ph: Mapping[str, float]) -> str:
        return ", ".join(f"{WORDS[k]} {ph[k]:.3f} ms" for k in OPENING if k in ph and ph[k] > 0) or "-"

    text = f"- **Opening a connection** ({len(opened)} rows): the cheapest is {cheap.client.label}'s ({said(cp)})"
    if dear is not cheap:
        text += f", the dearest {dear.client.label}'s ({said(dp)})"
    return [text + "."]
