"""The regression gate of `clientbench compare A B --fail-on SPEC`: which row got worse than a threshold, per figure.

A timed figure (Bench, a percentile, CPU per request, ...) fails a row when B's median is worse than A's by more
than the threshold AND beyond the measured noise: the two runs' ranges of that figure over their repeats do not
overlap (analysis/compare.py's rule, which needs MIN_REPEATS repeats on both sides; with fewer the gate cannot
judge, and says so as a failure: a gate that cannot judge must not pass silently). A counted figure (cost's
instructions, syscalls, allocations per request), which repeats within 1% (docs/cost.md), fails on the plain
percentage. A cold-start figure (`clientbench cold`'s import, construct, first, second, answer, exit, rss) is judged
as a timed one, over the rows' samples (each a new process) instead of repeats. A row of A that is missing or failed
in B fails. Computed from the figures given; runs nothing.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SetupError
from ..metrics import Metric, by_gate
from ..model import Results, Row
from ..stats import Range
from .cold import median as cold_median
from .cold import span as cold_span
from .compare import MIN_REPEATS

#: timed figures (a run's: Bench, a percentile, CPU per request, ...), by the name --fail-on takes (metrics.py)
TIMED: dict[str, Metric] = by_gate("run")
#: counted figures (cost.json's rows), by the name --fail-on takes
COUNTED: dict[str, Metric] = by_gate("cost")
#: cold-start figures (cold.json's rows), by the name --fail-on takes
COLD: dict[str, Metric] = by_gate("cold")
#: which counts of a cost.json row are compared: as the row was counted (its request threads, or the whole process
#: when its main thread sent the requests) or the whole process's (the row's `process`: what a row whose work
#: spans threads, an async client's loop and runtime threads, costs in all)
COST_SCOPES = ("counted", "process")


def cost_counts(row: Mapping[str, Any], scope: str = "counted") -> Mapping[str, Any]:
    """The counts per request of a cost.json row in `scope` (COST_SCOPES); empty when the row has none."""
    if scope not in COST_SCOPES:
        raise SetupError(f"--scope {scope!r}: expected one of {', '.join(COST_SCOPES)}")
    return row if scope == "counted" else (row.get("process") or {})


@dataclass(frozen=True)
class Threshold:
    figure: str
    percent: float

    @property
    def counted(self) -> bool:
        return self.figure in COUNTED


def parse_fail_on(text: str) -> list[Threshold]:
    """`bench=10%,instructions=1%` (the % is optional); SetupError naming what is wrong."""
    out: list[Threshold] = []
    for item in (i.strip() for i in text.split(",") if i.strip()):
        name, sep, value = item.partition("=")
        name = name.strip().lower()
        if not sep or name not in (*TIMED, *COUNTED, *COLD):
            known = ", ".join(dict.fromkeys([*TIMED, *COUNTED, *COLD]))
            raise SetupError(f"--fail-on {item!r}: expected FIGURE=PERCENT%, a figure among {known}")
        try:
            percent = float(value.strip().removesuffix("%"))
        except ValueError:
            raise SetupError(f"--fail-on {item!r}: the threshold is a percentage, e.g. {name}=10%") from None
        if not 0 <= percent < 1000:
            raise SetupError(f"--fail-on {item!r}: the threshold must be within 0% and 1000%")
        if any(t.figure == name for t in out):
            raise SetupError(f"--fail-on names {name} twice")
        out.append(Threshold(name, percent))
    if not out:
        raise SetupError("--fail-on is empty: e.g. --fail-on bench=10%")
    return out


@dataclass(frozen=True)
class Check:
    """One row's one figure, judged."""

    row: str
    figure: str
    unit: str
    a: float | None
    b: float | None
    threshold: float
    verdict: str  # ok | worse | within noise | cannot judge | missing
    failed: bool

    @property
    def change_pct(self) -> float | None:
        if self.a is None or self.b is None or not self.a:
            return None
        return 100.0 * (self.b - self.a) / self.a


def _good(row: Row | None) -> bool:
    return row is not None and row.status == "ok" and row.aggregate is not None


def judge_runs(a: Results, b: Results, thresholds: Sequence[Threshold], rows: Sequence[str] = ()) -> list[Check]:
    """Every gated row of A (`rows`: glob patterns; default every row) against B, for each timed threshold."""
    timed = [t for t in thresholds if t.figure in TIMED]
    if not timed:
        raise SetupError("--fail-on: two run folders compare timed figures (bench, p99, cpu, ...), not counts")
    in_b = {r.client.name: r for r in b.rows}
    out: list[Check] = []
    for ra in a.rows:
        if not gated(ra.client.name, rows) or not _good(ra):
            continue
        rb = in_b.get(ra.client.name)
        for t in timed:
            metric = TIMED[t.figure]
            unit = _unit(metric)
            if not _good(rb):
                out.append(Check(ra.client.name, t.figure, unit, _median(ra, metric), None, t.percent, "missing", True))
                continue
            assert rb is not None
            out.append(_timed(ra, rb, t, metric))
    return out


