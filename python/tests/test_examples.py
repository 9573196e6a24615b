"""The example drivers from other ecosystems (examples/): Go's net/http and Node.js's fetch, built by `make
examples` (this suite builds nothing). Each passes `clientbench check-driver` and runs as a `--driver` row with
0 errors next to a shipped row, and with streamed bodies (an echo both ways) and a targets file; its document
names its language and library."""

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


def _rows(tmp_path: Path, *flags: str) -> dict[str, dict]:
    """Both examples as --driver rows of one run with `flags`, each with 0 errors; their rows by name."""
    drivers = [arg for name in EXAMPLES for arg in ("--driver", f"{name}={' '.join(_command(name))}")]
    code = cli.main(["run", *drivers, "-c", "go-nethttp,node-fetch", "-w", "2", "-n", "5", "-r", "1",
                     "--warmup", "1", *flags, "--out", str(tmp_path)])  # fmt: skip
    results = json.loads((tmp_path / "latest" / "results.json").read_text())
    validate_results(results)
    rows = {r["client"]["name"]: r for r in results["rows"]}
    assert list(rows) == list(EXAMPLES)
    for name, row in rows.items():
        assert row["status"] == "ok", (name, row.get("reason"))
        assert row["aggregate"]["median"]["requests"] == 2 * 5 and row["aggregate"]["median"]["errors"] == 0
    assert code == 0
    return rows


@pytest.mark.timeout(600)
def test_the_examples_stream_an_echo_both_ways(tmp_path):
    """A 1 MiB body streamed up to POST /echo and its answer streamed down: each answer compared with the body
    sent as it is read (the echo rule), the bytes counted both ways."""
    _rows(tmp_path, "--method", "POST", "--path", "/echo", "--body-size", "1048576", "--upload", "stream",
          "--download", "stream")  # fmt: skip
    for name in EXAMPLES:
        raw = json.loads((tmp_path / "latest" / "raw" / f"{name}.0.json").read_text())
        w = raw["workload"]
        got = (w["method"], w["body_size"], w["upload"], w["download"], w["chunk_size"])
        assert got == ("POST", 1048576, "stream", "stream", 65536)
        assert [worker["bytes"] for worker in raw["workers"]] == [5 * 1048576] * 2


@pytest.mark.timeout(600)
def test_the_examples_cycle_through_targets(tmp_path):
    """A targets file of GETs and an upload with its body file: every worker cycles through them from its own
    index, and the runner's body-integrity check (its own request to each target) agrees with the bytes."""
    body = tmp_path / "body.bin"
    body.write_bytes(b"x" * 3000)
    targets = tmp_path / "targets.txt"
    targets.write_text("# two GETs and an upload\nGET /bytes/1000\nGET /\nPOST /upload @body.bin\n")
    _rows(tmp_path / "out", "--targets", str(targets))
    for name in EXAMPLES:
        raw = json.loads((tmp_path / "out" / "latest" / "raw" / f"{name}.0.json").read_text())
        assert raw["workload"]["targets"] and raw["workload"]["method"] == "GET"
        drivers_file = Path(raw["workload"]["targets"]).read_text().splitlines()
        assert [line.split()[0] for line in drivers_file] == ["GET", "GET", "POST"]
        assert drivers_file[2].endswith(f" @{body}")
