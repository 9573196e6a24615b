"""Shared clients and HTTP/2 (`--client-scope per-worker|shared`, `--http 1.1|2`, docs/raw-format.md): the Python
harness and plugins, the runner's unsupported rows, the protocol each row reported and the fallback flag."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import clientbench.cli as cli
import pytest
from clientbench import harness, sdk
from clientbench.analysis.gil import GilFigures, shared_reading
from clientbench.model import DriverRun, Row, RunStatus
from clientbench.report import Heading
from clientbench.report.gil import document
from clientbench.report.table import run_table
from clientbench.schema import validate_raw, validate_results
from clientbench.workload import Workload
from support.rows import client, good_run, row

INFO = {"language": "Python", "library": "fake", "library_version": "0", "mode": "sync", "gil": None}


def _parse(*argv: str) -> Any:
    return harness.parser("test driver").parse_args(["--url", "http://127.0.0.1:1/", *argv])


def _results(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "latest" / "results.json").read_text())
    validate_results(doc)
    return doc


def _rows(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["client"]["name"]: r for r in doc["rows"]}


# -- the harness -----------------------------------------------------------------------------------------------------


class Counting:
    """A fake library: every client it made, every client a request went through (from which thread), closes."""

    def __init__(self) -> None:
        self.made: list[object] = []
        self.used: set[int] = set()
        self.threads: set[int] = set()
        self.closed: list[object] = []
        self.lock = threading.Lock()

    def make(self, opts: Any) -> object:
        self.made.append(object())
        return self.made[-1]

    def request(self, c: object, url: str) -> tuple[int, int]:
        with self.lock:
            self.used.add(id(c))
            self.threads.add(threading.get_ident())
        return 200, 7


@pytest.mark.parametrize("scope, clients", [("per-worker", 4), ("shared", 1)])
def test_the_sync_harness_makes_one_client_when_shared(scope, clients):
    lib = Counting()
    driver = harness.SyncDriver(lib.make, lib.request, lib.closed.append)
    doc = driver.run(_parse("--workers", "4", "--requests", "5", "--warmup", "1", "--client-scope", scope), INFO)
    validate_raw(doc)
    assert doc["workload"]["client_scope"] == scope and doc["workload"]["http"] == "1.1"
    # W threads either way; a shared client's first contact (one warm-up request alone) comes from the main thread
    assert len(lib.made) == len(lib.used) == clients and len(lib.threads) == 4 + (scope == "shared")
    assert sorted(map(id, lib.closed)) == sorted(map(id, lib.made))  # each client closed once
    assert sum(w["count"] - w["failure_count"] for w in doc["workers"]) == 20


@pytest.mark.parametrize("scope, clients", [("per-worker", 3), ("shared", 1)])
def test_the_async_harness_makes_one_client_when_shared(scope, clients):
    lib = Counting()

    async def make(opts: Any) -> object:
        return lib.make(opts)

    async def request(c: object, url: str) -> tuple[int, int]:
        return lib.request(c, url)

    async def close(c: object) -> None:
        lib.closed.append(c)

    doc = harness.AsyncDriver(make, request, close).run(
        _parse("--workers", "3", "--requests", "4", "--client-scope", scope), INFO
    )
    validate_raw(doc)
    assert len(lib.made) == len(lib.used) == clients
    assert sorted(map(id, lib.closed)) == sorted(map(id, lib.made))
    assert sum(w["count"] - w["failure_count"] for w in doc["workers"]) == 12


def test_the_protocol_probe_is_worker_zeros_client_after_the_timed_group():
    lib = Counting()
    probed: list[tuple[object, int]] = []

    def protocol(c: object, url: str) -> str:
        probed.append((c, threading.get_ident()))
        return "h2"  # a library's own name: the document writes the contract's

    driver = harness.SyncDriver(lib.make, lib.request, protocol=protocol)
    doc = driver.run(_parse("--workers", "2", "--requests", "3", "--http", "2"), INFO)
    assert doc["client"]["protocol"] == "HTTP/2" and doc["workload"]["http"] == "2"
    assert len(probed) == 1 and probed[0][0] in lib.made and probed[0][1] in lib.threads
    assert sum(w["count"] for w in doc["workers"]) == 6  # the probe is not a timed request
    # with HTTP/1.1 the plugin holds its library to it: no request outside the workload
    doc = driver.run(_parse("--workers", "2", "--requests", "3"), INFO)
    assert doc["client"]["protocol"] == "HTTP/1.1" and len(probed) == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--client-scope", "global"], "--client-scope: must be one of per-worker, shared, got 'global'"),
        (["--http", "4"], "--http: must be one of 1.1, 2, 3, got '4'"),
        (["--connection", "new", "--client-scope", "shared"], "--connection new does not go with --client-scope"),
    ],
)
def test_bad_driver_flags_exit_2_with_one_line(argv, message):
    proc = subprocess.run(
        [sys.executable, "-m", "clientbench.plugin", "clientbench.drivers.requests_driver:SYNC"]
        + ["--url", "http://127.0.0.1:1/", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "target, argv, said",
    [
        ("clientbench.drivers.requests_driver:SYNC", ["--http", "2"], "unsupported: HTTP/2"),
        ("clientbench.drivers.aiohttp_driver:ASYNC", ["--http", "2"], "unsupported: HTTP/2"),
        ("clientbench.drivers.pycurl_driver:SYNC", ["--client-scope", "shared"], "unsupported: --client-scope shared"),
        ("clientbench.drivers.binding:beast_released", ["--http", "2"], "unsupported: HTTP/2"),
    ],
)
def test_a_plugin_refuses_what_it_cannot_do_with_exit_3(target, argv, said, server):
    proc = subprocess.run(
        [sys.executable, "-m", "clientbench.plugin", target, "--url", server.url + "/", "--requests", "1", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr.startswith(said) and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("plugin", ["reqwest_released", "reqwest_async"])
def test_the_reqwest_bindings_shared_client_over_http2(plugin, server):
    binding = pytest.importorskip("reqwest_client")
    from clientbench.drivers.binding import capabilities

    if not capabilities(binding, "reqwest")["http2"]:
        pytest.skip("the installed reqwest binding has no http2 option")
    proc = subprocess.run(
        [sys.executable, "-m", "clientbench.plugin", f"clientbench.drivers.binding:{plugin}", "--url",
         server.url + "/", "--workers", "4", "--requests", "10", "--client-scope", "shared", "--http", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["client"]["protocol"] == "HTTP/2" and doc["workload"]["client_scope"] == "shared"
    assert sum(w["failure_count"] for w in doc["workers"]) == 0


# -- the runner ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--client-scope", "global"], "argument --client-scope: invalid choice"),
        (["run", "--http", "4"], "argument --http: invalid choice"),
        (["sweep", "workers", "--http", "1.0"], "argument --http: invalid choice"),
    ],
)
def test_bad_flag_values_are_one_cli_line(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 2  # and where help is


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--http", "3"],
        ["run", "--http", "3", "--target", "http://127.0.0.1:1"],
        ["sweep", "protocol"],  # its default points hold 3
        ["gil", "--http", "3"],
    ],
)
def test_http3_without_tls_is_one_line_before_anything_starts(capsys, tmp_path, argv):
    assert cli.main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == "clientbench: error: --http 3 is HTTP/3 over QUIC, which needs TLS: add --tls, or give --target https://...\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_new_connection_per_request_does_not_go_with_a_shared_client(capsys, tmp_path):
    assert cli.main(["run", "--connection", "new", "--client-scope", "shared", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("clientbench: error: --connection new does not go with --client-scope shared")
    assert len(err.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == []


def test_shared_clients_open_at_most_w_connections(tmp_path):
    code = cli.main(["run", "-c", "py-httpx-sync,py-aiohttp,py-requests", "--client-scope", "shared", "-w", "4",
                     "-n", "10", "-r", "1", "--warmup", "1", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    doc = _results(tmp_path)
    assert doc["workload"]["client_scope"] == "shared"
    for name, r in _rows(doc).items():
        (run,) = r["runs"]
        assert r["status"] == "ok" and run["stats"]["errors"] == 0, name
        assert 1 <= run["server_counts"]["connections"] <= 4, name
        assert r["client"]["protocol"] == "HTTP/1.1"
        assert run["command"][-3:] == ["--client-scope", "shared", "--phases"]
    header = next(ln for ln in (tmp_path / "latest" / "table.md").read_text().splitlines() if "| Language" in ln)
    assert "Protocol" in header and "Conns" in header


def test_http2_for_a_client_without_it_is_unsupported_not_failed(tmp_path):
    code = cli.main(["run", "-c", "py-requests,py-httpx-async", "--http", "2", "-w", "2", "-n", "5", "-r", "2",
                     "--warmup", "1", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0  # an unsupported row does not fail the run
    rows = _rows(_results(tmp_path))
    requests = rows["py-requests"]
    assert requests["status"] == "unsupported" and requests["aggregate"] is None
    assert [r["status"] for r in requests["runs"]] == ["unsupported"]  # asked once, not every repeat
    assert requests["reason"].startswith("unsupported: HTTP/2")
    httpx = rows["py-httpx-async"]  # h2c with prior knowledge over plain http
    assert httpx["status"] == "ok" and httpx["client"]["protocol"] == "HTTP/2"
    assert all(r["server_counts"]["h2_connections"] == r["server_counts"]["connections"] == 2 for r in httpx["runs"])
    table = (tmp_path / "latest" / "table.md").read_text()
    line = next(ln for ln in table.splitlines() if "| requests" in ln)
    assert "unsupported: HTTP/2" in line and "FAILED" not in line


def test_http2_over_tls_one_connection(tmp_path):
    shared = tmp_path / "shared"
    h2_rows = (
        "py-httpx2-sync",
        "py-httpx2-async",
        "py-reqwest-released",
        "py-reqwest-async",
        "rust-reqwest",
        "py-niquests-sync",
        "py-niquests-async",
        "py-pyreqwest-sync",
        "py-wreq-async",
        "py-curl_cffi-async",
    )
    code = cli.main(["run", "--tls", "-c", ",".join((*h2_rows, "py-pycurl")), "--http", "2",
                     "--client-scope", "shared", "-w", "4", "-n", "10", "-r", "1", "--warmup", "1",
                     "--out", str(shared)])  # fmt: skip
    assert code == 0
    rows = _rows(_results(shared))
    for name in h2_rows:  # W streams over one connection
        (run,) = rows[name]["runs"]
        assert rows[name]["client"]["protocol"] == "HTTP/2" and run["stats"]["errors"] == 0
        assert run["server_counts"]["connections"] == run["server_counts"]["h2_connections"] == 1
    assert rows["py-pycurl"]["status"] == "unsupported"  # a Curl handle serves one thread
    one = tmp_path / "one"
    assert cli.main(["run", "--tls", "-c", "py-pycurl", "--http", "2", "-w", "1", "-n", "10", "-r", "1",
                     "--out", str(one)]) == 0  # fmt: skip
    (row,) = _results(one)["rows"]
    assert row["status"] == "ok" and row["client"]["protocol"] == "HTTP/2"
    assert row["runs"][0]["server_counts"]["connections"] == row["runs"][0]["server_counts"]["h2_connections"] == 1


FALLBACK = """
import urllib3
from clientbench import sdk


