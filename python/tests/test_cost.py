"""`clientbench cost`: the tools' output read right, the request threads told from the main thread, the
command's bad input as one-line errors, and a real measurement of the C++ Beast row (callgrind and strace
against the axum server) whose counts are positive and repeat within 1% from one run to the next."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clientbench import cli
from clientbench.analysis.cost import (
    CostError,
    Counts,
    callgrind_allocations,
    callgrind_instructions,
    strace_threads,
)
from clientbench.errors import SetupError
from clientbench.options import CostSettings as Settings
from clientbench.options.rows import RowFlags, select
from clientbench.registry.shipped import CLIENTS
from clientbench.report.cost import table

STRACE = """\
4100  execve("/usr/bin/driver", ["driver"], 0x7ffd /* 20 vars */) = 0
4100  clone3({flags=CLONE_VM|CLONE_FS, ...} <unfinished ...>
4101  set_robust_list(0x7f, 24 <unfinished ...>
4100  <... clone3 resumed> => {parent_tid=[4101]}, 88) = 4101
4101  <... set_robust_list resumed>) = 0
4101  sendto(3, "GET / HTTP/1.1\\r\\n", 16, MSG_NOSIGNAL, NULL, 0) = 16
4101  recvfrom(3, "HTTP/1.1 200 OK", 65536, 0, NULL, NULL) = 15
4101  sendto(3, "GET / HTTP/1.1\\r\\n", 16, MSG_NOSIGNAL, NULL, 0) = 16
4101  recvfrom(3,  <unfinished ...>
4100  futex(0x7f, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, FUTEX_BITSET_MATCH_ANY <unfinished ...>
4101  <... recvfrom resumed>"HTTP/1.1 200 OK", 65536, 0, NULL, NULL) = 15
4101  +++ exited with 0 +++
4100  write(1, "{}", 2)             = 2
4100  +++ exited with 0 +++
"""

CALLGRIND = """\
# callgrind format
events: Ir
summary: 5294583
fn=(1) main
5 3
cfn=(2) malloc
calls=3 0x4
5 30
cfn=(3) operator new(unsigned long)
calls=2 0x8
5 40
fn=(3)
cfn=(2)
calls=2 0x0
5 20
cfn=(4) free
calls=4 0x0
5 10
fn=(5) grow
cfn=(6) realloc
calls=1 0x0
5 9
totals: 5294583
"""


def test_the_tools_output_is_read():
    assert callgrind_instructions(CALLGRIND) == 5294583
    assert callgrind_allocations(CALLGRIND) == 3 + 2 + 1  # malloc from main and operator new, realloc; not new
    assert strace_threads(STRACE) == {
        "1": {"execve": 1, "clone3": 1, "futex": 1, "write": 1},
        "2": {"set_robust_list": 1, "sendto": 2, "recvfrom": 2},
    }
    with pytest.raises(CostError):
        callgrind_instructions("valgrind: something went wrong\n")
    with pytest.raises(CostError):
        strace_threads("strace: exec: No such file or directory\n")


def test_only_the_request_threads_count_when_they_sent_the_requests():
    def counts(main: int, worker: int) -> dict[str, dict[str, int]]:
        return {"1": {"instructions": main}, "2": {"instructions": worker}}

    c = Counts({300: counts(10_000 + 300 * 20, 5_000 + 300 * 100), 100: counts(10_000 + 100 * 20, 5_000 + 100 * 100)})
    assert c.per_request(300, 100, "threads") == {"instructions": 100.0}
    assert c.per_request(300, 100, "process") == {"instructions": 120.0}


def test_a_short_name_selects_the_rows_it_ends():
    """cost's -c: the one selection's `tails`, a name that is no row's but ends rows' names stands for them."""

    def names(*patterns: str) -> list[str]:
        return [s.name for s in select(RowFlags(patterns), CLIENTS, tails=True)]

    wanted = {"cpp-beast", "cpp-floor"} | {c.name for c in CLIENTS if c.name.startswith("py-")}
    assert names("cpp-beast,floor", "py-*") == [c.name for c in CLIENTS if c.name in wanted]  # table order
    assert names("floor") == ["cpp-floor", "py-floor"]
    assert "py-httpx-sync" in names("sync")  # every row whose name ends so
    with pytest.raises(SetupError, match="no client matches 'nothing'"):  # the selection's one-line error
        names("nothing")
    assert names() == [c.name for c in CLIENTS if c.default]  # without -c: the default rows, as for run
    with pytest.raises(SetupError, match="no client matches 'floor'"):  # run's -c has no such expansion
        select(RowFlags(("floor",)), CLIENTS)


def test_settings_are_checked():
    with pytest.raises(SetupError, match="--baseline 200 must be below --requests 200"):
        Settings(requests=200, baseline=200)
    with pytest.raises(SetupError, match="unknown 'cycles'"):
        Settings(measures=Settings.parse_measures("instructions,cycles"))


def test_the_table_divides_by_the_floor_and_names_failures():
    def row(name, instructions, status="ok", reason=None):
        return {
            "name": name,
            "status": status,
            "reason": reason,
            "scope": "threads",
            "instructions_per_request": instructions,
            "syscalls_per_request": 2.0,
            "syscalls": {"sendto": 1.0, "recvfrom": 1.0, "futex": 0.001},
            "allocations_per_request": 0.0,
            "process": {"instructions_per_request": (instructions or 0) + 200.0, "syscalls_per_request": 2.5},
        }

    t = table([row("cpp-beast", 4800.0), row("cpp-floor", 1600.0), row("py-x", None, "failed", "boom")])
    assert [c.label for c in t.columns][:3] == ["Client", "Instructions/req", "x floor"]
    assert t.rows[0] == [
        "cpp-beast", "4,800", "3.00", "2.00", "recvfrom 1, sendto 1", "0.00", "request threads", "5,000", "2.50",
    ]  # fmt: skip
    assert [c.label for c in t.columns][-2:] == ["Process instr/req", "Process syscalls/req"]
    assert t.rows[2][:2] == ["py-x", "boom"]
    assert "x floor" not in [c.label for c in table([row("cpp-beast", 4800.0)]).columns]
    # a Python row against the Python floor when it was measured, the native rows against the native one
    py = [row("cpp-beast", 4800.0), row("cpp-floor", 1600.0), row("py-floor", 20000.0), row("py-x", 30000.0)]
    for r in py:
        r["label"] = ("Python " if r["name"].startswith("py-") else "C++ ") + r["name"]
    assert [cells[2] for cells in table(py).rows] == ["3.00", "1.00", "1.00", "1.50"]
    # an async Python row against the asyncio floor of its loop when it was measured (rloop has none: py-floor)
    loops = [row("py-floor", 20000.0), row("py-floor-async", 50000.0), row("py-floor-uvloop", 40000.0)]
    loops += [row("py-a", 100000.0), row("py-u", 60000.0), row("py-r", 80000.0), row("py-s", 30000.0)]
    labels = ["raw socket (sync)", "raw socket (async)", "raw socket+uvloop (async)", "x (async)", "x+uvloop (async)",
              "x+rloop (async)", "x (sync)"]  # fmt: skip
    for r, label in zip(loops, labels, strict=True):
        r["label"] = f"Python {label}"
    assert [cells[2] for cells in table(loops).rows] == ["1.00", "1.00", "1.00", "2.00", "1.50", "4.00", "1.50"]


# -- the command line ---------------------------------------------------------------------------------


def _error(capsys, argv: list[str]) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_an_unknown_row_is_a_one_line_error(capsys, tmp_path):
    err = _error(capsys, ["cost", "-c", "no-such-client", "-o", str(tmp_path)])
    assert err.startswith("clientbench: error: no client matches 'no-such-client'")
    assert not list(tmp_path.iterdir())


def test_missing_valgrind_is_a_one_line_error(capsys, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("strace", "env"):  # everything but valgrind
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    err = _error(capsys, ["cost", "-c", "cpp-beast", "-o", str(tmp_path / "out")])
    assert err == (
        "clientbench: error: valgrind is not installed (needed for instructions, allocations); "
        "install it with apt-get install valgrind"
    )
    assert not (tmp_path / "out").exists()


def test_a_baseline_at_or_above_the_requests_is_a_one_line_error(capsys):
    err = _error(capsys, ["cost", "-c", "cpp-beast", "-n", "100", "--baseline", "100"])
    assert "--baseline 100 must be below --requests 100" in err


# -- a real measurement ---------------------------------------------------------------------------------


def _measure(tmp_path: Path, name: str) -> dict:
    out = tmp_path / name
    assert cli.main(["cost", "-c", "cpp-beast", "-n", "600", "--baseline", "100", "-o", str(out)]) == 0
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    assert {"cost.json", "cost.md", "cost.csv"} <= {p.name for p in folder.iterdir()}
    doc = json.loads((folder / "cost.json").read_text())
    assert doc["schema"] == "clientbench.cost/1"
    assert (doc["requests"], doc["baseline"]) == (600, 100)
    (row,) = doc["rows"]
    assert row["name"] == "cpp-beast" and row["status"] == "ok", row["reason"]
    assert "cpp-beast" in (folder / "cost.md").read_text()
    return row


def test_the_cost_of_a_native_row_is_positive_and_repeats_within_one_percent(tmp_path):
    first, second = _measure(tmp_path, "a"), _measure(tmp_path, "b")
    for row in (first, second):
        assert row["scope"] == "threads"  # the worker thread sent the requests
        assert row["instructions_per_request"] > 0
        assert row["syscalls_per_request"] > 0
        assert row["allocations_per_request"] >= 0
        assert row["process"]["instructions_per_request"] > row["instructions_per_request"]
        for measure in ("instructions", "allocations"):  # the process's threads each counted, at both counts
            assert all(len(threads) >= 2 for threads in row["totals"][measure].values())
        assert all(t["1"]["allocations"] > 0 for t in row["totals"]["allocations"].values())  # start-up allocates
    # allocations per request may be 0: within 1% of the larger, or equal
    for key in ("instructions_per_request", "syscalls_per_request", "allocations_per_request"):
        a, b = first[key], second[key]
        assert abs(a - b) <= 0.01 * max(a, b) + 1e-9, (key, a, b)
