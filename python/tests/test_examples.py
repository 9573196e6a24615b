"""The example drivers from other ecosystems (examples/): Go's net/http and Node.js's fetch, built by `make
examples` (this suite builds nothing). Each passes `clientbench check-driver` and runs as a `--driver` row with
0 errors next to a shipped row; its document names its language and library."""

from __future__ import annotations

import json
from pathlib import Path

import clientbench.cli as cli
import pytest
from clientbench.schema import validate_results

ROOT = Path(__file__).resolve().parents[2]
GO = ROOT / "build" / "bin" / "go-nethttp-driver"
NODE = ROOT / "examples" / "node-fetch" / "driver.mjs"
NODE_DEPS = ROOT / "examples" / "node-fetch" / "node_modules" / ".package-lock.json"

EXAMPLES = {
    "go-nethttp": ([str(GO)], GO, ("Go", "net/http", "sync")),
    "node-fetch": ([str(NODE)], NODE_DEPS, ("JavaScript", "fetch (undici)", "async")),
}


def _command(name: str) -> list[str]:
    command, built, _ = EXAMPLES[name]
    if not built.exists():
        pytest.fail(f"{built.relative_to(ROOT)} is missing: `make examples` builds the example drivers")
    return command


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_the_example_passes_check_driver(name, capsys):
    code = cli.main(["check-driver", "--", *_command(name)])
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.strip().startswith(("fail", "not supported"))]
    assert code == 0 and not failed, out
    assert "0 failed" in out and "pass" in out


@pytest.mark.timeout(600)
def test_the_examples_run_as_driver_rows_next_to_a_shipped_one(tmp_path):
    drivers = [arg for name in EXAMPLES for arg in ("--driver", f"{name}={' '.join(_command(name))}")]
    code = cli.main(["run", *drivers, "-c", "cpp-beast,go-nethttp,node-fetch", "-w", "2", "-n", "20", "-r", "1",
                     "--warmup", "2", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    results = json.loads((tmp_path / "latest" / "results.json").read_text())
    validate_results(results)
    rows = {r["client"]["name"]: r for r in results["rows"]}
    assert list(rows) == ["cpp-beast", "go-nethttp", "node-fetch"]
    for name, row in rows.items():
        assert row["status"] == "ok", (name, row.get("reason"))
        assert row["aggregate"]["median"]["requests"] == 2 * 20 and row["aggregate"]["median"]["errors"] == 0
    for name, (_, _, (language, library, mode)) in EXAMPLES.items():
        client = rows[name]["client"]
        assert (client["language"], client["library"], client["mode"]) == (language, library, mode)
    raw = json.loads((tmp_path / "latest" / "raw" / "go-nethttp.0.json").read_text())
    assert raw["client"]["protocol"] == "HTTP/1.1" and raw["workload"]["client_scope"] == "per-worker"
