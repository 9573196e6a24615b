"""The command line (cli.py, `python -m clientbench`): one-line errors, the server always stopped (also on
Ctrl-C/SIGTERM, with partial results), the help texts, every command end to end, and the package's layering
(no import cycle, no module but __main__ imports cli, no command imports another)."""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import clientbench
import clientbench.cli as cli
import clientbench.execution.testbed as testbed
import pytest
from clientbench.execution.server import Server
from clientbench.schema import validate_results
from support import fake_driver

PACKAGE = Path(clientbench.__file__).parent
REPO = PACKAGE.parents[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


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


def _run_dir(out: Path) -> Path:
    (run_dir,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    return run_dir


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--workers", "0"], "must be >= 1"),
        (["run", "--requests", "ten"], "expected a whole number"),
        (["run", "--timeout", "0"], "must be > 0"),
        (["run", "--path", "nope"], "starts with '/'"),
        (["run", "--connection", "sometimes"], "invalid choice"),
        (["run", "--bogus"], "unrecognized arguments"),
        (["sweep", "colour"], "invalid choice"),
        (["soak", "--max-rss-growth", "lots"], "expected a size in MiB, got 'lots'"),
        (["soak", "--max-rss-growth", "0"], "must be > 0"),
        (["soak", "--row-timeout", "5"], "unrecognized arguments"),  # a soak target is bounded by --max-seconds
        (["run", "--rate", "0"], "argument --rate: must be > 0, got 0"),
        (["run", "--rate", "-3"], "argument --rate: must be > 0, got -3"),
        (["run", "--rate", "fast"], "argument --rate: expected requests per second, got 'fast'"),
        (["run", "--rate", "inf"], "argument --rate: expected requests per second, got 'inf'"),
        (["run", "--rate", "nan"], "argument --rate: expected requests per second, got 'nan'"),
        (["run", "--rate", "10", "--duration", "0"], "argument --duration: must be > 0, got 0"),
        (["run", "--rate", "10", "--duration", "soon"], "argument --duration: expected seconds, got 'soon'"),
        (["run", "--arrival", "bursty"], "argument --arrival: invalid choice"),
        (["run", "--method", "DELETE"], "argument --method: invalid choice"),
        (["run", "--body-size", "-1"], "argument --body-size: must be >= 0, got -1"),
        (["run", "--body-size", "1073741825"], "argument --body-size: must be <= 1073741824, got 1073741825"),
        (["run", "--body-size", "1k"], "argument --body-size: expected a size in bytes, got '1k'"),
        (["sweep", "rate", "--slo", "0"], "argument --slo: must be > 0, got 0"),
    ],
)
def test_bad_cli_input_is_one_line(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 2  # the error, and where to find help


def test_setup_errors_are_one_line(capsys):
    assert cli.main(["run", "--clients", "nope", "--out", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err
    assert "no client matches" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--rate", "10", "--duration", "5", "-n", "3"], "--duration and --requests exclude each other"),
        (["run", "--duration", "5"], "--duration goes with --rate"),
        (["run", "--rate", "20000001", "-w", "2"], "schedules 1e+07 requests/s per worker, finer than the drivers"),
        (["run", "--body-size", "10"], "--body-size 10 goes with --method POST or PUT"),
        (["run", "--rate", "10", "--reference"], "--reference is the closed-loop reference method"),
        (["sweep", "rate", "--rate", "5"], "--rate: sweep runs its own rates (--rates)"),
        (["gil", "--rate", "5"], "--rate: gil runs its own rates (--rates)"),
        (["sweep", "workers", "--rates", "1,2"], "--rates goes with `sweep rate`"),
        (["sweep", "rate", "--rates", "100,x"], "--rates for rate: expected a number of requests/s, got 'x'"),
        (["sweep", "rate", "--rates", "100,0"], "--rates for rate: a rate must be a positive number of requests/s"),
        (["sweep", "rate", "-w", "1", "--rates", "2000000"], "--rates 2000000: --rate 2e+06 over 1 worker(s)"),
        (["gil", "--rates", "fast"], "--rates for rate: expected a number of requests/s"),
    ],
)
def test_open_loop_flags_that_do_not_fit_are_one_line_before_anything_starts(capsys, tmp_path, argv, message):
    assert cli.main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("clientbench: error: ") and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # no server started, no folder made


def test_unreachable_target_is_one_line_and_leaves_no_folder(tmp_path, capsys, closed_port_url):
    assert cli.main(["run", "--target", closed_port_url, "-r", "1", "--out", str(tmp_path)]) == 2
    assert "does not answer" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_soak_warms_up_before_its_last_request(capsys, monkeypatch):
    """The RSS growth is measured from the warm sample: an explicit --warmup at or past --requests is refused,
    and the default shrinks to half of a small --requests (the default 50,000 would never be reached)."""
    assert cli.main(["soak", "-n", "1000", "--warmup", "1000"]) == 2
    assert "--warmup 1000 must be below --requests 1000" in capsys.readouterr().err
    seen = {}
    monkeypatch.setattr(
        "clientbench.commands.soak.soak", lambda names, settings, *a: seen.setdefault("s", settings) and 0
    )
    assert cli.main(["soak", "-n", "20000"]) == 0
    assert seen["s"].warmup == 10_000


@pytest.mark.long(35)
def test_list_and_run_as_the_default_command(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "cpp-beast" in out and "py-httpx-sync" in out and "(not in the default set)" in out
    with pytest.raises(SystemExit):  # options without a command are run's
        cli.main(["--workers", "0"])
    assert "must be >= 1" in capsys.readouterr().err


def _subcommands(parser: argparse.ArgumentParser) -> tuple[dict[str, argparse.ArgumentParser], dict[str, str]]:
    """The command parsers, and each command's one-line summary."""
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices), {a.dest: a.help for a in sub._choices_actions}


def test_the_help_texts_match_what_the_commands_do():
    from clientbench.analysis.compare import MIN_REPEATS
    from clientbench.dimensions import DIMENSIONS
    from clientbench.options import SoakSettings

    parser = cli.build_parser()
    commands, summaries = _subcommands(parser)
    assert summaries["sweep"].endswith(f"({', '.join(DIMENSIONS)})")  # every dimension
    assert f"at least {MIN_REPEATS} repeats" in commands["compare"].description
    soak = commands["soak"]
    defaults = {a.dest: a.default for a in soak._actions}
    settings = SoakSettings()
    assert (defaults["requests"], defaults["workers"]) == (settings.requests, settings.workers)
    assert f"default {settings.warmup}," in next(a.help for a in soak._actions if a.dest == "warmup")
    assert (defaults["max_seconds"], defaults["max_rss_growth"]) == (settings.max_seconds, settings.max_rss_growth_mib)


def test_the_command_table_the_help_the_docs_and_the_modules_agree():
    """commands.COMMANDS is the one list: `clientbench --help` shows it in its order, docs/usage.md's command
    line names every command, and commands/ holds a module per command (with its parser, its typed options and
    its run) and what they share."""
    from clientbench.commands import COMMANDS

    names = [c.name for c in COMMANDS]
    assert len(set(names)) == len(names) > 10
    _, summaries = _subcommands(cli.build_parser())
    assert list(summaries) == names and all(summaries[c.name] == c.help for c in COMMANDS)
    listed = re.findall(r"^ {4}([\w-]+)(?: {2,}|$)", cli.build_parser().format_help(), re.M)
    assert listed == names
    usage = (REPO / "docs" / "usage.md").read_text()
    block = usage.split("## The command line", 1)[1].split("```", 2)[1]
    assert set(re.findall(r"^clientbench ([\w-]+)", block, re.M)) == set(names)
    modules = {p.stem for p in (PACKAGE / "commands").glob("*.py")} - {"__init__", "output"}
    assert modules == {c.module for c in COMMANDS}
    for c in COMMANDS:
        module = c.load()
        assert all(callable(getattr(module, part, None)) for part in ("add_parser", "from_args", "run")), c.name


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["run", "--help"], ["cost", "--help"]])
def test_the_help_and_list_import_no_numpy_nor_matplotlib(argv):
    """Every command's parser imports only what parsing needs: what a command runs is imported when it runs (and
    `list` looks each row up with find_spec and the distributions' metadata, importing none)."""
    code = (
        "import sys; from clientbench import cli\n"
        f"try:\n    cli.main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('numpy', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.splitlines()[-1] == "[]"


# -- the server is always stopped ------------------------------------------------------------------


def test_server_is_stopped_when_a_driver_crashes(tmp_path, monkeypatch):
    started: list[Server] = []

    class Recording(Server):
        def start(self) -> str:
            started.append(self)
            url = super().start()
            self.recorded_pid = self.proc.pid
            return url

    crash = fake_driver.code_spec("crash", "import sys; sys.exit(1)")
    good = fake_driver.code_spec("good", "import sys; sys.exit(0)")  # prints nothing: invalid output
    monkeypatch.setattr(testbed, "Server", Recording)
    monkeypatch.setattr("clientbench.commands.run.select", lambda flags, *among, **how: [crash, good])
    code = cli.main(["run", "-w", "1", "-n", "1", "-r", "2", "--out", str(tmp_path)])
    assert code == 1
    assert started and not _alive(started[0].recorded_pid)
    run_dir = _run_dir(tmp_path)
    results = json.loads((run_dir / "results.json").read_text())
    validate_results(results)
    assert [r["status"] for r in results["rows"]] == ["failed", "failed"]
    assert [len(r["runs"]) for r in results["rows"]] == [2, 2]  # every repeat ran, none was skipped
    assert results["complete"] is True
    assert "Errors" in (run_dir / "table.md").read_text()
    assert (run_dir / "table.csv").read_text().startswith("Language,Library,")


@pytest.mark.slow
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_server_and_driver_and_writes_partial_results(tmp_path, sig, code):
    # a child inherits an ignored SIGINT from a test run in the background (Python then keeps ignoring it): give
    # the runner the disposition a user's terminal gives it
    proc = subprocess.Popen(
        [sys.executable, "-m", "clientbench", "run", "--clients", "py-requests", "-w", "1", "-n", "50",
         "--path", "/delay/200", "--out", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
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
            proc.wait(timeout=10)
    assert proc.returncode == code, proc.stderr.read()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.1)
    assert not any(_alive(k) for k in kids)
    results = json.loads((_run_dir(tmp_path) / "results.json").read_text())
    validate_results(results)
    assert results["complete"] is False and results["interrupted"]
    assert [r["status"] for r in results["rows"]] == ["not run"]  # interrupted in its first run


# -- every command end to end ----------------------------------------------------------------------


@pytest.mark.slow
def test_a_real_run_writes_every_file_and_a_valid_results_json(tmp_path):
    """End to end through the CLI: two real drivers, two repeats, every output of the run folder."""
    code = cli.main(["run", "--clients", "cpp-beast,py-requests", "-w", "2", "-n", "5", "-r", "2", "--warmup", "1",
                     "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    run_dir = tmp_path / "latest"
    assert run_dir.is_symlink()
    results = json.loads((run_dir / "results.json").read_text())
    validate_results(results)
    assert results["schema"] == "clientbench.results/3"
    assert results["workload"] == {
        "workers": 2,
        "requests": 5,
        "warmup": 1,
        "timeout_s": 30.0,
        "path": "/",
        "connection": "keep-alive",
        "repeat": 2,
        "loop": "closed",
        "rate": None,
        "duration_s": None,
        "arrival": None,
        "seed": None,
        "method": "GET",
        "body_size": 0,
        "client_scope": "per-worker",
        "http": "1.1",
        "upload": "whole",
        "download": "whole",
        "chunk_size": 65536,
        "targets": None,
        "phases": True,
    }
    assert [r["client"]["name"] for r in results["rows"]] == ["cpp-beast", "py-requests"]
    assert all(r["status"] == "ok" and len(r["runs"]) == 2 for r in results["rows"])
    assert all(r["aggregate"]["median"]["requests"] == 2 * 2 * 5 for r in results["rows"])
    env = results["environment"]
    assert env["cpu"]["logical_cores"] and env["python"]["version"] and env["toolchains"]["rustc"]
    assert env["python_packages"]["requests"]
    for name in ("table.md", "table.csv", "server.log", "plots/latency.png", "plots/bench.png",
                 "raw/cpp-beast.0.json", "raw/py-requests.1.json"):  # fmt: skip
        assert (run_dir / name).is_file(), name


@pytest.mark.slow
def test_sweep_end_to_end(tmp_path):
    code = cli.main(["sweep", "payload", "--values", "13,4096", "--clients", "cpp-beast,py-requests", "-w", "2",
                     "-n", "3", "-r", "1", "--warmup", "0", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    run_dir = tmp_path / "latest"
    summary = (run_dir / "sweep.md").read_text()
    assert "payload=13" in summary and "payload=4096" in summary and "C++ beast (sync)" in summary
    for value in (13, 4096):
        results = json.loads((run_dir / "points" / f"payload-{value}" / "results.json").read_text())
        validate_results(results)
        assert results["workload"]["path"] == f"/bytes/{value}"
        assert all(r["aggregate"]["median"]["body_bytes"] == 2 * 3 * value for r in results["rows"])
    assert (run_dir / "plots" / "sweep-payload.png").stat().st_size > 10_000


@pytest.mark.long(55)
@pytest.mark.timeout(600)  # every phase, 14 rows with the free-threaded ones: over 120 s on a loaded machine
def test_gil_report_end_to_end(tmp_path):
    code = cli.main(["gil", "-w", "3", "-n", "20", "-r", "1", "--warmup", "1", "--rates", "100,200",
                     "--open-loop-duration", "0.5", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    run_dir = tmp_path / "latest"
    report = (run_dir / "gil.md").read_text()
    assert "## Reading (generated from the figures below)" in report
    assert "**beast, GIL held**" in report and "**reqwest, GIL held**" in report
    assert "no complete held/released pair" not in report
    # the open-loop phase: the four binding rows at both rates given
    assert "## Open loop: the rate each binding sustains (generated from the figures below)" in report
    assert "- **beast, open loop**" in report and "- **reqwest, open loop**" in report
    assert "did not both run" not in report
    for rate in (100, 200):
        point = json.loads((run_dir / "open-loop" / "points" / f"rate-{rate}" / "results.json").read_text())
        validate_results(point)
        assert point["workload"]["rate"] == rate and len(point["rows"]) == 4
        assert all(r["status"] == "ok" for r in point["rows"])
    assert (run_dir / "open-loop" / "sweep.md").is_file()
    validate_results(json.loads((run_dir / "serial" / "results.json").read_text()))
    assert (run_dir / "plots" / "timeline.png").stat().st_size > 10_000
    # the shared-client phase (on by default): both bindings over one HTTP/1.1 pool, the reqwest binding over h2
    assert "## One client shared by the threads (generated from the figures below)" in report
    for phase, rows in (("shared", 4), ("shared-h2", 2)):
        doc = json.loads((run_dir / phase / "results.json").read_text())
        validate_results(doc)
        assert doc["workload"]["client_scope"] == "shared" and len(doc["rows"]) == rows, phase
        assert all(r["status"] == "ok" and r["runs"][0]["stats"]["errors"] == 0 for r in doc["rows"]), phase
    # the round trip over HTTP/3 (issue #31): the reqwest rows through the UDP relay, on an HTTPS server the
    # report started for them (the report itself is plain HTTP)
    doc = json.loads((run_dir / "rtt-h3" / "results.json").read_text())
    validate_results(doc)
    assert doc["workload"]["http"] == "3" and doc["scheme"] == "https" and doc["network"]["rtt_ms"] == 1
    assert doc["network"]["emulator"] == "clientbench udp-relay"
    names = ["rust-reqwest-sync", "py-reqwest-held", "py-reqwest-released"]
    assert sorted(r["client"]["name"] for r in doc["rows"]) == sorted(names)
    for r in doc["rows"]:
        run = r["runs"][0]
        assert r["status"] == "ok" and run["stats"]["errors"] == 0, r["client"]["name"]
        assert run["server_counts"]["h3_requests"] > 0 and run["server_counts"]["connections"] == 0
    assert "- **reqwest** at rtt 1 ms over HTTP/3: GIL held Bench" in report
    assert "at rtt 1 ms over HTTP/3 (rtt 1 ms (the UDP relay))" in report
    # a Python thread beside the calls (probes/progress.py), in gil.json and in the reading
    progress = json.loads((run_dir / "gil.json").read_text())["progress"]
    assert (progress["workers"], progress["seconds"], progress["repeat"]) == (3, 0.5, 1)
    for lib in ("beast", "reqwest"):
        assert progress[lib]["held"]["requests_per_s"] > 0 and progress[lib]["released"]["requests_per_s"] > 0
        assert f"- **{lib}, a Python thread beside the calls**: a thread that sleeps 1 ms" in report


@pytest.mark.slow
def test_an_open_loop_run_and_a_rate_sweep_through_the_command_line(tmp_path, monkeypatch):
    """--rate reaches the drivers and gives the open-loop table; sweep rate takes --rates and --slo (simulated
    drivers of 2 workers at 0.5 ms a request: they keep up with 1,000/s, not with 8,000/s)."""
    fake = fake_driver.spec("sim", "--synthetic", "--service-us", "500")
    monkeypatch.setattr("clientbench.commands.run.select", lambda flags, *among, **how: [fake])
    monkeypatch.setattr("clientbench.commands.sweep.select", lambda flags, *among, **how: [fake])
    base = ["-w", "2", "--warmup", "0", "--duration", "0.5"]
    assert cli.main(["run", "--rate", "1000", "-r", "2", *base, "--out", str(tmp_path / "run")]) == 0
    results = json.loads((tmp_path / "run" / "latest" / "results.json").read_text())
    validate_results(results)
    wl = results["workload"]
    assert (wl["loop"], wl["rate"], wl["duration_s"], wl["requests"], wl["repeat"]) == ("open", 1000, 0.5, None, 2)
    command = results["rows"][0]["runs"][0]["command"]
    flags = ["--duration", "0.5", "--warmup", "0", "--timeout", "30", "--rate", "1000", "--arrival", "uniform"]
    assert command[command.index("--duration") :] == [*flags, "--seed", "1", "--phases"]
    table = (tmp_path / "run" / "latest" / "table.md").read_text()
    assert "| Offered(req/s) | Achieved(req/s) |" in table and "| no | ok |" in table
    argv = ["sweep", "rate", "--rates", "1000,8000", "--slo", "5", *base, "--out", str(tmp_path / "sweep")]
    assert cli.main(argv) == 0
    text = (tmp_path / "sweep" / "latest" / "sweep.md").read_text()
    assert "sustains **1,000 requests/s**" in text and "within 5 ms" in text and "(saturated)" in text


@pytest.mark.slow
@pytest.mark.parametrize("https", [False, True], ids=["http", "https"])
def test_soak_end_to_end(tmp_path, https):
    """Every soak target (bindings, native executables) with a small count: no failures, a JSON report. Over
    HTTPS every target is given the started server's CA."""
    tls = ["--tls"] if https else []
    code = cli.main(["soak", "-n", "3000", "--warmup", "500", "-w", "4", *tls, "--out", str(tmp_path)])
    assert code == 0
    report = json.loads((tmp_path / "latest" / "soak.json").read_text())
    assert [r["target"] for r in report["results"]] == ["py-beast", "py-reqwest", "py-reqwest-async", "cpp-beast",
                                                        "rust-reqwest"]  # fmt: skip
    for r in report["results"]:
        assert r["passed"] and r["requests"] == 3000 and r["failures"] == 0, r
        assert r["rss_warm_kib"] and r["rss_end_kib"]


# -- layering -------------------------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports (relative imports resolved; `from X import name` counts X and X.name)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("clientbench."):
            found.add(node.value)  # importlib.import_module("clientbench.x")
    return found


def test_no_module_but_main_imports_the_cli():
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 20 and PACKAGE / "commands" / "run.py" in modules
    importers = sorted(
        _module_name(p)
        for p in modules
        if any(m == "clientbench.cli" or m.startswith("clientbench.cli.") for m in imported_modules(p))
    )
    assert importers == ["clientbench.__main__"]


def test_the_package_has_no_import_cycle():
    """Every module can be read, and tested, after the ones it imports."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {m: sorted(d for d in imported_modules(p) if d in modules and d != m) for m, p in modules.items()}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path[path.index(module) :], module))
        if module not in done:
            for dep in graph[module]:
                visit(dep, (*path, module))
            done.add(module)

    for module in graph:
        visit(module, ())
    assert "clientbench.commands.gil" in done and len(done) == len(modules) > 40


def test_no_command_imports_another():
    """What commands share lives in commands/output.py, so each command can change on its own."""
    commands = {p.stem for p in (PACKAGE / "commands").glob("*.py")} - {"__init__", "output"}
    assert {"run", "sweep", "gil", "soak", "compare"} <= commands
    for name in sorted(commands):
        others = {f"clientbench.commands.{c}" for c in commands - {name}}
        assert not imported_modules(PACKAGE / "commands" / f"{name}.py") & others, name


def test_the_import_resolver_sees_relative_imports():
    assert "clientbench.cli" in imported_modules(PACKAGE / "__main__.py")  # `from .cli import main`
    run = imported_modules(PACKAGE / "commands" / "run.py")
    assert {"clientbench.model", "clientbench.execution.testbed"} <= run  # `from ..x import y`
    assert "clientbench.commands.output" in run  # `from .output import ...`
