"""Child processes: drivers (execution/driver_process.py), where a misbehaving driver gives a failed run with the
reason, never a crash of the runner, and the plan interleaves the repeats; the managed children
(execution/children.py: the server, toxiproxy), stopped and reaped on every path; and the client registry
(registry/shipped.py)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import signal
import sys
import time

import pytest
from clientbench.environment import binaries
from clientbench.environment.binaries import Unavailable
from clientbench.errors import SetupError
from clientbench.execution.children import ManagedProcess
from clientbench.execution.driver_process import run_driver
from clientbench.execution.plan import run_plan
from clientbench.model import DriverRun, RunStatus
from clientbench.options.rows import RowFlags, select
from clientbench.registry.shipped import CLIENTS
from clientbench.schema import RAW_SCHEMA_ID
from clientbench.workload import Workload
from support import fake_driver

NOWHERE = "http://127.0.0.1:1/"  # the fake drivers send no request


def test_crashing_driver_gives_a_failed_run():
    spec = fake_driver.code_spec("crash", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)")
    run = run_driver(spec, NOWHERE, Workload(), row_timeout_s=30)
    assert run.status is RunStatus.FAILED and run.crashed
    assert run.returncode == 3
    assert run.reason == "driver exited with status 3: boom"


def test_driver_killed_by_a_signal():
    spec = fake_driver.code_spec("segv", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    run = run_driver(spec, NOWHERE, Workload(), row_timeout_s=30)
    assert run.crashed and "signal 11" in run.reason


def test_invalid_json_gives_a_failed_run():
    run = run_driver(fake_driver.code_spec("garbage", "print('{not json')"), NOWHERE, Workload(), row_timeout_s=30)
    assert run.crashed and "not JSON" in run.reason


def test_hung_driver_is_killed_at_the_row_timeout():
    t0 = time.monotonic()
    run = run_driver(fake_driver.code_spec("hang", "import time; time.sleep(60)"), NOWHERE, Workload(), row_timeout_s=1)
    assert run.crashed and "timed out" in run.reason
    assert time.monotonic() - t0 < 15


def test_a_good_driver_gets_the_workload_as_flags():
    wl = Workload(workers=2, requests=3, warmup=1, timeout_s=4, connection="new")
    run = run_driver(fake_driver.spec("good"), NOWHERE, wl, row_timeout_s=30, hash_seed=7)
    assert run.status is RunStatus.OK and run.reason is None, run.reason
    assert run.command[-len(wl.flags(NOWHERE)) :] == wl.flags(NOWHERE)
    contract = {"url": NOWHERE, "workers": 2, "requests": 3, "warmup": 1, "timeout_s": 4, "connection": "new"}
    assert {k: run.raw["workload"].get(k, "missing") for k in contract} == contract
    assert run.stats.requests == 6 and run.stats.body_bytes == 6 * 13
    assert run.hash_seed == 7 and run.usage is not None and run.returncode == 0


def test_fixed_workers_override_the_workload():
    base = fake_driver.spec("serial")
    spec = dataclasses.replace(base, client=dataclasses.replace(base.client, fixed_workers=1))
    run = run_driver(spec, NOWHERE, Workload(workers=5, requests=2), row_timeout_s=30)
    assert run.status is RunStatus.OK and run.raw["workload"]["workers"] == 1 and run.stats.requests == 2


def test_a_row_whose_library_is_not_installed_is_unavailable_with_how_to_get_it(monkeypatch):
    # a Python driver row (the module is looked for before the driver starts: it never runs here)
    (base,) = select(RowFlags(("py-requests",)), CLIENTS)
    for optional, extra, hint in ((True, "peers", "make peers"), (False, "bindings", "make bindings")):
        spec = dataclasses.replace(
            base,
            client=dataclasses.replace(base.client, optional=optional),
            needs_module="no_such_module_here",
            extra=extra,
        )
        run = run_driver(spec, NOWHERE, Workload(), row_timeout_s=30)
        assert run.status is RunStatus.UNAVAILABLE and not run.crashed
        assert run.reason == f"unavailable: no_such_module_here is not installed: run `{hint}`"  # in a checkout
    # installed with pip (no checkout): the pip extra that brings it
    monkeypatch.setattr(binaries, "checkout", lambda: None)
    run = run_driver(spec, NOWHERE, Workload(), row_timeout_s=30)
    assert run.reason == 'unavailable: no_such_module_here is not installed: pip install "clientbench[bindings]"'


def test_a_native_row_that_is_not_built_or_installed_is_unavailable(monkeypatch, tmp_path):
    monkeypatch.setattr(binaries, "checkout", lambda: None)
    monkeypatch.setattr(binaries, "native_bin", lambda: None)
    (spec,) = select(RowFlags(("cpp-beast",)), CLIENTS)
    run = run_driver(spec, NOWHERE, Workload(), row_timeout_s=30)
    assert run.status is RunStatus.UNAVAILABLE
    assert run.reason == 'unavailable: the C++ Beast driver is not installed: pip install "clientbench[native]"'
    monkeypatch.setattr(binaries, "native_bin", lambda: tmp_path)  # clientbench-native's folder
    (tmp_path / "beast-driver").write_text("#!/bin/sh\nexit 7\n")
    (tmp_path / "beast-driver").chmod(0o755)
    run = run_driver(spec, NOWHERE, Workload(), row_timeout_s=30)
    assert run.command[0] == str(tmp_path / "beast-driver") and "exited with status 7" in (run.reason or "")


@pytest.mark.slow
def test_plan_interleaves_the_repeats_round_robin(tmp_path):
    a, b = fake_driver.spec("a"), fake_driver.spec("b", "--crash-on-repeat", "1")
    order: list[tuple[str, int]] = []
    done: list[DriverRun] = []
    rows = run_plan(
        [a, b],
        NOWHERE,
        Workload(workers=1, requests=2, repeat=3),
        row_timeout_s=30,
        out_dir=tmp_path,
        on_start=lambda s, i: order.append((s.name, i)),
        on_done=lambda r, i: done.append(r),
    )
    assert order == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert [r.client.name for r in rows] == ["a", "b"] and len(done) == 6
    assert [run.hash_seed for run in rows[0].runs] == [0, 1, 2]  # repeat i runs with PYTHONHASHSEED=i
    assert [run.status for run in rows[1].runs] == ["ok", "failed", "ok"]
    # every good run's raw document is kept, named after the row and the repeat; every run's stderr too
    assert [run.raw_file for run in rows[1].runs] == ["raw/b.0.json", None, "raw/b.2.json"]
    assert json.loads((tmp_path / "raw" / "a.2.json").read_text())["schema"] == RAW_SCHEMA_ID
    assert "boom (repeat 1)" in (tmp_path / "logs" / "b.1.stderr.log").read_text()


# -- managed children ----------------------------------------------------------------------------


UP = "print('up', flush=True)"


class Child(ManagedProcess):
    """A python child running `code`, ready once it printed `up` (UP); records its pid and its release."""

    reads_stdout = True
    stop_grace_s = 0.5

    def __init__(self, code: str, log=None, ready: bool = True):
        super().__init__(log, start_timeout=5)
        self.code, self.ready = code, ready
        self.started_pid: int | None = None
        self.released = 0

    def command(self) -> list[str]:
        return [sys.executable, "-c", self.code]

    def wait_ready(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        self.started_pid = self.proc.pid
        assert self.proc.stdout.readline() == b"up\n"
        if not self.ready:
            raise SetupError("never ready")

    def release(self) -> None:
        self.released += 1


def _reaped(pid: int) -> bool:
    """Gone, zombie included: a child that was stopped but not reaped would still have its /proc entry."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace_and_reaped():
    child = Child(f"import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); {UP}; time.sleep(60)")
    child.start()
    t0 = time.monotonic()
    assert child.stop() == -signal.SIGKILL
    assert 0.4 < time.monotonic() - t0 < 5
    assert _reaped(child.started_pid) and child.proc is None and child.released == 1
    assert child.stop() is None and child.released == 2  # stopping twice is harmless


