"""`clientbench cost`: the tools' output read right, the command's bad input as one-line errors, and a real
measurement of the C++ Beast row (callgrind, strace, DHAT against the axum server) whose counts are positive
and repeat within 1% from one run to the next."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clientbench import cli
from clientbench.commands.cost import (
    CostError,
    Settings,
    callgrind_instructions,
    dhat_totals,
    expand_names,
    strace_calls,
    table,
)
from clientbench.errors import SetupError

STRACE = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 60.16    0.008494         772        11         1 futex
 23.88    0.003372          11       300           sendto
 14.30    0.002019           6       300           recvfrom
  0.05    0.000007           7         1         1 ioctl
------ ----------- ----------- --------- --------- ----------------
100.00    0.014120          19       612         2 total
"""


def test_the_tools_output_is_read():
    assert callgrind_instructions("# callgrind format\nevents: Ir\nsummary: 68638866\n\ntotals: 68638866\n") == 68638866
    assert strace_calls(STRACE) == {"futex": 11, "sendto": 300, "recvfrom": 300, "ioctl": 1}
    log = "==323== Total:     158,440 bytes in 30 blocks\n==323== At t-gmax: 144,771 bytes in 17 blocks\n"
    assert dhat_totals(log) == (158440, 30)
    for read in (callgrind_instructions, strace_calls, dhat_totals):
        with pytest.raises(CostError):
            read("valgrind: something went wrong\n")


def test_a_short_name_selects_the_one_row_it_ends():
    assert expand_names(["cpp-beast,floor", "py-*"]) == ["cpp-beast", "cpp-floor", "py-*"]
    assert expand_names(["sync"]) == ["sync"]  # several rows end so: left to the selection's error
    assert expand_names(None) is None


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
            "instructions_per_request": instructions,
            "syscalls_per_request": 2.0,
            "syscalls": {"sendto": 1.0, "recvfrom": 1.0, "futex": 0.001},
            "allocations_per_request": 0.0,
            "allocated_bytes_per_request": 40.0,
        }

    t = table([row("cpp-beast", 4800.0), row("cpp-floor", 1600.0), row("py-x", None, "failed", "boom")])
    assert [c.label for c in t.columns][:3] == ["Client", "Instructions/req", "x floor"]
    assert t.rows[0][:5] == ["cpp-beast", "4,800", "3.00", "2.00", "recvfrom 1, sendto 1"]
    assert t.rows[2][:2] == ["py-x", "boom"]
    assert "x floor" not in [c.label for c in table([row("cpp-beast", 4800.0)]).columns]


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
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
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
        assert row["instructions_per_request"] > 0
        assert row["syscalls_per_request"] > 0
        assert row["allocations_per_request"] >= 0 and row["allocated_bytes_per_request"] >= 0
        assert all(c["instructions"] > 0 for c in row["totals"]["instructions"].values())
        assert all(c["blocks"] > 0 for c in row["totals"]["allocations"].values())  # the process allocates
    for key in ("instructions_per_request", "syscalls_per_request"):
        a, b = first[key], second[key]
        assert abs(a - b) <= 0.01 * max(a, b), (key, a, b)
    # allocations per request may be 0: within 1% of the larger, or equal
    for key in ("allocations_per_request", "allocated_bytes_per_request"):
        a, b = first[key], second[key]
        assert abs(a - b) <= 0.01 * max(a, b) + 1e-9, (key, a, b)
