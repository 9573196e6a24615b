"""The plan of a command's rows: every row `workload.repeat` times, interleaved round-robin, each run a driver
process of its own (driver_process.py), the raw documents written under the results folder."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from ..files import write_atomic
from ..model import DriverRun, Row
from ..registry.spec import ClientSpec
from ..targets import Bodies
from ..workload import Workload
from .driver_process import compact, run_driver


def run_plan(
    specs: Sequence[ClientSpec],
    url: str,
    workload: Workload,
    *,
    row_timeout_s: float,
    out_dir: Path | None,
    expected_body_bytes: int | Bodies | None = None,
    driver_flags: Sequence[str] = (),
    on_start: Callable[[ClientSpec, int], None] = lambda s, i: None,
    on_done: Callable[[DriverRun, int], None] = lambda r, i: None,
    rows: list[Row] | None = None,
    cpus: frozenset[int] | None = None,
    on_spawn: Callable[[int], None] | None = None,
) -> list[Row]:
    """Run every spec `workload.repeat` times, interleaved round-robin (A B C A B C ...), never all repeats of one
    client in a row, so that a slow phase of the machine hits every client alike. The rows are appended
    to `rows` (if given) before the first driver starts, so an interrupted plan leaves partial rows."""
    rows = rows if rows is not None else []
    rows.extend(Row(spec.client) for spec in specs)
    plan = list(zip(specs, rows[-len(specs) :], strict=True)) if specs else []
    for rep in range(workload.repeat):
        for spec, row in plan:
            if rep and (row.unavailable or row.unsupported):  # not installed here, or cannot: once is enough
                continue
            on_start(spec, rep)
            tag = f".{rep}"
            result = run_driver(
                spec,
                url,
                workload,
                row_timeout_s=row_timeout_s,
                log_dir=out_dir / "logs" if out_dir else None,
                expected_body_bytes=expected_body_bytes,
                tag=tag,
                hash_seed=rep,
                driver_flags=driver_flags,
                cpus=cpus,
                on_spawn=on_spawn,
            )
            if out_dir is not None and result.raw is not None:
                (out_dir / "raw").mkdir(parents=True, exist_ok=True)
                result.raw_file = f"raw/{spec.name}{tag}.json"
                write_atomic(out_dir / result.raw_file, json.dumps(result.raw) + "\n")
            if result.raw is not None:
                compact(result.raw)
                row.client = result.client  # a row from outside the project: labelled by its document
            row.add(result)
            on_done(result, rep)
    return [row for _, row in plan]