def test_a_child_stops_on_sigterm_when_the_context_exits_with_an_error():
    with pytest.raises(RuntimeError), Child(f"import time; {UP}; time.sleep(60)") as child:
        raise RuntimeError("the command failed")
    assert _reaped(child.started_pid) and child.released == 1


def test_a_child_that_is_not_ready_is_stopped_before_the_error_is_raised(tmp_path):
    child = Child(f"import sys, time; sys.stderr.write('starting\\n'); sys.stderr.flush(); {UP}; time.sleep(60)",
                  log=tmp_path / "child.log", ready=False)  # fmt: skip
    with pytest.raises(SetupError, match="never ready"):
        child.start()
    assert _reaped(child.started_pid) and child.proc is None and child.released == 1
    assert (tmp_path / "child.log").read_text() == "starting\n"  # stderr went to the log, which is closed


# -- the client registry ---------------------------------------------------------------------------


def test_a_row_on_another_loop_is_unavailable_without_that_loop(monkeypatch):
    """py-reqwest-uvloop needs uvloop besides the binding: without it the row is unavailable with the extra that
    brings both (not an unsupported row, which a row of an installed extra would be)."""
    spec = next(c for c in CLIENTS if c.name == "py-reqwest-uvloop")
    assert (spec.needs_module, spec.also_needs) == ("reqwest_client", ("uvloop",))
    assert next(c for c in CLIENTS if c.name == "py-aiohttp-uvloop").also_needs == ()  # its needs_module is uvloop
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvloop" else real(name, *a))
    with pytest.raises(Unavailable, match=f"uvloop is not installed: {re.escape(binaries.hint(spec.extra))}"):
        spec.argv()


def test_registry_rows_are_unique_and_only_peers_are_optional():
    names = [c.name for c in CLIENTS]
    assert len(names) == len(set(names))
    assert all(c.name == c.client.name and c.label == c.client.label for c in CLIENTS)
    for c in CLIENTS:
        # a floor on uvloop is ours (its failure is fatal) though uvloop comes with the peers extra
        assert c.client.optional == (c.extra == "peers" and not c.client.floor), c.name
        assert not (c.client.optional and c.default), c.name  # peers are never in the default set
