"""The options layer (options/): the value types, one line each whether argparse reads them or a list's point does,
and the one row selection every command's -c goes through, with each command's reading of it as an option: run's
names and globs, cost's tails, soak's exact targets, check-driver's named rows, --interpreters."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
from clientbench.commands.soak import TARGETS
from clientbench.errors import SetupError
from clientbench.options.rows import RowFlags, select
from clientbench.options.values import BadValue, items, number, positive, rate, rate_point, whole
from clientbench.registry.shipped import CLIENTS

# -- the value types ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "parse, text, message",
    [
        (positive, "0", "must be >= 1, got 0"),
        (positive, "ten", "expected a whole number, got 'ten'"),
        (rate, "0", "must be > 0, got 0"),
        (rate, "inf", "expected requests per second, got 'inf'"),
        (whole(0, 64, " (the bound)"), "65", "must be <= 64 (the bound), got 65"),
        (number(int, "a size in bytes", maximum=10), "11", "must be <= 10, got 11"),
        (rate_point, "x", "expected a number of requests/s, got 'x'"),
        (rate_point, "0", "a rate must be a positive number of requests/s, got '0'"),
    ],
)
def test_a_bad_value_is_one_line_for_argparse_and_for_a_list(parse, text, message):
    with pytest.raises(BadValue) as caught:
        parse(text)
    assert str(caught.value) == message
    # argparse's type error (its one-line usage error) and the command line's SetupError (a --values point)
    assert isinstance(caught.value, argparse.ArgumentTypeError) and isinstance(caught.value, SetupError)


def test_values_in_range_are_read():
    assert (positive("3"), rate("0.5"), whole(0, 64)("64"), rate_point("250")) == (3, 0.5, 64, 250.0)
    assert items(" a, ,b ,") == ["a", "b"]


# -- the one row selection ---------------------------------------------------------------------------------------


def test_select_by_name_and_glob():
    assert [c.name for c in select(RowFlags(("cpp-beast",)), CLIENTS)] == ["cpp-beast"]
    assert {c.name for c in select(RowFlags(("py-reqwest-*",)), CLIENTS)} == {
        "py-reqwest-async",
        "py-reqwest-held",
        "py-reqwest-released",
        "py-reqwest-uvloop",
    }
    table_order = ["cpp-beast", "rust-reqwest"]
    assert [c.name for c in select(RowFlags(("rust-reqwest,cpp-beast",)), CLIENTS)] == table_order
    assert [c.name for c in select(RowFlags(), CLIENTS)] == [c.name for c in CLIENTS if c.default]
    assert len(select(RowFlags(all=True), CLIENTS)) == len(CLIENTS)
    assert {"cpp-beast", "rust-reqwest", "py-requests", "py-aiohttp"} <= {c.name for c in select(RowFlags(), CLIENTS)}
    with pytest.raises(SetupError, match="no client matches 'nope'"):
        select(RowFlags(("nope",)), CLIENTS)


def test_a_row_named_exactly_is_explicit_and_a_glob_is_not():
    chosen = {s.name: s.explicit for s in select(RowFlags(("cpp-beast", "py-beast-*")), CLIENTS)}
    assert chosen["cpp-beast"] and not chosen["py-beast-held"]


def test_the_registry_takes_the_rows_from_outside_the_project():
    flags = RowFlags(("ext",), drivers=(f"ext={sys.executable} -c pass",))
    assert [s.name for s in select(flags)] == ["ext"]
    assert [s.name for s in select(RowFlags(drivers=flags.drivers, all=True))][-1] == "ext"


def test_soak_names_its_own_targets_exactly_in_the_order_given():
    def soak(*names: str) -> list[str]:
        return [t.name for t in select(RowFlags(names), TARGETS, exact=True, kind="soak target")]

    assert soak() == [t.name for t in TARGETS]  # every target without -c
    assert soak("cpp-beast,py-beast") == ["cpp-beast", "py-beast"]
    with pytest.raises(SetupError, match="unknown soak target\\(s\\) py-\\*; known: py-beast, py-reqwest"):
        soak("py-*")  # names, not globs


def test_check_driver_takes_only_the_rows_named():
    refusal = "give the driver"
    with pytest.raises(SetupError, match=refusal):
        select(RowFlags(), named=refusal)  # not the default rows
    program = select(RowFlags(program=(sys.executable, "driver.py")), named=refusal)
    assert [s.name for s in program] == ["driver"] and program[0].argv() == [sys.executable, "driver.py"]
    both = select(RowFlags(("cpp-beast",), drivers=(f"ext={sys.executable} -c pass",)), named=refusal)
    assert [s.name for s in both] == ["ext", "cpp-beast"]  # the --driver row, then the -c rows


def test_python_puts_the_python_rows_under_that_interpreter(tmp_path: Path):
    python = Path(sys.executable).resolve()
    rows = select(RowFlags(("cpp-beast,py-requests",), python=str(python)), CLIENTS)
    native, under = rows
    assert native.name == "cpp-beast" and native.python is None
    assert under.name.startswith("py-requests@") and under.python is not None
