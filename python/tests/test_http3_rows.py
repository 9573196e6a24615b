"""`clientbench run --tls --http 3` on the project's own server: the rows without HTTP/3 say `unsupported` (exit
3, one line saying so), never failed, and the run's exit status is 0; a row of each kind of HTTP/3 client gets it
(the whole list, H3_ROWS, runs against an outside QUIC server in test_outside_quic.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clientbench import cli
from test_outside_quic import H3_ROWS

#: rows whose clients have no HTTP/3: Beast (HTTP/1.1 only: the native driver, the binding sync and async), the
#: raw-socket floor, and the pure-Python clients of the default set and the peers
NO_H3 = ["cpp-beast", "cpp-floor", "py-beast-held", "py-beast-released", "py-beast-async", "py-beast-uvloop",
         "py-requests", "py-aiohttp",
         "py-httpx-sync", "py-httpx-async"]  # fmt: skip
#: one of each HTTP/3 stack among the Python rows: reqwest's (the binding, impit), libcurl's (ngtcp2), qh3's
SOME_H3 = ["py-reqwest-released", "py-reqwest-async", "py-impit-sync", "py-pycurl", "py-niquests-async"]


def _run(tmp_path: Path, rows: list[str]) -> tuple[int, dict[str, dict[str, Any]]]:
    code = cli.main(["run", "--tls", "--http", "3", "-c", ",".join(rows), "-w", "2", "-n", "10", "--warmup", "1",
                     "-r", "1", "-o", str(tmp_path)])  # fmt: skip
    results = json.loads((tmp_path / "latest" / "results.json").read_text())
    return code, {r["client"]["name"]: r for r in results["rows"]}


def test_rows_without_http3_are_unsupported_not_failed(tmp_path: Path) -> None:
    assert not set(NO_H3) & set(H3_ROWS)
    code, rows = _run(tmp_path, NO_H3)
    assert sorted(rows) == sorted(NO_H3)
    for name, row in rows.items():
        assert row["status"] == "unsupported", (name, row["status"], row["reason"])
        assert "unsupported: HTTP/3" in row["reason"], (name, row["reason"])
    assert code == 0


def test_http3_rows_get_http3_from_our_server(tmp_path: Path) -> None:
    assert set(SOME_H3) <= set(H3_ROWS)
    code, rows = _run(tmp_path, SOME_H3)
    for name, row in rows.items():
        assert row["status"] == "ok", (name, row["reason"])
        assert row["client"]["protocol"] == "HTTP/3", name
        stats = row["runs"][0]["stats"]
        assert (stats["requests"], stats["errors"]) == (20, 0), name
        # every request went over QUIC: the server counted HTTP/3 requests, and no TCP connection
        counts = row["runs"][0]["server_counts"]
        assert counts["h3_requests"] >= 20 and counts["connections"] == 0, (name, counts)
    assert code == 0
