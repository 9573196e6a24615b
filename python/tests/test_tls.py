"""HTTPS through the runner: every runnable driver of the table against the axum server with `--tls` (verified
with its throw-away CA; without it each request a TLSError), and `clientbench run --tls` end to end. The
bindings' own TLS behaviour is tested in bindings/tests/test_tls.py."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from clientbench.errors import SetupError
from clientbench.execution.driver_process import run_driver
from clientbench.execution.server import Server
from clientbench.model import RunStatus
from clientbench.registry.shipped import CLIENTS
from clientbench.registry.spec import ClientSpec
from clientbench.workload import Workload

REPO = Path(__file__).resolve().parents[2]


def fetch(server: Server, path: str) -> bytes:
    with urllib.request.urlopen(server.url + path, context=server.context(), timeout=10) as r:
        return r.read()


# -- the drivers --------------------------------------------------------------------------------------
def _runnable(spec: ClientSpec) -> bool:
    if spec.client.floor:  # the raw-socket floor driver is plain HTTP only
        return False
    if spec.is_python:
        return spec.needs_module is None or importlib.util.find_spec(spec.needs_module) is not None
    try:
        spec.argv()
    except SetupError:
        return False
    return True


DRIVERS = [s for s in CLIENTS if _runnable(s)]


def _failure_reasons(run: Any) -> list[str]:
    assert run.raw is not None, run.reason
    return [f["reason"] for w in run.raw["workers"] for f in w["failures"]]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("spec", DRIVERS, ids=[s.name for s in DRIVERS])
def test_driver_over_tls(spec: ClientSpec, tls_server: Server) -> None:
    assert tls_server.ca_file
    body = len(fetch(tls_server, "/bytes/1000"))
    wl = Workload(workers=2, requests=5, warmup=1, timeout_s=5.0, path="/bytes/1000", repeat=1)
    url = tls_server.url + "/bytes/1000"
    run = run_driver(
        spec, url, wl, row_timeout_s=30, expected_body_bytes=body, driver_flags=["--ca-file", tls_server.ca_file]
    )
    assert run.status is RunStatus.OK, (run.reason, run.raw and _failure_reasons(run))
    assert run.stats is not None and run.stats.errors == 0 and run.stats.body_bytes == run.stats.requests * body

    wl = Workload(workers=1, requests=3, warmup=0, timeout_s=5.0, repeat=1)
    run = run_driver(spec, tls_server.url + "/", wl, row_timeout_s=30)
    reasons = _failure_reasons(run)
    assert run.stats is not None and len(reasons) == run.stats.requests > 0, run.reason
    # the native drivers, the bindings and the default Python rows: exactly TLSError; a peer (optional row)
    # whose library does not say it was TLS may be classified ConnectionError by the harness
    allowed = ("TLSError: ", "ConnectionError: ") if spec.client.optional else ("TLSError: ",)
    assert all(r.startswith(allowed) for r in reasons), reasons


# -- the CLI --------------------------------------------------------------------------------------------
def _find_key(doc: Any, key: str) -> list[Any]:
    if isinstance(doc, dict):
        return ([doc[key]] if key in doc else []) + [v for x in doc.values() for v in _find_key(x, key)]
    if isinstance(doc, list):
        return [v for x in doc for v in _find_key(x, key)]
    return []


@pytest.mark.timeout(120)
def test_cli_run_tls(tmp_path: Path) -> None:
    out = tmp_path / "out"
    clients = "cpp-beast,rust-reqwest,py-beast-released,py-reqwest-released"
    cmd = [sys.executable, "-m", "clientbench", "run", "--tls", "-c", clients, "-n", "5", "-r", "1", "-w", "2"]
    p = subprocess.run([*cmd, "-o", str(out)], cwd=REPO, capture_output=True, text=True, timeout=110)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    results = list(out.rglob("results.json"))
    assert len(results) == 1, results
    schemes = _find_key(json.loads(results[0].read_text()), "scheme")
    assert schemes and set(schemes) == {"https"}, schemes
