"""`clientbench compare A B`: per-row ratios of two runs, flagged when beyond the measured noise.

A change is flagged when the two runs' Bench ranges (min-max over their repeats) do not overlap: the
difference is then larger than what either run saw between its own repeats. That needs enough repeats to
mean something: if nothing changed, the m and n repeats are exchangeable and their ranges fail to overlap
by chance with probability 2 / C(m+n, m), which is 33% for 2 + 2 repeats, 10% for 3 + 3, 2.9% for 4 + 4 and
0.8% for 5 + 5. So a verdict needs at least MIN_REPEATS repeats on both sides."""

from __future__ import annotations

from pathlib import Path

from ..model import Results, Row
from ..report import Column, Report, Table, Text, export
from ..stats import RowStats

#: the fewest repeats per run for a verdict (chance of a false flag at most 2.9%, see above)
MIN_REPEATS = 4


def _good(row: Row | None) -> Row | None:
    return row if row is not None and row.status == "ok" and row.aggregate is not None else None


def compare(a_path: Path, b_path: Path) -> int:
    a, b = Results.load(a_path), Results.load(b_path)
    rows_a = {r.client.name: r for r in a.rows}
    rows_b = {r.client.name: r for r in b.rows}
    columns = [
        Column("Client", False),
        Column("Bench A(ms)"),
        Column("Bench B(ms)"),
        Column("B/A"),
        Column("Mean B/A"),
        Column("P99 B/A"),
        Column("verdict", False),
    ]
    table = Table(columns, [], title=f"B / A   (A = {a_path}, B = {b_path})")
    changed = 0
    diffs: list[tuple[float, str]] = []
    for name in [n for n in rows_a if n in rows_b] + [n for n in rows_b if n not in rows_a]:
        ra, rb = _good(rows_a.get(name)), _good(rows_b.get(name))
        if ra is None or rb is None or ra.aggregate is None or rb.aggregate is None:
            table.rows.append([name, "-", "-", "-", "-", "-", "missing or failed in " + ("A" if ra is None else "B")])
            table.styles.append(None)
            continue
        fa, fb = ra.aggregate, rb.aggregate
        ma, mb = fa.median, fb.median

        def ratio(key: str, ma: RowStats = ma, mb: RowStats = mb) -> str:
            va, vb = getattr(ma, key), getattr(mb, key)
            return f"{vb / va:.2f}" if va and vb is not None else "-"

        diffs.append((abs(mb.bench_ms / ma.bench_ms - 1) * 100, name))
        style = None
        if min(fa.repeats, fb.repeats) < MIN_REPEATS:
            verdict = f"too few repeats to judge (needs {MIN_REPEATS})"
        elif fb.bench_min_ms > fa.bench_max_ms:
            verdict, style, changed = "slower (beyond noise)", "red", changed + 1
        elif fb.bench_max_ms < fa.bench_min_ms:
            verdict, style, changed = "faster (beyond noise)", "green", changed + 1
        else:
            verdict = "within noise"
        table.rows.append(
            [
                name,
                f"{ma.bench_ms:.2f}",
                f"{mb.bench_ms:.2f}",
                ratio("bench_ms"),
                ratio("mean_ms"),
                ratio("p99_ms"),
                verdict,
            ]
        )
        table.styles.append(style)
    summary = [f"{changed} row(s) changed beyond the measured noise"]
    if diffs:
        worst, who = max(diffs)
        summary.append(
            f"largest difference of median Bench: {worst:.1f}% ({who}); "
            f"median over rows: {sorted(d for d, _ in diffs)[len(diffs) // 2]:.1f}%"
        )
    export(Report("compare", [table, Text(summary)]), None, ("terminal",))
    return 0