def make_client(opts):
    return urllib3.HTTPConnectionPool("127.0.0.1", int(opts.url.split(":")[2].split("/")[0]), maxsize=1)


def request(pool, url):
    r = pool.request("GET", url)
    return r.status, len(r.data)


def protocol(pool, url):
    return "HTTP/%d.%d" % divmod(pool.request("GET", url).version, 10)


# says it speaks HTTP/2, and answers every request over HTTP/1.1, as a library that silently falls back would
plugin = sdk.SyncClient("fallback", make_client, request, http2=True, protocol=protocol, distribution="urllib3")
"""


def test_a_row_that_asked_for_http2_and_got_http1_is_flagged(tmp_path, monkeypatch):
    (tmp_path / "fallback_plugin.py").write_text(FALLBACK)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    out = tmp_path / "out"
    code = cli.main(["run", "--client", "fallback_plugin:plugin", "-c", "py-fallback-plugin", "--http", "2",
                     "-w", "2", "-n", "5", "-r", "1", "--out", str(out)])  # fmt: skip
    assert code == 0
    (row,) = _results(out)["rows"]
    assert row["status"] == "ok" and row["client"]["protocol"] == "HTTP/1.1"
    line = next(ln for ln in (out / "latest" / "table.md").read_text().splitlines() if "| fallback" in ln)
    assert "HTTP/1.1 (fell back)" in line


def test_the_table_flags_a_fallback_and_leaves_other_rows_alone():
    def row(protocol: str, *flags: str) -> Row:
        r = Row(client())
        run = good_run(r.client)
        run.raw["client"]["protocol"] = protocol
        run.command = ["driver", "--url", "http://x/", *flags]
        r.add(run)
        if flags[-1:] == ("2",):  # the server's counts of two runs: 1 and 1, or 1 and 3 connections
            second = good_run(r.client, seed=1)
            second.raw["client"]["protocol"] = protocol
            second.command = run.command
            r.add(second)
            run.server_counts = {"connections": 1, "tls_handshakes": 0, "tls_resumed": 0}
            second.server_counts = {
                "connections": 1 if protocol == "HTTP/2" else 3,
                "tls_handshakes": 0,
                "tls_resumed": 0,
            }
        return r

    rows = [row("HTTP/2", "--http", "2"), row("HTTP/1.1", "--http", "2"), row("HTTP/1.1", "--client-scope", "shared")]
    unsupported = Row(client())
    unsupported.add(DriverRun(unsupported.client, RunStatus.UNSUPPORTED, reason="unsupported: HTTP/2 (x)"))
    table = run_table([*rows, unsupported])
    labels = [c.label for c in table.columns]
    cells = [dict(zip(labels, r, strict=True)) for r in table.rows]
    assert [c["Protocol"] for c in cells] == ["HTTP/2", "HTTP/1.1 (fell back)", "HTTP/1.1", "-"]
    assert [c["Conns"] for c in cells] == ["1", "2", "-", "-"]  # the median per run; none for a row not run
    assert cells[3]["Status"] == "unsupported: HTTP/2 (x)"
    assert table.styles == [None, "yellow", None, None]
    assert not unsupported.failed and not unsupported.counts_against_run and unsupported.status == "unsupported"
    # a table of rows that asked for neither keeps its columns
    plain = run_table([row("HTTP/1.1")])
    assert "Protocol" not in [c.label for c in plain.columns] and "Conns" not in [c.label for c in plain.columns]


def test_the_sdk_sizes_pools_by_scope():
    assert sdk.pool_size(_parse("--workers", "6")) == 1
    assert sdk.pool_size(_parse("--workers", "6", "--client-scope", "shared")) == 6
    assert not sdk.http2(_parse()) and sdk.http2(_parse("--http", "2"))


# -- the GIL report's shared-client reading --------------------------------------------------------------------------


def test_the_gil_reports_shared_client_reading_follows_the_figures():
    lmean = row("py-beast-held", "held", (1.0,)).aggregate.median.lmean_ms

    def shared(held_ms: float, released_ms: float) -> list[Row]:
        rows = [row("py-beast-held", "held", (held_ms,)), row("py-beast-released", "released", (released_ms,))]
        for r in rows:
            r.runs[0].server_counts = {"connections": 3, "tls_handshakes": 0, "tls_resumed": 0}
        return rows

    beast = shared(lmean * 9, lmean * 1.1)
    h2 = [row("py-reqwest-held", "held", (lmean * 1.7,)), Row(client("py-reqwest-released", "released"))]
    h2[1].add(
        DriverRun(h2[1].client, RunStatus.UNSUPPORTED, reason="unsupported: HTTP/2 (reqwest speaks HTTP/1.1 only)")
    )
    lines = shared_reading(beast, 10, "an HTTP/1.1 pool")
    assert len(lines) == 1 and lines[0].startswith("- **beast, one client shared by 10 threads over an HTTP/1.1 pool**")
    held, released = lines[0].split("GIL released")
    assert "they ran one at a time" in held and "the threads overlapped" in released
    assert "3 connection(s) at most per run" in released
    (line,) = shared_reading(h2, 10, "HTTP/2")
    assert "they overlapped only partly" in line and "GIL released: unsupported: HTTP/2" in line
    figures = GilFigures(
        workload=Workload(workers=10, requests=100),
        serial_requests=1000,
        serial=[],
        parallel=beast,
        network="loopback",
        command="clientbench gil --shared-client",
        shared=beast,
        shared_h2=h2,
    )
    headings = [b.text for b in document(figures).blocks if isinstance(b, Heading)]
    assert "One client shared by the threads (generated from the figures below)" in headings
    assert "10 workers, one shared client, HTTP/2" in headings
    without = GilFigures(Workload(), 1000, [], beast, "loopback", "clientbench gil")
    assert not any("shared" in b.text for b in document(without).blocks if isinstance(b, Heading))
