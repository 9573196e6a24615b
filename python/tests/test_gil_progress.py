"""A Python thread beside the bindings' calls (probes/progress.py, the GIL report's figure that does not hang
on the machine): the probe against our server, and its reading from figures given."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from clientbench.analysis.gil import GilFigures, progress_reading, readings
from clientbench.probes import progress
from clientbench.workload import Workload


def test_the_probe_sees_a_held_call_keep_the_python_thread_waiting(server):
    done = subprocess.run(
        [sys.executable, "-m", "clientbench.probes.progress", "--url", server.url + "/", "--workers", "4",
         "--seconds", "0.3", "--repeat", "1"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = json.loads(done.stdout)
    assert (line["workers"], line["seconds"], line["repeat"]) == (4, 0.3, 1)
    assert line["python"]["implementation"] == "cpython" and line["python"]["gil_enabled"]
    for lib in ("beast", "reqwest"):
        alone, held, released = line[lib]["alone"], line[lib]["held"], line[lib]["released"]
        assert alone["requests_per_s"] == 0 and held["requests_per_s"] > 0 and released["requests_per_s"] > 0
        # held, a woken thread waits for a switch interval (5 ms) to take the GIL from a worker; released, it
        # finds the GIL free (a 1 ms margin for a loaded machine's scheduling)
        assert held["late_p50_ms"] > 2.5, line
        assert released["late_p50_ms"] < held["late_p50_ms"] - 1, line
        assert held["beats_per_s"] < released["beats_per_s"], line


def test_a_worker_that_fails_fails_the_probe_with_its_reason(server):
    """No partial figure: a server that answers 404 makes the probe exit non-zero and say why."""
    done = subprocess.run(
        [sys.executable, "-m", "clientbench.probes.progress", "--url", server.url + "/status/404", "--workers", "2",
         "--seconds", "0.1", "--repeat", "1", "--binding", "beast"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0 and "status 404" in done.stderr


@pytest.mark.parametrize("flags", [["--workers", "0"], ["--repeat", "0"], ["--seconds", "0"], ["--seconds", "61"]])
def test_a_count_or_time_out_of_range_is_a_usage_error(flags):
    with pytest.raises(SystemExit) as exc:
        progress.main(["--url", "http://127.0.0.1:9/", *flags])
    assert exc.value.code == 2


def case(late: float, p99: float, beats: float, rps: float) -> dict[str, float]:
    return {"late_p50_ms": late, "late_p99_ms": p99, "beats_per_s": beats, "requests_per_s": rps}


LINE = {
    "workers": 10,
    "seconds": 0.5,
    "repeat": 5,
    "beast": {
        "alone": case(0.12, 0.22, 880.0, 0.0),
        "held": case(4.27, 57.96, 75.0, 44620.2),
        "released": case(0.13, 0.75, 850.0, 64393.5),
    },
    "reqwest": {  # a run where holding made no difference
        "alone": case(0.1, 0.2, 900.0, 0.0),
        "held": case(0.2, 0.4, 800.0, 20000.0),
        "released": case(0.15, 0.4, 850.0, 40000.0),
    },
}


def test_the_reading_carries_the_figures_given():
    beast, reqwest = progress_reading(LINE)
    assert beast == (
        "- **beast, a Python thread beside the calls**: a thread that sleeps 1 ms in a loop woke late by a median of "
        "4.27 ms (P99 57.96 ms) beside the 10 workers' calls with the GIL held, 0.13 ms (P99 0.75 ms) with it "
        "released and 0.12 ms alone, and made 9% and 97% of the beats it makes alone, while the workers made 44,620 "
        "and 64,394 requests/s. Holding the GIL kept the rest of the program waiting for the interpreter's switch "
        "interval, however fast the machine answered."
    )
    # where the figures do not show it, the reading does not claim it
    assert reqwest.endswith(": in this run holding the GIL did not keep it waiting.")


def test_no_probe_no_sentence_and_the_report_places_it_after_the_held_released_reading():
    assert progress_reading({}) == []
    assert progress_reading({"workers": 10, "beast": {}}) == []
    figures = GilFigures(Workload(), 1000, [], [], "loopback", "clientbench gil", progress=LINE)
    text, _, _ = readings(figures)
    assert [t.split("**")[1] for t in text] == [
        "beast",
        "reqwest",
        "beast, a Python thread beside the calls",
        "reqwest, a Python thread beside the calls",
    ]


def test_gil_md_has_the_heartbeat_table_after_the_reading():
    from clientbench.report import Heading, Table
    from clientbench.report.gil import document

    figures = GilFigures(Workload(), 1000, [], [], "loopback", "clientbench gil", progress=LINE)
    blocks = document(figures).blocks
    at = blocks.index(Heading("A Python thread beside the calls", 2))
    table = blocks[at + 2]
    assert isinstance(table, Table) and [c.label for c in table.columns][:3] == ["Binding", "Beside", "Late P50(ms)"]
    assert table.rows[:3] == [
        ["beast", "alone", "0.12", "0.22", "880", "-"],
        ["beast", "held", "4.27", "57.96", "75", "44620"],
        ["beast", "released", "0.13", "0.75", "850", "64394"],
    ]
    assert len(table.rows) == 6
    # no probe (an older folder): no heading, no table
    bare = document(GilFigures(Workload(), 1000, [], [], "loopback", "clientbench gil")).blocks
    assert Heading("A Python thread beside the calls", 2) not in bare
