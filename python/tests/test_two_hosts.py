"""The two-machine recipe (docs/two-machines.md), on two hosts made on this machine: network namespaces joined by a
veth pair (iproute2), a real kernel network path between two addresses rather than loopback. `clientbench serve`
runs in one with a certificate issued for its address, `clientbench run --target` in the other; the rows measure
across it with 0 errors, and stopping `serve` leaves no server behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import REPO
from support.dualserver import make_pki


@dataclass(frozen=True)
class Hosts:
    server_ns: str
    client_ns: str
    server_ip: str


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def hosts() -> Iterator[Hosts]:
    if shutil.which("ip") is None:
        pytest.skip("iproute2's ip is not installed (apt-get install iproute2)")
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    tag = f"{os.getpid() % 100000}"
    net = f"10.{77 + os.getpid() % 100}.{os.getpid() % 250}"
    hosts = Hosts(f"cbs-{tag}", f"cbc-{tag}", f"{net}.1")
    made: list[str] = []
    try:
        for ns in (hosts.server_ns, hosts.client_ns):
            _ip("netns", "add", ns)
            made.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("link", "add", f"vs{tag}", "type", "veth", "peer", "name", f"vc{tag}")
        for ns, dev, addr in ((hosts.server_ns, f"vs{tag}", f"{net}.1"), (hosts.client_ns, f"vc{tag}", f"{net}.2")):
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
        yield hosts
    finally:
        for ns in made:  # deleting a namespace deletes its end of the veth pair, and so the pair
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)


def _runner(ns: str, *argv: str) -> list[str]:
    return ["ip", "netns", "exec", ns, sys.executable, "-m", "clientbench", *argv]


def test_serve_on_one_host_and_run_target_from_another(hosts: Hosts, tmp_path: Path) -> None:
    ca, cert, key = make_pki(tmp_path, f"IP:{hosts.server_ip}")
    env = {**os.environ, "CLIENTBENCH_ROOT": str(REPO)}
    serve = subprocess.Popen(
        _runner(hosts.server_ns, "serve", "--listen", f"{hosts.server_ip}:0", "--tls", "--tls-cert", str(cert),
                "--tls-key", str(key)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(serve.stdout.readline() if serve.stdout else ""))
        reader.start()
        reader.join(60)
        assert first and first[0].startswith(f"serving https://{hosts.server_ip}:"), (first, serve.poll())
        url = first[0].split()[1]
        done = subprocess.run(
            _runner(hosts.client_ns, "run", "--target", url, "--ca-file", str(ca), "-c",
                    "cpp-beast,rust-reqwest,py-requests,py-beast-released", "-n", "30", "-r", "1", "--warmup", "2",
                    "-o", str(tmp_path / "results")),
            capture_output=True, text=True, env=env, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        doc = json.loads((tmp_path / "results" / "latest" / "results.json").read_text())
        assert doc["server"] == {"url": url, "started_by_clientbench": False, "threads": None}
        assert doc["scheme"] == "https" and doc["tls"]["verify"] is True
        for row in doc["rows"]:
            assert row["status"] == "ok" and row["aggregate"]["median"]["errors"] == 0, row["client"]["name"]
    finally:
        os.killpg(serve.pid, signal.SIGINT)
        out, err = serve.communicate(timeout=30)
    assert serve.returncode == 0 and out.rstrip().endswith("stopped"), err[-1000:]
    left = subprocess.run(["pgrep", "-f", f"clientbench-server --host {hosts.server_ip}"], capture_output=True)
    assert left.returncode == 1, "a server was left behind"
