"""Python plugins (clientbench.sdk, python -m clientbench.plugin): the plugins docs/bring-your-own-client.md
shows, written in a folder outside the repository, are rows with no change to the project (and pass
check-driver); entry points; --interpreters; the SDK's documents and labels; a plugin that cannot be loaded or
that raises, as one line for its row while the run goes on; a body cut short classified as the contract says."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import clientbench.cli as cli
import pytest
from clientbench import harness, plugin, sdk
from clientbench.registry import external
from clientbench.registry.spec import PythonDriver
from support import REPO

DOC = REPO / "docs" / "bring-your-own-client.md"
STDLIB_PLUGIN = Path(__file__).resolve().parent / "support" / "broken_drivers" / "stdlib_plugin.py"
SMALL = ["-n", "3", "-w", "2", "-r", "1", "--warmup", "1"]


def doc_block(language: str, containing: str) -> str:
    (block,) = [b for b in re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S) if containing in b]
    return str(block)


def clientbench(*argv: str, cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it from their own folder: the project untouched, their plugins on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "CLIENTBENCH_ROOT": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "clientbench", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def results_of(out: Path) -> dict[str, Any]:
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    doc: dict[str, Any] = json.loads((folder / "results.json").read_text())
    return doc


@pytest.fixture()
def user_folder(tmp_path: Path) -> Path:
    """The docs' plugins, saved as the docs say, in a folder outside the repository."""
    assert not tmp_path.resolve().is_relative_to(REPO)
    folder = tmp_path / "my-plugins"
    folder.mkdir()
    (folder / "mybench.py").write_text(doc_block("python", 'sdk.SyncClient("urllib3"'))
    (folder / "mybench_async.py").write_text(doc_block("python", 'sdk.AsyncClient("aiohttp"'))
    return folder


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_docs_plugins_are_rows_with_no_change_to_the_project(user_folder: Path, tmp_path: Path) -> None:
    uvloop = "py-mybench-uvloop=mybench_async:plugin --loop uvloop"
    argv = ["--client", "mybench:plugin", "--client", "mybench_async:plugin", "--client", uvloop]
    proc = clientbench("run", *argv, "-c", "py-mybench*", *SMALL, "-o", str(tmp_path / "out"), **_at(user_folder))
    assert proc.returncode == 0, proc.stderr
    rows = {r["client"]["name"]: r for r in results_of(tmp_path / "out")["rows"]}
    assert list(rows) == ["py-mybench", "py-mybench-async", "py-mybench-uvloop"]
    labels = {name: r["client"]["label"] for name, r in rows.items()}
    assert labels == {
        "py-mybench": "Python urllib3 (sync)",
        "py-mybench-async": "Python aiohttp (async)",
        "py-mybench-uvloop": "Python aiohttp+uvloop (async)",
    }
    assert all(r["status"] == "ok" and r["aggregate"]["median"]["requests"] == 6 for r in rows.values())
    assert rows["py-mybench"]["runs"][0]["command"][1:4] == ["-m", "clientbench.plugin", "mybench:plugin"]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_docs_plugin_passes_check_driver(user_folder: Path) -> None:
    proc = clientbench("check-driver", "--client", "mybench:plugin", **_at(user_folder))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "py-mybench: 39 passed, 0 failed, 9 not supported"  # GET only: no uploads, no streamed bodies
    skipped = [ln for ln in lines if ln.startswith("  skip")]
    # the docs' plugin has neither an upload nor a streamed form: those checks, and targets with uploads, skip
    assert [ln.split(":")[0] for ln in skipped] == ["  skip  upload"] * 4 + ["  skip  stream"] * 4 + ["  skip  targets"]
    assert skipped[0].endswith("not supported: unsupported: --method PUT (this driver sends GET only)")


def test_the_docs_clients_file_is_what_it_says(tmp_path: Path) -> None:
    file = tmp_path / "clients.toml"
    file.write_text(doc_block("toml", "[clients.go-nethttp]"))
    specs = {s.name: s for s in external.load_clients_file(file)}
    assert list(specs) == ["go-nethttp", "node-fetch", "py-mybench", "py-mybench-uvloop"]
    assert specs["go-nethttp"].tags == ("go", "examples") and specs["go-nethttp"].default
    assert not specs["node-fetch"].default
    assert specs["py-mybench-uvloop"].command == PythonDriver("mybench_async:plugin", ("--loop", "uvloop"))


def _at(folder: Path) -> dict[str, Path]:
    return {"cwd": folder.parent, "pythonpath": folder}


