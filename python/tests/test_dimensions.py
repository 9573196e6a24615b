"""The sweep dimensions (dimensions.py), each defined once: the command line's choices and help, docs/usage.md's
list and `make help` come from them; a point's text is read, checked and turned into a workload, a network or an
endpoint by its dimension alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clientbench import cli
from clientbench.dimensions import DIMENSIONS, LADDER
from clientbench.errors import SetupError
from clientbench.network import Network
from clientbench.options.workload import sweep_points
from clientbench.workload import Workload

REPO = Path(__file__).resolve().parents[2]
BASE = Workload(workers=3, requests=7, repeat=2)


def test_every_dimension_has_what_the_sweep_needs():
    for name, dim in DIMENSIONS.items():
        assert dim.name == name and dim.help and dim.axis and dim.defaults
        assert dim.points(None) == list(dim.defaults)
        assert dim.points(dim.default_text()) == (sorted(dim.defaults) if dim.ladder else list(dim.defaults))
        for value in dim.defaults:  # every default point makes a workload the drivers accept
            dim.workload(BASE, value)
            assert dim.folder(value).startswith(f"{name}-")


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("workers", 8, BASE.replace(workers=8)),
        ("payload", 1024, BASE.replace(path="/bytes/1024")),
        ("delay", 5, BASE.replace(path="/delay/5")),
        ("connection", "new", BASE.replace(connection="new")),
        ("rtt", 5, BASE),  # the same workload, through a proxy of its own
        ("tls", "1.3", BASE),  # the same workload, on a server of its own
        ("rate", 2000.0, BASE.replace(rate=2000.0)),
        ("scenario", "long-50KB-h3", BASE.replace(path="/bytes/50000", http="3")),
        ("scenario", "short-1KB-h1.1", BASE.replace(path="/bytes/1000", connection="new")),
        ("scenario", "long-2MB-h2", BASE.replace(path="/bytes/2000000", http="2")),
    ],
)
def test_a_point_changes_the_workload_as_its_dimension_says(name, value, expected):
    assert DIMENSIONS[name].workload(BASE, value) == expected


def test_points_are_read_and_checked():
    assert DIMENSIONS["payload"].points("13, 1024") == [13, 1024]
    assert DIMENSIONS["rate"].points("4000,1000,4000") == [1000.0, 4000.0]  # a ladder climbs, once per rate
    assert DIMENSIONS["rate"].points(None) == list(LADDER)
    assert DIMENSIONS["rate"].folder(2000.0) == "rate-2000" and DIMENSIONS["rate"].folder(0.5) == "rate-0.5"
    assert len(DIMENSIONS["scenario"].defaults) == 15  # the seed's five cases over three HTTP versions
    bad = (("workers", "0"), ("payload", "x"), ("connection", "both"), ("delay", " , "), ("rate", "0"))
    for name, values in (*bad, ("scenario", "long-5KB"), ("scenario", "medium-5KB-h3"), ("payload", "67108865")):
        with pytest.raises(SetupError, match="--values"):
            DIMENSIONS[name].points(values)


def test_the_rtt_point_records_its_network_over_the_commands():
    rtt = DIMENSIONS["rtt"]
    assert rtt.network is not None
    assert rtt.network(None, 5) == Network(rtt_ms=5)
    assert rtt.network(Network(rtt_ms=1, rate_kbit=1000, name="lan"), 5) == Network(rtt_ms=5, rate_kbit=1000)


def test_rates_and_values_go_with_the_right_dimension():
    with pytest.raises(SetupError, match="--rates goes with `sweep rate`"):
        sweep_points(DIMENSIONS["workers"], None, "1000", BASE)
    with pytest.raises(SetupError, match="give the rates once"):
        sweep_points(DIMENSIONS["rate"], "1000", "2000", BASE)
    with pytest.raises(
        SetupError, match="--rates 20000000: --rate 2e\\+07 over 3 worker"
    ):  # finer than the drivers' schedule for 3 workers
        sweep_points(DIMENSIONS["rate"], None, "20000000", BASE)
    assert sweep_points(DIMENSIONS["rate"], None, "500,250", BASE) == [250.0, 500.0]


def test_the_command_line_offers_every_dimension():
    parser = cli.build_parser()
    sweep = next(a for a in parser._subparsers._group_actions[0].choices["sweep"]._actions if a.dest == "dimension")
    assert list(sweep.choices) == list(DIMENSIONS)
    for name in DIMENSIONS:
        assert f"{name}: " in sweep.help


def test_docs_and_make_help_list_every_dimension():
    usage = (REPO / "docs" / "usage.md").read_text()
    line = next(ln for ln in usage.splitlines() if ln.startswith("| `make sweep DIM="))
    assert set(re.findall(r"`(\w+)`", line)) >= set(DIMENSIONS), line
    make = (REPO / "Makefile").read_text()
    line = next(ln for ln in make.splitlines() if ln.startswith("sweep:"))
    assert all(name in line for name in DIMENSIONS), line
