"""External drivers (registry/external.py): any program that speaks the contract is a row (`--driver NAME=COMMAND`,
`--clients-file clients.toml`), labelled by its own document, selected by `-c` (names or tags), with every
workload flag passed on; and bad input: a program that does not exist, exits non-zero, prints invalid JSON, the
wrong schema or too few samples, or hangs past --row-timeout fails its row with one line while the run goes
on."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import clientbench.cli as cli
import pytest
from clientbench.errors import SetupError
from clientbench.options.rows import RowFlags, select
from clientbench.registry import external
from clientbench.registry.shipped import CLIENTS

SUPPORT = Path(__file__).resolve().parent / "support"
FAKE = SUPPORT / "fake_driver.py"  # answers every request itself, through the real harness
BROKEN = SUPPORT / "broken_drivers"
SMALL = ["-n", "3", "-w", "2", "-r", "1", "--warmup", "0"]


def command(*argv: str | Path) -> str:
    return shlex.join(str(a) for a in argv)


def python_code(code: str) -> str:
    return command(sys.executable, "-c", code)


def run(tmp_path: Path, *argv: str) -> tuple[int, dict[str, Any], Path]:
    """`clientbench run ARGV -o tmp_path/out`: its exit status, results.json and the run folder."""
    out = tmp_path / "out"
    code = cli.main(["run", *argv, "-o", str(out)])
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    return code, json.loads((folder / "results.json").read_text()), folder


def rows(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["client"]["name"]: r for r in results["rows"]}


def test_a_program_is_a_row_labelled_by_its_document(tmp_path: Path) -> None:
    code, results, folder = run(tmp_path, "--driver", f"ext={command(sys.executable, FAKE)}", "-c", "ext", *SMALL)
    assert code == 0
    row = rows(results)["ext"]
    assert row["status"] == "ok" and row["aggregate"]["median"]["requests"] == 6
    # the registry knows nothing about it: language, library, mode come from the driver's document
    client = row["client"]
    assert (client["language"], client["library"], client["mode"]) == ("Python", "fake", "sync")
    assert client["label"] == "Python fake (sync)" and client["library_version"] == "0"
    assert row["runs"][0]["command"][:2] == [sys.executable, str(FAKE)]
    table = (folder / "table.md").read_text()
    assert "| Python | fake |" in table


@pytest.mark.slow
def test_external_rows_join_the_default_set_and_c_selects_them(capsys: pytest.CaptureFixture[str]) -> None:
    specs = external.registry(drivers=[f"ext={command(sys.executable, FAKE)}"], entry_points=False)
    assert [s.name for s in select(RowFlags(), specs)] == [*(c.name for c in CLIENTS if c.default), "ext"]
    assert [s.name for s in select(RowFlags(("ext,cpp-beast",)), specs)] == ["cpp-beast", "ext"]
    assert cli.main(["list", "--driver", f"ext={command('./my driver', '--x')}"]) == 0
    assert "ext                      program './my driver' --x" in capsys.readouterr().out


def test_every_workload_flag_reaches_the_program(tmp_path: Path) -> None:
    """The open loop's flags and the started HTTPS server's CA: appended as for every row."""
    argv = ["--driver", f"ext={command(sys.executable, FAKE)}", "-c", "ext", "-w", "2", "-r", "1", "--warmup", "1"]
    code, results, _ = run(tmp_path, *argv, "--tls", "--rate", "50", "--duration", "0.2", "--timeout", "7")
    assert code == 0, rows(results)["ext"]["reason"]
    cmd = rows(results)["ext"]["runs"][0]["command"]
    flags = dict(zip(cmd[2::2], cmd[3::2], strict=False))
    assert flags["--url"].startswith("https://127.0.0.1:") and flags["--ca-file"].endswith("ca.pem")
    assert (flags["--rate"], flags["--duration"], flags["--timeout"], flags["--warmup"]) == ("50", "0.2", "7", "1")
    assert results["rows"][0]["aggregate"]["median"]["offered_rps"] == 50


def test_a_running_server_as_the_target(tmp_path: Path, server: Any) -> None:
    argv = ["--driver", f"ext={command(sys.executable, FAKE)}", "-c", "ext", *SMALL, "--path", "/bytes/13"]
    code, results, _ = run(tmp_path, *argv, "--target", server.url)
    assert code == 0
    cmd = rows(results)["ext"]["runs"][0]["command"]
    assert cmd[cmd.index("--url") + 1] == server.url + "/bytes/13"


@pytest.mark.slow
def test_a_clients_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "fake-driver"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} "$@"\n')
    script.chmod(0o755)
    clients = tmp_path / "clients.toml"
    clients.write_text(
        '[clients.fake-a]\ncommand = "bin/fake-driver"\ntags = ["fakes"]\n\n'  # relative to the file
        f"[clients.fake-b]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(FAKE))}]\n"
        'tags = ["fakes", "b"]\ndefault = false\n'
    )
    assert cli.main(["list", "--clients-file", str(clients)]) == 0
    listed = capsys.readouterr().out
    assert "fake-a                   program bin/fake-driver  (tags: fakes)" in listed
    assert "(tags: fakes, b; not in the default set)" in listed
    specs = external.registry(files=[clients], entry_points=False)
    assert "fake-a" in {s.name for s in select(RowFlags(), specs)} and "fake-b" not in {
        s.name for s in select(RowFlags(), specs)
    }
    code, results, _ = run(tmp_path, "--clients-file", str(clients), "-c", "fakes", *SMALL)  # a tag selects
    assert code == 0 and list(rows(results)) == ["fake-a", "fake-b"]
    assert all(r["status"] == "ok" for r in results["rows"])


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "expected [clients.NAME] tables"),
        ("[clients.x]\ncommand = 'a'\nplugin = 'm:o'\n", "give either command or plugin"),
        ("[clients.x]\n", "give either command or plugin"),
        ("[clients.x]\ncommand = 'a'\ncolour = 'red'\n", "unknown key(s) colour"),
        ("[clients.x]\ncommand = []\n", "command must be a string or a non-empty list"),
        ("[clients.x]\ncommand = 'a'\ntags = 'fast'\n", "tags must be a list of names"),
        ("[clients.x]\ncommand = 'a'\ndefault = 'yes'\n", "default must be true or false"),
        ("[clients.x]\nplugin = 'not a target'\n", "is not MODULE:OBJECT"),
        ("[clients.'bad name']\ncommand = 'a'\n", "is not a row name"),
        ("[clients.x]\ncommand = 'a \"'\n", "cannot split"),
        ("clients = [", "not TOML"),
        ("[clients.cpp-beast]\ncommand = 'a'\n", "two clients are named 'cpp-beast'"),
    ],
)
def test_a_bad_clients_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    clients = tmp_path / "clients.toml"
    clients.write_text(text)
    assert cli.main(["list", "--clients-file", str(clients)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--driver", "nameonly"], "expected NAME='COMMAND ARGS'"),
        (["--driver", "x="], "the command is empty"),
        (["--driver=-x=a"], "is not a row name"),
        (["--driver", "cpp-beast=a"], "two clients are named 'cpp-beast'"),
        (["--driver", "a=b", "--driver", "a=c"], "two clients are named 'a'"),
        (["--clients-file", "/no/such/clients.toml"], "No such file or directory"),
    ],
)
def test_bad_driver_options_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert cli.main(["run", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.slow
def test_bad_programs_fail_their_rows_and_the_run_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = {
        "missing": "/no/such/driver --flag",
        "exits-3": python_code("import sys; print('driver gave up', file=sys.stderr); sys.exit(3)"),
        "not-json": python_code("print('{this is not json')"),
        "other-schema": python_code("import json; print(json.dumps({'schema': 'someone.else/1'}))"),
        "too-few": command(sys.executable, BROKEN / "wrong_count.py"),
        "hangs": python_code("import time; time.sleep(60)"),
    }
    argv = [a for name, cmd in bad.items() for a in ("--driver", f"{name}={cmd}")]
    good = ["--driver", f"good={command(sys.executable, FAKE)}"]
    code, results, folder = run(tmp_path, *argv, *good, "-c", ",".join([*bad, "good"]), *SMALL, "--row-timeout", "5")
    assert code == 1  # rows of the run failed
    got = rows(results)
    assert got["good"]["status"] == "ok"
    reasons = {name: got[name]["reason"] for name in bad}
    assert all(got[name]["status"] == "failed" for name in bad), reasons
    assert reasons["missing"].startswith("command not found: /no/such/driver (no such file")
    assert reasons["exits-3"] == "driver exited with status 3: driver gave up"
    assert reasons["not-json"].startswith("driver output is not JSON")
    assert reasons["other-schema"].startswith("driver output is not a raw document: its schema is 'someone.else/1'")
    assert reasons["too-few"] == "driver ran another workload than asked: requests 2 (asked 3)"
    assert reasons["hangs"] == "timed out after 5 s"
    assert all("\n" not in r for r in reasons.values())
    err = capsys.readouterr().err
    for name in reasons:  # a progress line each: the row, FAILED and why (the console wraps it)
        assert any(ln.split()[:4] == [name, "FAILED", "no", "result"] for ln in err.splitlines()), name
    table = (folder / "table.md").read_text()
    assert all(f"FAILED: {reasons[name][:30]}" in table for name in bad)


def test_a_program_that_cannot_be_started(tmp_path: Path) -> None:
    script = tmp_path / "no-shebang"
    script.write_text("echo hello\n")  # executable, but not a program the kernel can start
    script.chmod(0o755)
    spec = external.program_spec("x", [str(script)])
    from clientbench.execution.driver_process import run_driver
    from clientbench.workload import Workload

    result = run_driver(spec, "http://127.0.0.1:1/", Workload(1, 1, 0, 1), row_timeout_s=10)
    assert result.crashed and result.reason == f"cannot start the driver {script}: Exec format error"


def test_programs_are_found_on_path_or_relative_to_their_base(tmp_path: Path) -> None:
    assert external.program_spec("x", ["sh", "-c", "true"]).argv()[0].endswith("/sh")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "drv").write_text("#!/bin/sh\n")
    with pytest.raises(SetupError, match="command not executable"):
        external.program_spec("x", ["d/drv"], base=tmp_path).argv()
    (tmp_path / "d" / "drv").chmod(0o755)
    assert external.program_spec("x", ["d/drv", "--a"], base=tmp_path).argv() == [str(tmp_path / "d" / "drv"), "--a"]
    with pytest.raises(SetupError, match="'no-such-program-here' is not on PATH"):
        external.program_spec("x", ["no-such-program-here"]).argv()
