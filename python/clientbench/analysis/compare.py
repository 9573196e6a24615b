"""Two runs row by row: the ratios, and whether a change is beyond the measured noise.

One decision for every view of a comparison (`clientbench compare`'s table, the HTML report's compare view).
A change is flagged when the two runs' Bench ranges (min-max over their repeats) do not overlap: the
difference is then larger than what either run saw between its own repeats. That needs enough repeats to
mean something: if nothing changed, the m and n repeats are exchangeable and their ranges fail to overlap
by chance with probability 2 / C(m+n, m), which is 33% for 2 + 2 repeats, 10% for 3 + 3, 2.9% for 4 + 4 and
0.8% for 5 + 5. So a verdict needs at least MIN_REPEATS repeats on both sides."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Results, Row
from ..stats import Aggregate, middle

#: the fewest repeats per run for a verdict (chance of a false flag at most 2.9%, see above)
MIN_REPEATS = 4


@dataclass(frozen=True)
class Verdict:
    text: str
    change: int = 0  # +1 slower beyond the noise, -1 faster beyond the noise, 0 not flagged

    @property
    def flagged(self) -> bool:
        return self.change != 0


def verdict(a: Aggregate, b: Aggregate) -> Verdict:
    """Whether B's Bench differs from A's beyond the noise of either run (see the module docstring)."""
    if min(a.repeats, b.repeats) < MIN_REPEATS:
        return Verdict(f"too few repeats to judge (needs {MIN_REPEATS})")
    if b.bench_min_ms > a.bench_max_ms:
        return Verdict("slower (beyond noise)", +1)
    if b.bench_max_ms < a.bench_min_ms:
        return Verdict("faster (beyond noise)", -1)
    return Verdict("within noise")


@dataclass(frozen=True)
class RowComparison:
    """One client in both runs; `a`/`b` are None where the row is missing or failed in that run."""

    name: str
    label: str
    a: Aggregate | None
    b: Aggregate | None
    verdict: Verdict

    def ratio(self, key: str) -> float | None:
        """B / A of a median figure (e.g. "bench_ms"); None where either side has none."""
        if self.a is None or self.b is None:
            return None
        va, vb = getattr(self.a.median, key), getattr(self.b.median, key)
        return vb / va if va and vb is not None else None


def _good(row: Row | None) -> Row | None:
    return row if row is not None and row.status == "ok" and row.aggregate is not None else None


def compare_rows(a: Results, b: Results) -> list[RowComparison]:
    """Every client of A (in A's order), then those only in B, matched by client name."""
    rows_a = {r.client.name: r for r in a.rows}
    rows_b = {r.client.name: r for r in b.rows}
    out: list[RowComparison] = []
    for name in [n for n in rows_a if n in rows_b] + [n for n in rows_b if n not in rows_a]:
        ra, rb = _good(rows_a.get(name)), _good(rows_b.get(name))
        label = (rows_a.get(name) or rows_b[name]).client.label
        if ra is None or rb is None or ra.aggregate is None or rb.aggregate is None:
            missing = Verdict("missing or failed in " + ("A" if ra is None else "B"))
            out.append(RowComparison(name, label, ra.aggregate if ra else None, rb.aggregate if rb else None, missing))
            continue
        out.append(RowComparison(name, label, ra.aggregate, rb.aggregate, verdict(ra.aggregate, rb.aggregate)))
    return out


def summary(rows: Sequence[RowComparison]) -> list[str]:
    """How many rows changed, and the largest and median difference of median Bench."""
    changed = sum(1 for r in rows if r.verdict.flagged)
    lines = [f"{changed} row(s) changed beyond the measured noise"]
    diffs = [(abs(ratio - 1) * 100, r.name) for r in rows if (ratio := r.ratio("bench_ms")) is not None]
    if diffs:
        worst, who = max(diffs)
        lines.append(
            f"largest difference of median Bench: {worst:.1f}% ({who}); "
            f"median over rows: {middle([d for d, _ in diffs]):.1f}%"
        )
    # the spread: each side's Bench range over its repeats, relative to its median (how steady a row is)
    spreads: list[tuple[float, float]] = []
    for r in rows:
        sa, sb = (_spread(r.a), _spread(r.b)) if r.a is not None and r.b is not None else (None, None)
        if sa is not None and sb is not None:
            spreads.append((sa, sb))
    if spreads:
        narrower = sum(1 for a, b in spreads if b < a)
        lines.append(
            f"Bench's range over the repeats, relative to the median: narrower in B in {narrower} of {len(spreads)} "
            f"row(s); median over rows {middle([a for a, _ in spreads]):.0f}% in A, "
            f"{middle([b for _, b in spreads]):.0f}% in B"
        )
    return lines


def _spread(agg: Aggregate) -> float | None:
    """Bench's spread over the repeats relative to its median (stats), in %; None with one repeat or no median."""
    return agg.bench_spread_pct if agg.repeats > 1 and agg.median.bench_ms else None
