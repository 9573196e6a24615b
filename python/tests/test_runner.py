"""The runner: failed rows for misbehaving drivers, selection, and the server always stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import clientbench.cli as cli
from clientbench.clients import CLIENTS, ClientSpec, select
from clientbench.paths import SetupError
from clientbench.runner import Workload, run_driver
from clientbench.schema import validate_results
from clientbench.server import Server


def fake(name: str, code: str) -> ClientSpec:
    return ClientSpec(name, "Python", "fake", "sync", None, lambda: [sys.executable, "-c", code])


def test_crashing_driver_gives_a_failed_row():
    row = run_driver(fake("crash", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"),
                     "http://127.0.0.1:1/", Workload(), row_timeout_s=30)
    assert not row.ok and row.failed
    assert "status 3" in row.reason and "boom" in row.reason


def test_driver_killed_by_a_signal():
    row = run_driver(fake("segv", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"),
                     "http://127.0.0.1:1/", Workload(), row_timeout_s=30)
    assert not row.ok and "signal 11" in row.reason


def test_invalid_json_gives_a_failed_row():
    row = run_driver(fake("garbage", "print('{not json')"), "http://127.0.0.1:1/", Workload(), row_timeout_s=30)
    assert not row.ok and "not JSON" in row.reason


def test_hung_driver_is_killed_at_the_row_timeout():
    t0 = time.monotonic()
    row = run_driver(fake("hang", "import time; time.sleep(60)"), "http://127.0.0.1:1/", Workload(),
                     row_timeout_s=1)
    assert not row.ok and "timed out" in row.reason
    assert time.monotonic() - t0 < 15


def test_select_by_name_and_glob():
    assert [c.name for c in select(["cpp-beast"])] == ["cpp-beast"]
    assert {c.name for c in select(["py-reqwest-*"])} == {"py-reqwest-async", "py-reqwest-held",
                                                          "py-reqwest-released"}
    assert [c.name for c in select(["rust-reqwest,cpp-beast"])] == ["cpp-beast", "rust-reqwest"]  # table order
    assert [c.name for c in select(None)] == [c.name for c in CLIENTS if c.default]
    assert len(select(None, everything=True)) == len(CLIENTS)
    assert {"cpp-beast", "rust-reqwest", "py-requests", "py-aiohttp"} <= {c.name for c in select(None)}
    with pytest.raises(SetupError, match="no client matches 'nope'"):
        select(["nope"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_server_is_stopped_when_a_driver_crashes(tmp_path, monkeypatch):
    started: list[Server] = []

    class Recording(Server):
        def start(self) -> str:
            started.append(self)
            url = super().start()
            self.recorded_pid = self.pid
            return url

    crash = fake("crash", "import sys; sys.exit(1)")
    good = fake("good", "import sys; sys.exit(0)")  # prints nothing: invalid output
    import clientbench.session as session

    monkeypatch.setattr(session, "Server", Recording)
    monkeypatch.setattr(cli, "select", lambda patterns, everything=False: [crash, good])
    code = cli.main(["run", "-w", "1", "-n", "1", "-r", "2", "--out", str(tmp_path)])
    assert code == 1
    assert started and not _alive(started[0].recorded_pid)
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.is_symlink()]
    results = json.loads((run_dir / "results.json").read_text())
    validate_results(results)
    assert [r["status"] for r in results["rows"]] == ["failed", "failed"]
    assert [len(r["runs"]) for r in results["rows"]] == [2, 2]  # every repeat ran, none was skipped
    assert results["complete"] is True
    assert "Errors" in (run_dir / "table.md").read_text()
    assert (run_dir / "table.csv").read_text().startswith("Language,Library,")


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_server_and_driver_and_writes_partial_results(tmp_path, sig, code):
    proc = subprocess.Popen(
        [sys.executable, "-m", "clientbench", "run", "--clients", "py-requests", "-w", "1", "-n", "50",
         "--path", "/delay/200", "--out", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(_children(proc.pid)) < 2:  # server + driver
            time.sleep(0.1)
        kids = _children(proc.pid)
        assert len(kids) >= 2, "server and driver did not start"
        time.sleep(0.5)
        proc.send_signal(sig)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, proc.stderr.read()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.1)
    assert not any(_alive(k) for k in kids)
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.is_symlink()]
    results = json.loads((run_dir / "results.json").read_text())
    validate_results(results)
    assert results["complete"] is False and results["interrupted"]
    assert [r["status"] for r in results["rows"]] == ["not run"]  # interrupted in its first run


@pytest.mark.parametrize("argv, message", [
    (["run", "--workers", "0"], "must be >= 1"),
    (["run", "--requests", "ten"], "expected a whole number"),
    (["run", "--timeout", "0"], "must be > 0"),
    (["run", "--path", "nope"], "starts with '/'"),
    (["run", "--bogus"], "unrecognized arguments"),
    (["sweep", "colour"], "invalid choice"),
])
def test_bad_cli_input_is_one_line(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 2  # the error, and where to find help


@pytest.mark.parametrize("argv, expected", [
    (["run"], (10, 100, 10, 10)),
    (["gil"], (10, 100, 10, 10)),
    (["sweep", "workers"], (10, 100, 10, 10)),
    (["run", "--reference"], (10, 100, 0, 1)),  # the reference write-up: 10 x 100, one run, no warm-up
    (["run", "--reference", "-r", "3", "-n", "50"], (10, 50, 0, 3)),  # explicit flags win over --reference
    (["run", "-w", "4", "-n", "7", "--warmup", "0", "-r", "2"], (4, 7, 0, 2)),
])
def test_workload_defaults_and_the_reference_method(argv, expected):
    workload, repeat = cli.workload_from(cli.build_parser().parse_args(argv))
    assert (workload.workers, workload.requests, workload.warmup, repeat) == expected


def test_setup_errors_are_one_line(capsys, tmp_path):
    assert cli.main(["run", "--clients", "nope", "--out", "/nonexistent/x"]) == 2
    assert "no client matches" in capsys.readouterr().err


def test_a_real_run_writes_every_file_and_a_valid_results_json(tmp_path):
    """End to end through the CLI: two real drivers, two repeats, every output of the run folder."""
    code = cli.main(["run", "--clients", "cpp-beast,py-requests", "-w", "2", "-n", "5", "-r", "2", "--warmup", "1",
                     "--out", str(tmp_path)])
    assert code == 0
    run_dir = tmp_path / "latest"
    assert run_dir.is_symlink()
    results = json.loads((run_dir / "results.json").read_text())
    validate_results(results)
    assert [r["client"]["name"] for r in results["rows"]] == ["cpp-beast", "py-requests"]
    assert all(r["status"] == "ok" and len(r["runs"]) == 2 for r in results["rows"])
    assert all(r["aggregate"]["median"]["requests"] == 2 * 2 * 5 for r in results["rows"])
    env = results["environment"]
    assert env["cpu"]["logical_cores"] and env["python"]["version"] and env["toolchains"]["rustc"]
    assert env["python_packages"]["requests"]
    for name in ("table.md", "table.csv", "server.log", "plots/latency.png", "plots/bench.png",
                 "raw/cpp-beast.0.json", "raw/py-requests.1.json"):
        assert (run_dir / name).is_file(), name


def test_sweep_end_to_end(tmp_path):
    code = cli.main(["sweep", "payload", "--values", "13,4096", "--clients", "cpp-beast,py-requests", "-w", "2",
                     "-n", "3", "-r", "1", "--warmup", "0", "--out", str(tmp_path)])
    assert code == 0
    run_dir = tmp_path / "latest"
    summary = (run_dir / "sweep.md").read_text()
    assert "payload=13" in summary and "payload=4096" in summary and "C++ beast (sync)" in summary
    for value in (13, 4096):
        results = json.loads((run_dir / "points" / f"payload-{value}" / "results.json").read_text())
        validate_results(results)
        assert all(r["aggregate"]["median"]["body_bytes"] == 2 * 3 * value for r in results["rows"])
    assert (run_dir / "plots" / "sweep-payload.png").stat().st_size > 10_000


def test_gil_report_end_to_end(tmp_path):
    code = cli.main(["gil", "-w", "3", "-n", "20", "-r", "1", "--warmup", "1", "--out", str(tmp_path)])
    assert code == 0
    run_dir = tmp_path / "latest"
    report = (run_dir / "gil.md").read_text()
    assert "## Reading (generated from the figures below)" in report
    assert "**beast, GIL held**" in report and "**reqwest, GIL held**" in report
    assert "no complete held/released pair" not in report
    validate_results(json.loads((run_dir / "serial" / "results.json").read_text()))
    assert (run_dir / "plots" / "timeline.png").stat().st_size > 10_000


def test_soak_end_to_end(tmp_path):
    """Every soak target (bindings, native executables) with a small count: no failures, a JSON report."""
    code = cli.main(["soak", "-n", "3000", "--warmup", "500", "-w", "4", "--out", str(tmp_path)])
    assert code == 0
    report = json.loads((tmp_path / "latest" / "soak.json").read_text())
    assert [r["target"] for r in report["results"]] == ["py-beast", "py-reqwest", "py-reqwest-async",
                                                        "cpp-beast", "rust-reqwest"]
    for r in report["results"]:
        assert r["passed"] and r["requests"] == 3000 and r["failures"] == 0, r
        assert r["rss_warm_kib"] and r["rss_end_kib"]


def test_unreachable_target_is_one_line_and_leaves_no_folder(tmp_path, capsys, closed_port_url):
    assert cli.main(["run", "--target", closed_port_url, "-r", "1", "--out", str(tmp_path)]) == 2
    assert "does not answer" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