@pytest.mark.long(30)
def test_an_entry_point_is_a_row_of_every_run(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(STDLIB_PLUGIN, site / "mybench_ep.py")
    info = site / "mybench_ep-0.1.dist-info"  # what `pip install` writes for an entry point
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mybench-ep\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[clientbench.clients]\npy-ep-bench = mybench_ep:plugin\n")
    listed = clientbench("list", cwd=tmp_path, pythonpath=site)
    assert "py-ep-bench              Python plugin mybench_ep:plugin" in listed.stdout, listed.stderr
    proc = clientbench("run", *SMALL, "-o", str(tmp_path / "out"), cwd=tmp_path, pythonpath=site)
    assert proc.returncode == 0, proc.stderr
    rows = {r["client"]["name"]: r for r in results_of(tmp_path / "out")["rows"]}
    assert "cpp-beast" in rows and rows["py-ep-bench"]["status"] == "ok"  # with the default set, no option
    assert rows["py-ep-bench"]["client"]["library"] == "http.client"


@pytest.mark.slow
def test_a_plugin_under_another_interpreter(tmp_path: Path) -> None:
    """--python: the plugin row runs under that python (its module importable there: stdlib only)."""
    shutil.copy(STDLIB_PLUGIN, tmp_path / "stdbench.py")
    base = os.path.realpath(sys.executable)  # the venv's own python: another executable, no site-packages
    assert base != sys.executable
    proc = clientbench(
        "run", "--client", "stdbench:plugin", "-c", "py-stdbench", "--python", base, *SMALL,
        "-o", str(tmp_path / "out"), cwd=tmp_path, pythonpath=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (row,) = results_of(tmp_path / "out")["rows"]
    label = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert row["client"]["name"] == f"py-stdbench@{label}" and row["status"] == "ok"
    assert row["client"]["python"]["executable"] == base


# -- a plugin that cannot run ----------------------------------------------------------------------------

BAD_PLUGINS = {
    "boom_on_import.py": "raise RuntimeError('no network here')\n",
    "not_a_plugin.py": "plugin = 42\n",
    "factory_raises.py": "def plugin():\n    raise KeyError('missing setting')\n",
    "raises_in_client.py": (
        "from clientbench import sdk\n\n"
        "def make(opts):\n    raise RuntimeError('cannot build a client')\n\n"
        "plugin = sdk.SyncClient('broken', make, lambda c, u: (200, 13))\n"
    ),
    "raises_in_request.py": (
        "from clientbench import sdk\n\n"
        "def request(client, url):\n    raise OSError('the request fell over')\n\n"
        "plugin = sdk.SyncClient('broken', lambda opts: object(), request)\n"
    ),
}


@pytest.mark.slow
def test_bad_plugins_fail_their_rows_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, code in BAD_PLUGINS.items():
        (tmp_path / name).write_text(code)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    plugins = [f"{Path(n).stem.replace('_', '-')}={Path(n).stem}:plugin" for n in BAD_PLUGINS]
    plugins += ["missing-module=no_such_module_here:plugin", "missing-object=not_a_plugin:nope"]
    argv = [a for p in plugins for a in ("--client", p)] + ["--client", "good=clientbench.drivers.requests_driver:SYNC"]
    names = [p.split("=")[0] for p in plugins]
    out = tmp_path / "out"
    assert cli.main(["run", *argv, "-c", ",".join([*names, "good"]), *SMALL, "-o", str(out)]) == 1
    rows = {r["client"]["name"]: r for r in results_of(out)["rows"]}
    assert rows["good"]["status"] == "ok"
    reasons = {n: rows[n]["reason"] for n in names}
    assert all(rows[n]["status"] == "failed" for n in names), reasons
    prefix = "driver exited with status 1: clientbench.plugin: error: "
    assert reasons == {
        "boom-on-import": prefix + "cannot import boom_on_import: RuntimeError: no network here",
        "not-a-plugin": prefix + "not_a_plugin:plugin is int, not a plugin (clientbench.sdk.SyncClient or AsyncClient)",
        "factory-raises": prefix + "factory_raises:plugin() raised KeyError: 'missing setting'",
        "raises-in-client": "6 of 6 requests failed: Error: RuntimeError: cannot build a client",
        "raises-in-request": "6 of 6 requests failed: Error: OSError: the request fell over",
        "missing-module": prefix + "cannot import no_such_module_here: ModuleNotFoundError: No module named "
        "'no_such_module_here'",
        "missing-object": prefix + "not_a_plugin has no 'nope'",
    }
    err = capsys.readouterr().err
    assert all(any(ln.split()[:2] == [n, "FAILED"] for ln in err.splitlines()) for n in names), err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--client", "nocolon"], "'nocolon' is not MODULE:OBJECT"),
        (["--client", "a b:c"], "'a' is not MODULE:OBJECT"),
        (["--client", "x=mod:obj", "--client", "x=other:obj"], "two clients are named 'x'"),
        (["--client", "mod:obj", "--client", "mod:other"], "two clients are named 'py-mod'"),
    ],
)
def test_bad_client_options_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert cli.main(["run", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


# -- the SDK and the plugin runner ---------------------------------------------------------------------


def _doc(p: sdk.Plugin, *argv: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert sdk.run(p, ["--url", "http://127.0.0.1:1/", "--workers", "2", "--requests", "3", *argv]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_a_sync_plugin_runs_through_the_harness(capsys: pytest.CaptureFixture[str]) -> None:
    made: list[object] = []
    closed: list[object] = []

    def make(opts: sdk.Options) -> object:
        made.append(object())
        return made[-1]

    def upload(c: object, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        return 200, harness.upload_answer(body)

    p = sdk.SyncClient("fake", make, lambda c, u: (200, 13), upload, closed.append, version="1.2", gil="held")
    doc = _doc(p, "--warmup", "1", capsys=capsys)
    assert doc["client"] | {"python": None} == {
        "language": "Python", "library": "fake", "library_version": "1.2", "mode": "sync", "gil": "held",
        "python": None, "protocol": "HTTP/1.1",
    }  # fmt: skip
    assert [w["count"] for w in doc["workers"]] == [3, 3] and len(made) == len(closed) == 2
    doc = _doc(p, "--method", "PUT", "--body-size", "100", capsys=capsys)
    assert all(w["failure_count"] == 0 for w in doc["workers"]) and doc["workload"]["method"] == "PUT"


def test_an_async_plugin_takes_plain_or_coroutine_functions(capsys: pytest.CaptureFixture[str]) -> None:
    closed: list[object] = []

    async def request(c: object, url: str) -> tuple[int, int]:
        return 200, 13

    async def aclose(c: object) -> None:
        closed.append(c)

    for close in (closed.append, aclose):
        p = sdk.AsyncClient("fake", lambda opts: object(), request, close=close, info={"notes": "n"})
        doc = _doc(p, capsys=capsys)
        assert (doc["client"]["mode"], doc["client"]["notes"], doc["client"]["library_version"]) == (
            "async", "n", "unknown"
        )  # fmt: skip
        assert sum(w["count"] for w in doc["workers"]) == 6
    assert len(closed) == 4
    doc = _doc(p, "--loop", "uvloop", capsys=capsys)
    assert doc["client"]["library"] == "fake+uvloop" and doc["client"]["library_version"].startswith("unknown (uvloop ")


def test_a_plugin_without_upload_says_it_cannot(capsys: pytest.CaptureFixture[str]) -> None:
    p = sdk.SyncClient("fake", lambda opts: object(), lambda c, u: (200, 13))
    with pytest.raises(SystemExit) as exit_info:
        sdk.run(p, ["--url", "http://127.0.0.1:1/", "--method", "POST"])
    assert exit_info.value.code == 3  # docs/raw-format.md: unsupported, not bad usage
    out = capsys.readouterr()
    assert out.out == "" and out.err == "unsupported: --method POST (this driver sends GET only)\n"


def test_the_version_is_the_installed_distributions() -> None:
    assert sdk.SyncClient("requests", object, object).client_info()["library_version"] == harness.version("requests")
    info = sdk.SyncClient("x", object, object, distribution="urllib3").client_info()
    assert info["library_version"] == harness.version("urllib3")


@pytest.mark.parametrize(
    "target, message",
    [
        ("nocolon", "'nocolon' is not MODULE:OBJECT"),
        ("no_such_module_xyz:plugin", "cannot import no_such_module_xyz: ModuleNotFoundError: No module named"),
        ("clientbench.drivers.requests_driver:NOPE", "clientbench.drivers.requests_driver has no 'NOPE'"),
        ("clientbench.sdk:LOOPS", "clientbench.sdk:LOOPS is tuple, not a plugin"),
    ],
)
def test_the_plugin_runner_says_what_it_cannot_load(target: str, message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "clientbench.plugin", target, "--url", "http://127.0.0.1:1/"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == ""
    assert (
        proc.stderr.count("\n") == 1
        and proc.stderr.startswith("clientbench.plugin: error: ")
        and message in proc.stderr
    )


def test_the_plugin_runner_without_a_plugin_is_a_usage_error() -> None:
    assert plugin.main([]) == 2
    assert plugin.main(["--url", "x"]) == 2
    loaded = plugin.load("clientbench.drivers.binding:beast_held")  # a factory
    assert isinstance(loaded, sdk.SyncClient) and loaded.gil == "held"


# -- a body cut short --------------------------------------------------------------------------------------


def _short_bodies() -> list[Any]:
    import aiohttp
    import httpx
    import requests

    return [
        http.client.IncompleteRead(b"x" * 10, 90),
        requests.exceptions.ChunkedEncodingError(
            "('Connection broken: IncompleteRead(10 bytes read, 90 more expected)', IncompleteRead(10 bytes read))"
        ),
        httpx.RemoteProtocolError("peer closed connection without sending complete message body (received 10 bytes)"),
        aiohttp.ClientPayloadError(
            "Response payload is not completed: <ContentLengthError: 400, message='Not enough data to satisfy "
            "content length header (received 10 of 100 bytes).'>"
        ),
        ConnectionResetError(104, "Connection reset by peer"),
    ]


def test_a_body_cut_short_is_a_connection_error() -> None:
    """docs/raw-format.md: ConnectionError is also a short body, whatever the library calls it."""
    assert [harness.failure_class(e) for e in _short_bodies()] == ["ConnectionError"] * 5
    import httpx

    assert harness.failure_class(httpx.RemoteProtocolError("illegal status line")) == "ProtocolError"