def _unit(metric: Metric) -> str:
    return metric.gate_unit or metric.unit


def _median(row: Row, metric: Metric) -> float | None:
    agg = row.aggregate
    value = metric.value(agg.median) if agg is not None else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _timed(ra: Row, rb: Row, t: Threshold, metric: Metric) -> Check:
    # the figure's min-max over each run's repeats (stats.Aggregate), the noise the change must be beyond
    ranges = [agg.ranges.get(metric.field) if (agg := r.aggregate) is not None else None for r in (ra, rb)]
    return _beyond(ra.client.name, t, metric, (_median(ra, metric), ranges[0]), (_median(rb, metric), ranges[1]))


def _beyond(
    row: str,
    t: Threshold,
    metric: Metric,
    a: tuple[float | None, Range | None],
    b: tuple[float | None, Range | None],
    over: str = "repeats",
) -> Check:
    """A timed figure judged: B's median (with its min-max over the repeats or samples) against A's."""
    unit = _unit(metric)
    (ma, va), (mb, vb) = a, b
    if ma is None or mb is None:
        return Check(row, t.figure, unit, ma, mb, t.percent, "missing", True)
    if va is None or vb is None or min(va.n, vb.n) < MIN_REPEATS:
        return Check(row, t.figure, unit, ma, mb, t.percent, f"cannot judge (needs {MIN_REPEATS} {over})", True)
    worse = mb > ma * (1 + t.percent / 100) if metric.smaller else mb < ma * (1 - t.percent / 100)
    beyond = vb.low > va.high if metric.smaller else vb.high < va.low
    if worse and beyond:
        return Check(row, t.figure, unit, ma, mb, t.percent, "worse", True)
    return Check(row, t.figure, unit, ma, mb, t.percent, "within noise" if worse else "ok", False)


def judge_costs(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    thresholds: Sequence[Threshold],
    rows: Sequence[str] = (),
    scope: str = "counted",
) -> list[Check]:
    """Every gated row of A's cost.json against B's, for each counted threshold (plain percentages), on the counts
    of `scope` (COST_SCOPES)."""
    counted = [t for t in thresholds if t.counted]
    if not counted:
        raise SetupError("--fail-on: two cost folders compare counts (instructions, syscalls, allocations)")
    in_b = {r["name"]: r for r in b["rows"]}
    out: list[Check] = []
    for ra in a["rows"]:
        if not gated(ra["name"], rows) or ra["status"] != "ok":
            continue
        rb = in_b.get(ra["name"])
        for t in counted:
            metric = COUNTED[t.figure]
            unit = _unit(metric)
            va = cost_counts(ra, scope).get(metric.field)
            vb = cost_counts(rb, scope).get(metric.field) if rb is not None and rb["status"] == "ok" else None
            if va is None:
                continue  # A did not count it: nothing to guard
            if vb is None:
                out.append(Check(ra["name"], t.figure, unit, va, None, t.percent, "missing", True))
                continue
            failed = vb > va * (1 + t.percent / 100) if metric.smaller else vb < va * (1 - t.percent / 100)
            out.append(Check(ra["name"], t.figure, unit, va, vb, t.percent, "worse" if failed else "ok", failed))
    return out


def judge_colds(
    a: Mapping[str, Any], b: Mapping[str, Any], thresholds: Sequence[Threshold], rows: Sequence[str] = ()
) -> list[Check]:
    """Every gated row of A's cold.json against B's, for each cold-start threshold, as a timed figure: each row's
    median and min-max over its successful samples (cold.json's `figures`) instead of over repeats."""
    cold = [t for t in thresholds if t.figure in COLD]
    if not cold:
        known = ", ".join(COLD)
        raise SetupError(f"--fail-on: two cold-start folders compare cold-start figures ({known})")
    in_b = {r["name"]: r for r in b["rows"]}
    out: list[Check] = []
    for ra in a["rows"]:
        if not gated(ra["name"], rows) or ra["status"] != "ok":
            continue
        rb = in_b.get(ra["name"])
        good = rb if rb is not None and rb["status"] == "ok" else {}
        for t in cold:
            metric = COLD[t.figure]
            if cold_median(ra, metric.field) is None:
                continue  # a figure the row does not have (a native row's import): nothing to guard
            a_side = (cold_median(ra, metric.field), cold_span(ra, metric.field))
            b_side = (cold_median(good, metric.field), cold_span(good, metric.field))
            out.append(_beyond(ra["name"], t, metric, a_side, b_side, "samples"))
    return out


def gated(name: str, patterns: Sequence[str]) -> bool:
    """Whether the gate judges this row: it matches a pattern, or no pattern was given."""
    return not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def gated_patterns(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]
