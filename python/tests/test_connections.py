"""Connections counted on the client's side (execution/sockets.py: the kernel's socket tables through sock_diag), the
Conns column's figures where no server of ours counts them: exact for connections opened and closed in a moment,
blind to those that were there before, QUIC's unconnected sockets found in the driver's process; and where both
exist, every run's count agrees with what our server's /stats counted."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clientbench import cli
from clientbench.execution.sockets import ConnectionCounter, destinations
from clientbench.model import DriverRun, Row, RunStatus
from clientbench.report.table import run_table
from support.rows import client, good_run

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_NETLINK"), reason="the kernel's socket tables: Linux only")


@pytest.fixture()
def listener() -> Iterator[socket.socket]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        yield s


def _accept_all(listener: socket.socket, n: int) -> list[socket.socket]:
    return [listener.accept()[0] for _ in range(n)]


def test_every_tcp_connection_is_counted_even_one_closed_at_once_and_none_from_before(listener):
    to = destinations([f"http://127.0.0.1:{listener.getsockname()[1]}/"])
    assert to == {("127.0.0.1", listener.getsockname()[1])}
    before = socket.create_connection(listener.getsockname())  # there before: not the driver's
    accepted = _accept_all(listener, 1)
    counter = ConnectionCounter(to)
    counter.start()
    for _ in range(5):  # opened and closed between any two looks a sampler could take
        socket.create_connection(listener.getsockname()).close()
    kept = socket.create_connection(listener.getsockname())  # still open when the count is taken
    accepted += _accept_all(listener, 6)
    elsewhere = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # to another port: not counted
    elsewhere.connect(("127.0.0.1", 9))
    assert counter.stop() == {"tcp": 6, "quic": 0}
    for s in (before, kept, elsewhere, *accepted):
        s.close()


def test_udp_sockets_connected_to_the_server_are_quic_connections(listener):
    port = listener.getsockname()[1]
    counter = ConnectionCounter(destinations([f"https://localhost:{port}/"]), http3=True)
    counter.start()
    for _ in range(3):  # as libcurl's ngtcp2 and qh3 do: one connected UDP socket per QUIC connection
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.connect(("127.0.0.1", port))
            udp.send(b"x")
    assert counter.stop() == {"tcp": 0, "quic": 3}


#: a driver's process as quinn's clients make it: two UDP sockets connected to nothing, held for a while
ENDPOINTS = """
import socket, sys, time
held = []
for _ in range(2):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind(("::", 0))
    held.append(s)
time.sleep(float(sys.argv[1]))
"""


@pytest.mark.parametrize("per_client", [True, False])
def test_unconnected_udp_sockets_are_found_in_the_driver_process(per_client):
    counter = ConnectionCounter({("127.0.0.1", 1)}, http3=True, per_client=per_client)
    counter.start()
    proc = subprocess.Popen([sys.executable, "-c", ENDPOINTS, "0.3"])
    counter.watch(proc.pid)
    assert proc.wait(timeout=30) == 0
    # with a client per request (per_client False) they are not looked for: no count rather than a short one
    assert counter.stop() == ({"tcp": 0, "quic": 2} if per_client else None)


def test_without_http3_unconnected_udp_sockets_are_not_connections():
    counter = ConnectionCounter({("127.0.0.1", 1)})
    counter.start()
    proc = subprocess.Popen([sys.executable, "-c", ENDPOINTS, "0.1"])
    counter.watch(proc.pid)
    proc.wait(timeout=30)
    assert counter.stop() == {"tcp": 0, "quic": 0}


def test_the_count_of_a_run_is_the_server_s_where_it_counted_else_the_client_s():
    run = DriverRun(client(), RunStatus.OK, connections={"tcp": 1, "quic": 3})
    assert run.connection_count == 4
    run.server_counts = {"connections": 2, "quic_connections": 0, "tls_handshakes": 0, "tls_resumed": 0}
    assert run.connection_count == 2
    back = DriverRun.from_json(run.client, run.to_json())
    assert (back.connections, back.connection_count) == ({"tcp": 1, "quic": 3}, 2)


def test_the_conns_column_has_the_client_side_count_where_no_server_of_ours_counted():
    rows = []
    for counted, served in (({"tcp": 0, "quic": 2}, None), ({"tcp": 3, "quic": 0}, 1), (None, None)):
        r = Row(client())
        run = good_run(r.client)
        run.command = ["driver", "--http", "3"]
        run.connections = counted
        if served is not None:
            run.server_counts = {"connections": served, "tls_handshakes": 0, "tls_resumed": 0}
        r.add(run)
        rows.append(r)
    table = run_table(rows)
    column = [c.label for c in table.columns].index("Conns")
    assert [cells[column] for cells in table.rows] == ["2", "1", "-"]  # ours where it counted, else the client's


def _runs(out: Path) -> dict[str, list[dict[str, Any]]]:
    doc = json.loads((out / "latest" / "results.json").read_text())
    return {row["client"]["name"]: row["runs"] for row in doc["rows"]}


@pytest.mark.long(60)
@pytest.mark.parametrize(
    ("flags", "rows"),
    [
        (["--http", "1.1"], "cpp-beast,rust-reqwest,py-requests,py-aiohttp,py-reqwest-released"),
        (["--http", "1.1", "--connection", "new"], "rust-reqwest,py-requests"),
        (["--http", "2", "--client-scope", "shared"], "rust-reqwest,py-reqwest-async,py-httpx-async"),
        (["--http", "3"], "rust-reqwest,py-reqwest-released,py-reqwest-async"),
    ],
    ids=["http1.1", "new-connections", "http2-shared", "http3"],
)
def test_the_client_side_count_agrees_with_our_server_s(tmp_path, flags, rows):
    code = cli.main(["run", "--tls", *flags, "-c", rows, "-w", "3", "-n", "10", "--warmup", "1", "-r", "2",
                     "-o", str(tmp_path)])  # fmt: skip
    assert code == 0
    runs = _runs(tmp_path)
    assert sorted(runs) == sorted(rows.split(","))
    for name, repeats in runs.items():
        for run in repeats:
            served = run["server_counts"]
            assert run["status"] == "ok" and served["connections"] + served["quic_connections"] > 0, (name, run)
            assert run["connections"] == {"tcp": served["connections"], "quic": served["quic_connections"]}, name
