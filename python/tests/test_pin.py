"""--pin: the drivers and the server kept to CPUs of their own, parsed and checked in one line, applied to every
process the runner starts for them, and recorded in results.json."""

from __future__ import annotations

import json
import os
import re

import pytest
from clientbench import cli
from clientbench.errors import SetupError
from clientbench.execution.server import Server
from clientbench.options import Pinning
from support import fake_driver

USABLE = frozenset({0, 1, 2, 3})


@pytest.mark.parametrize(
    "text, client, server",
    [
        ("client=0,server=1", {0}, {1}),
        ("server=2-3,client=0+1", {0, 1}, {2, 3}),
        ("auto", {0, 1}, {2, 3}),
    ],
)
def test_pin_specs(text, client, server):
    pin = Pinning.parse(text, USABLE)
    assert (pin.client, pin.server, pin.auto) == (client, server, text == "auto")
    assert Pinning.from_json(json.loads(json.dumps(pin.to_json()))) == pin


@pytest.mark.parametrize(
    "text, message",
    [
        ("client=0", "give both client=CPUS and server=CPUS"),
        ("client=0,server=9", "CPU(s) 9 are not usable here"),
        ("client=1-0,server=2", "expected CPU numbers"),
        ("cores=0,server=1", "expected client=CPUS,server=CPUS"),
        ("client=0,client=1,server=2", "expected client=CPUS,server=CPUS"),
    ],
)
def test_bad_pin_specs_are_one_line(text, message):
    with pytest.raises(SetupError, match=re.escape(message)):
        Pinning.parse(text, USABLE)
    with pytest.raises(SetupError, match="needs two usable CPUs"):
        Pinning.parse("auto", frozenset({0}))


def test_the_server_and_every_driver_run_on_their_cpus(tmp_path):
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        pytest.skip("--pin needs two usable CPUs on this machine")
    client, server = usable[0], usable[-1]
    with Server(cpus=frozenset({server})) as s:
        assert s.pid is not None and os.sched_getaffinity(s.pid) == {server}
    # a driver that says where it runs (in its stderr log), then does its job
    spec = fake_driver.code_spec(
        "where", "import os, sys; sys.stderr.write(repr(sorted(os.sched_getaffinity(0))) + '\\n'); sys.exit(3)"
    )
    code = cli.main(["run", "-n", "2", "-r", "1", "--pin", f"client={client},server={server}", "-o", str(tmp_path)])
    assert code in (0, 1)  # the shipped rows, whatever they came to; what matters is where they ran
    doc = json.loads((tmp_path / "latest" / "results.json").read_text())
    assert doc["pin"] == {"client": [client], "server": [server], "auto": False}
    from clientbench.execution.driver_process import run_driver
    from clientbench.workload import Workload

    run = run_driver(spec, "http://127.0.0.1:1/", Workload(workers=1, requests=1), row_timeout_s=30,
                     log_dir=tmp_path, cpus=frozenset({client}))  # fmt: skip
    assert (tmp_path / "where.stderr.log").read_text().strip() == repr([client]) and run.returncode == 3
