"""`clientbench run --target` against servers nobody here wrote that speak one protocol only, started by the tests:
Hypercorn on aioquic with its QUIC listener and no TCP one (HTTP/3 only: support/quicserver.py, `tcp=False`), and
Debian's nginx with an `http2` listener on plain HTTP (HTTP/2 with prior knowledge only: nginx 1.22 answers an
HTTP/1.1 request there with HTTP/2 frames). The runner's probe speaks the protocol asked (execution/probe.py); every
row that speaks it runs with 0 errors, says it got it, and has its connections counted on the client's side (the
Conns column, which no server of ours fills here); a target that answers none of the protocols asked is one line
and exit status 2, within the probe's timeout."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clientbench.execution.probe import CHECK_TIMEOUT_S
from support import nginx
from support.quicserver import QuicServer, quic_server
from test_outside_quic import H3_ROWS

pytest.importorskip("curl_cffi")  # the HTTP/3 peers (`make peers`), as test_outside_quic.py needs them

#: the rows that speak HTTP/2 with prior knowledge over plain http (docs/usage.md)
H2C_ROWS = ["rust-reqwest", "rust-reqwest-sync", "py-reqwest-released", "py-reqwest-async", "py-httpx-sync",
            "py-httpx-async", "py-niquests-sync", "py-curl_cffi-async"]  # fmt: skip
#: impit's client holds a second QUIC endpoint (a UDP socket of quinn's) that stays idle, which the client-side
#: count, of sockets, includes when it saw it: up to twice its connections (docs/http3.md)
TWO_ENDPOINTS = {"py-impit-sync", "py-impit-async", "py-impit-uvloop", "py-impit-rloop"}
H2C = """
    server {{
        listen 127.0.0.1:{port} http2;
        location / {{ return 200 "Hello, World!"; }}
    }}
"""
WORKERS = 2
#: requests per worker over HTTP/3: enough that each client's quinn socket lives through many of the runner's looks
#: at the driver's files (every 2 ms) on a machine loaded by the other suites; with 10 one was missed (docs/http3.md)
H3_REQUESTS = 300


@pytest.fixture(scope="module")
def quic_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuicServer]:
    with quic_server(tmp_path_factory.mktemp("hypercorn-quic-only"), tcp=False) as s:
        yield s


@pytest.fixture(scope="module")
def h2c_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if why := nginx.missing():
        pytest.skip(why)
    with nginx.running(tmp_path_factory.mktemp("nginx-h2c"), H2C) as port:
        yield f"http://127.0.0.1:{port}/"


def _runner(*argv: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """`python -m clientbench ...` from an empty folder, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "clientbench", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "250"})  # fmt: skip


