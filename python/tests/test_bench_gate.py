"""The project's gate on its own clients (scripts/bench-gate, `make bench-gate`, docs/gate.md): with a binding made
slower on purpose (one syscall and a Python frame more per request, put in by a sitecustomize that only this test
writes) it fails and names the row and the figure. One row, to keep it short: the gate runs the same way for all
seven. That it passes on the committed baseline is `make test`'s own bench-gate step (scripts/run-tests.sh), which
runs it on every row after the suites: not run here a second time."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GATE = ROOT / "scripts" / "bench-gate"
BASELINE = ROOT / "results" / "reference" / "cost" / "gate"
ROW = "py-beast-released"

# Python imports sitecustomize from PYTHONPATH at start-up, in the driver's process too: the Client's fetch_len (what
# the row's driver calls per request) gains a getpid, a real syscall (glibc does not cache it), and a Python frame
SLOWER = """\
import os

import beast_client

_fetch_len = beast_client.Client.fetch_len


def fetch_len(self, *args, **kwargs):
    os.getpid()
    return _fetch_len(self, *args, **kwargs)


beast_client.Client.fetch_len = fetch_len
"""


def gate(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "BENCH_GATE_ROWS": ROW, "BENCH_GATE_OUT": str(tmp_path / "new"), **env}
    return subprocess.run(
        [str(GATE)], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=600, check=False
    )  # fmt: skip


def test_the_committed_baseline_names_the_gated_rows() -> None:
    import json

    doc = json.loads((BASELINE / "cost.json").read_text())
    rows = {r["name"]: r for r in doc["rows"]}
    gated = GATE.read_text().split("ROWS=", 1)[1].split("\n", 1)[0].split(",")
    assert sorted(rows) == sorted(gated)
    for name in gated:
        assert rows[name]["status"] == "ok", name
        assert rows[name]["process"]["instructions_per_request"] > 0 and rows[name]["process"]["syscalls_per_request"]


@pytest.mark.long(60)
def test_the_gate_fails_when_a_binding_is_made_slower(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOWER)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    done = gate(tmp_path, PYTHONPATH=path)
    assert done.returncode == 1, done.stdout + done.stderr
    failed = [line for line in done.stdout.splitlines() if ROW in line and "worse" in line]
    assert any("syscalls" in line for line in failed), done.stdout
    assert any("instructions" in line for line in failed), done.stdout
