"""The workload (workload.py): its defaults, the driver flags, JSON, and resolve() (--reference, explicit
values win), also as the command line resolves it (cli.workload)."""

from __future__ import annotations

import dataclasses

import pytest
from clientbench import cli
from clientbench.workload import DEFAULT, REFERENCE, Workload, resolve

NOTHING_GIVEN = {f.name: None for f in dataclasses.fields(Workload)}


def test_defaults_and_the_reference_method():
    assert DEFAULT == Workload(
        workers=10, requests=100, warmup=10, timeout_s=30.0, path="/", connection="keep-alive", repeat=10
    )
    # the reference write-up: 10 x 100, one run, no warm-up; everything else as the defaults
    assert REFERENCE == DEFAULT.replace(repeat=1, warmup=0)


def test_workload_is_frozen_and_checks_the_connection():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.workers = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="connection"):
        Workload(connection="sometimes")
    assert DEFAULT.replace(workers=3) == Workload(workers=3) and DEFAULT.workers == 10


def test_flags_are_the_driver_contract():
    assert Workload(2, 3, 0, 1.5).flags("http://h/") == [
        "--url", "http://h/", "--workers", "2", "--requests", "3", "--warmup", "0", "--timeout", "1.5",
    ]  # fmt: skip
    new = Workload(2, 3, 0, 30.0, connection="new", repeat=4).flags("http://h/")
    assert new[new.index("--connection") + 1] == "new" and "--timeout" in new and "30" in new
    assert "--repeat" not in new  # repeats are the runner's business


def test_json_round_trip_and_results_1():
    wl = Workload(workers=3, requests=7, warmup=2, timeout_s=2.5, path="/bytes/9", connection="new", repeat=4)
    assert Workload.from_json(wl.to_json()) == wl
    old = wl.to_json()
    del old["connection"]  # results/1 did not record it: it was always keep-alive
    assert Workload.from_json(old) == wl.replace(connection="keep-alive")


def test_describe():
    assert DEFAULT.describe() == "10 workers x 100 requests, GET /, median of 10 run(s), warmup 10"
    assert "a new connection per request" in DEFAULT.replace(connection="new").describe()


@pytest.mark.parametrize(
    "given, reference, expected",
    [
        ({}, False, DEFAULT),
        ({}, True, REFERENCE),
        ({"requests": 50, "repeat": 3}, True, REFERENCE.replace(requests=50, repeat=3)),  # explicit values win
        ({"warmup": 5}, True, REFERENCE.replace(warmup=5)),
        ({"warmup": 0}, False, DEFAULT.replace(warmup=0)),  # 0 is a value, not "not given"
        ({"connection": "new", "path": "/x", "timeout_s": 2.0}, False,
         DEFAULT.replace(connection="new", path="/x", timeout_s=2.0)),
    ],
)  # fmt: skip
def test_resolve(given, reference, expected):
    assert resolve({**NOTHING_GIVEN, **given}, reference=reference) == expected
    assert resolve(given, reference=reference) == expected  # options not mentioned at all are not given


def test_resolve_ignores_other_options():
    assert resolve({"workers": 2, "clients": ["x"], "command": "run", "reference": True}) == DEFAULT.replace(workers=2)


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run"], DEFAULT),
        (["gil"], DEFAULT),
        (["sweep", "workers"], DEFAULT),
        (["run", "--reference"], REFERENCE),  # the reference write-up: 10 x 100, one run, no warm-up
        (["gil", "--reference"], REFERENCE),
        (["run", "--reference", "-r", "3", "-n", "50"], REFERENCE.replace(repeat=3, requests=50)),  # flags win
        (["run", "--reference", "--warmup", "2"], REFERENCE.replace(warmup=2)),
        (["run", "-w", "4", "-n", "7", "--warmup", "0", "-r", "2"], DEFAULT.replace(workers=4, requests=7, warmup=0,
                                                                                  repeat=2)),
        (["run", "--timeout", "2.5", "--path", "/bytes/10", "--connection", "new"],
         DEFAULT.replace(timeout_s=2.5, path="/bytes/10", connection="new")),
    ],
)  # fmt: skip
def test_the_command_line_resolves_the_workload_once(argv, expected):
    assert cli.workload(cli.build_parser().parse_args(argv)) == expected