def _rows(folder: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads((folder / "results" / "latest" / "results.json").read_text())
    return {row["client"]["name"]: row for row in doc["rows"]}


def _conns(folder: Path) -> list[str]:
    """The Conns cell of every row of table.md."""
    lines = [ln for ln in (folder / "results" / "latest" / "table.md").read_text().splitlines() if ln.startswith("|")]
    column = [c.strip() for c in lines[0].strip("|").split("|")].index("Conns")
    return [ln.strip("|").split("|")[column].strip() for ln in lines[2:]]


# every HTTP/3 row, each a new interpreter: beside the suites and the aarch64 build, 5-10 s a row (over 120 s in all)
@pytest.mark.timeout(600)
@pytest.mark.long(90)
def test_every_http3_row_measures_a_server_that_listens_on_udp_only(quic_only: QuicServer, tmp_path: Path) -> None:
    with socket.socket() as tcp:  # nothing on the TCP side of the port: the rows can only have gone over QUIC
        assert tcp.connect_ex(("127.0.0.1", int(quic_only.url.rsplit(":", 1)[1]))) != 0
    done = _runner("run", "--target", quic_only.url + "/", "--ca-file", str(quic_only.ca_file), "--http", "3",
                   "-c", ",".join(H3_ROWS), "-w", str(WORKERS), "-n", str(H3_REQUESTS), "--warmup", "1", "-r", "1",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _rows(tmp_path)
    assert sorted(rows) == sorted(H3_ROWS)
    for name, row in rows.items():
        assert row["status"] == "ok", (name, row["reason"], quic_only.log.read_text()[-2000:])
        assert row["client"]["protocol"] == "HTTP/3", name
        (run,) = row["runs"]
        assert (run["stats"]["requests"], run["stats"]["errors"]) == (WORKERS * H3_REQUESTS, 0), name
        # one QUIC connection per worker's client, no TCP attempt
        counted = run["connections"]
        assert run["server_counts"] is None and counted["tcp"] == 0, name
        if name in TWO_ENDPOINTS:
            assert WORKERS <= counted["quic"] <= 2 * WORKERS, (name, counted)
        else:
            assert counted["quic"] == WORKERS, (name, counted)
    assert "-" not in _conns(tmp_path)


@pytest.mark.long(40)
def test_every_prior_knowledge_http2_row_measures_an_h2c_only_server(h2c_only: str, tmp_path: Path) -> None:
    done = _runner("run", "--target", h2c_only, "--http", "2", "-c", ",".join(H2C_ROWS), "-w", str(WORKERS),
                   "-n", "10", "--warmup", "1", "-r", "1", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _rows(tmp_path)
    assert sorted(rows) == sorted(H2C_ROWS)
    for name, row in rows.items():
        assert row["status"] == "ok" and row["client"]["protocol"] == "HTTP/2", (name, row["reason"])
        (run,) = row["runs"]
        assert (run["stats"]["requests"], run["stats"]["errors"]) == (WORKERS * 10, 0), name
        assert run["connections"] == {"tcp": WORKERS, "quic": 0}, name
    assert set(_conns(tmp_path)) == {str(WORKERS)}


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clientbench: error: --target "), done.stderr
    return lines[0]


def test_a_target_that_does_not_answer_the_protocol_asked_is_one_line(
    quic_only: QuicServer, h2c_only: str, tmp_path: Path
) -> None:
    ca = str(quic_only.ca_file)
    # the QUIC-only server asked for HTTP/1.1 and HTTP/2 (ALPN h2): nothing on its TCP port
    for http, named in (("1.1", "HTTP/1.1"), ("2", "HTTP/2 (ALPN h2)")):
        done = _runner("run", "--target", quic_only.url + "/", "--ca-file", ca, "--http", http, "-c", "rust-reqwest",
                       "-n", "5", "-r", "1", cwd=tmp_path)  # fmt: skip
        assert f"does not answer {named}: " in _one_line_error(done)
    # the h2c-only one asked for HTTP/1.1: HTTP/2 frames where a status line should be
    done = _runner("run", "--target", h2c_only, "-c", "rust-reqwest", "-n", "5", "-r", "1", cwd=tmp_path)
    assert "does not answer HTTP/1.1: not an HTTP/1.1 answer" in _one_line_error(done)
    assert list(tmp_path.glob("results/*")) == []  # nothing measured: no run folder left


def test_a_target_silent_over_quic_is_one_line_within_the_probe_s_timeout(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:  # a UDP port that nobody answers on
        udp.bind(("127.0.0.1", 0))
        url = f"https://127.0.0.1:{udp.getsockname()[1]}/"
        started = time.monotonic()
        done = _runner("run", "--target", url, "--insecure", "--http", "3", "-c", "rust-reqwest", "-n", "5",
                       cwd=tmp_path)  # fmt: skip
        took = time.monotonic() - started
    said = _one_line_error(done)
    assert said.endswith(f"does not answer HTTP/3 (QUIC, ALPN h3): no answer within {CHECK_TIMEOUT_S:g} s"), said
    assert took < 2 * CHECK_TIMEOUT_S + 10  # one wait of the probe's (not one per path), and the interpreter's start


def test_a_target_silent_over_tls_is_one_line_that_says_it_timed_out(tmp_path: Path) -> None:
    """A TCP port that accepts and never answers the TLS handshake, asked for HTTP/2 and HTTP/1.1: the reason is the
    probe's "timed out", not the TLS library's own text."""
    with socket.socket() as silent:  # the kernel accepts into the backlog; nobody reads
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"https://127.0.0.1:{silent.getsockname()[1]}/"
        for http, named in (("2", "HTTP/2 (ALPN h2)"), ("1.1", "HTTP/1.1")):
            done = _runner("run", "--target", url, "--insecure", "--http", http, "-c", "rust-reqwest", "-n", "5",
                           cwd=tmp_path)  # fmt: skip
            said = _one_line_error(done)
            assert said.endswith(f"does not answer {named}: timed out"), said
