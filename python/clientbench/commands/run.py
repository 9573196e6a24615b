"""`clientbench run`: every selected client with the same workload; the table, results/<ts>/."""

from __future__ import annotations

from collections.abc import Sequence

from ..execution.testbed import Testbed, link_latest
from ..model import Row
from ..options import Options
from ..registry.spec import ClientSpec
from ..workload import Workload, number
from .output import exit_status, show, write_run


def run(specs: Sequence[ClientSpec], workload: Workload, options: Options, argv: Sequence[str]) -> int:
    rows: list[Row] = []
    testbed = Testbed(options, argv, http=(workload.http,))
    with testbed:
        testbed.console.print(
            f"[bold]clientbench[/]: {len(specs)} clients x {workload.repeat} repeats -> "
            f"{testbed.base_url}{workload.path}"
        )
        testbed.run_rows(specs, workload, testbed.out, rows)
    out = testbed.out
    loop = f"{number(workload.rate)}/s" if workload.rate is not None else f"N={workload.requests}"
    subtitle = f"W={workload.workers}, {loop}, {workload.request()}"
    write_run(rows, testbed.results(workload, rows), out, subtitle, exports=options.exports)
    link_latest(out)
    if rows:
        show(rows, testbed.describe(workload))
    testbed.console.print(f"results: {out}")
    return exit_status(testbed, rows, [s.name for s in specs if s.explicit])
