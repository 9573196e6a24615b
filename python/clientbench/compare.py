"""`clientbench compare A B`: per-row ratios of two runs, flagged when beyond the measured noise.

A change is flagged when the two runs' Bench ranges (min-max over their repeats) do not overlap: the
difference is then larger than what either run saw between its own repeats. That needs enough repeats to
mean something: if nothing changed, the m and n repeats are exchangeable and their ranges fail to overlap
by chance with probability 2 / C(m+n, m), which is 33% for 2 + 2 repeats, 10% for 3 + 3, 2.9% for 4 + 4 and
0.8% for 5 + 5. So a verdict needs at least MIN_REPEATS repeats on both sides."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from .paths import SetupError

#: the fewest repeats per run for a verdict (chance of a false flag at most 2.9%, see above)
MIN_REPEATS = 4


def load(path: Path) -> dict[str, Any]:
    file = path / "results.json" if path.is_dir() else path
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SetupError(f"no results at {file}") from None
    except (OSError, ValueError) as exc:
        raise SetupError(f"cannot read {file}: {exc}") from None
    if doc.get("schema") != "clientbench.results/1":
        raise SetupError(f"{file} is not a clientbench results.json")
    return doc


def _figures(row: dict[str, Any]) -> dict[str, Any] | None:
    agg = row.get("aggregate")
    return agg if row.get("status") == "ok" and agg else None


def compare(a_path: Path, b_path: Path) -> int:
    a, b = load(a_path), load(b_path)
    rows_a = {r["client"]["name"]: r for r in a["rows"]}
    rows_b = {r["client"]["name"]: r for r in b["rows"]}
    table = Table(title=f"B / A   (A = {a_path}, B = {b_path})", header_style="bold")
    for col in ("Client", "Bench A(ms)", "Bench B(ms)", "B/A", "Mean B/A", "P99 B/A", "verdict"):
        table.add_column(col, justify="left" if col in ("Client", "verdict") else "right")
    changed = 0
    diffs: list[tuple[float, str]] = []
    for name in [n for n in rows_a if n in rows_b] + [n for n in rows_b if n not in rows_a]:
        fa, fb = _figures(rows_a.get(name, {})), _figures(rows_b.get(name, {}))
        if fa is None or fb is None:
            table.add_row(name, "-", "-", "-", "-", "-", "missing or failed in " + ("A" if fa is None else "B"))
            continue
        ma, mb = fa["median"], fb["median"]

        def ratio(key: str) -> str:
            return f"{mb[key] / ma[key]:.2f}" if ma.get(key) and mb.get(key) is not None else "-"

        diffs.append((abs(mb["bench_ms"] / ma["bench_ms"] - 1) * 100, name))
        if min(fa["repeats"], fb["repeats"]) < MIN_REPEATS:
            verdict = f"too few repeats to judge (needs {MIN_REPEATS})"
        elif fb["bench_min_ms"] > fa["bench_max_ms"]:
            verdict, changed = "[red]slower[/] (beyond noise)", changed + 1
        elif fb["bench_max_ms"] < fa["bench_min_ms"]:
            verdict, changed = "[green]faster[/] (beyond noise)", changed + 1
        else:
            verdict = "within noise"
        table.add_row(name, f"{ma['bench_ms']:.2f}", f"{mb['bench_ms']:.2f}", ratio("bench_ms"), ratio("mean_ms"),
                      ratio("p99_ms"), verdict)
    Console(width=None if sys.stdout.isatty() else 200).print(table)
    print(f"{changed} row(s) changed beyond the measured noise")
    if diffs:
        worst, who = max(diffs)
        print(f"largest difference of median Bench: {worst:.1f}% ({who}); "
              f"median over rows: {sorted(d for d, _ in diffs)[len(diffs) // 2]:.1f}%")
    return 0
