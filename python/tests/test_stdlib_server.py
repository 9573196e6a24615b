"""Every Python row against a server nobody here wrote: Python's own http.server (`clientbench run --target`, as
issue 30's new user tried it). It answers in HTTP/1.0 and closes the connection after each answer, and it serves
only the origin form of a request target (`GET /f.bin`): a row must reconnect rather than fail, and send what a
client sends to a server, not to a proxy. Not support/httpapp.py (an HTTP/1.1 keep-alive application on the same
module): the stdlib's file server as users run it, `python -m http.server`."""

from __future__ import annotations

import http.server
import json
import os
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import clientbench.cli as cli
import pytest

BODY = os.urandom(5000)
WORKERS, REQUESTS = 2, 10


class Handler(http.server.SimpleHTTPRequestHandler):
    """The stdlib's file server (HTTP/1.0), which remembers each request line instead of logging it."""

    seen: list[str]

    def log_message(self, format: str, *args: Any) -> None:
        self.seen.append(self.requestline)


@pytest.fixture
def stdlib_server(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "f.bin").write_bytes(BODY)
    seen: list[str] = []
    handler = type("Recording", (Handler,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.mark.long(20)
@pytest.mark.timeout(600)
def test_every_python_row_runs_against_python_s_http_server(
    tmp_path: Path, stdlib_server: tuple[str, list[str]]
) -> None:
    url, seen = stdlib_server
    out = tmp_path / "out"
    argv = ["run", "--target", url, "--path", "/f.bin", "-c", "py-*", "-w", str(WORKERS), "-n", str(REQUESTS)]
    code = cli.main([*argv, "-r", "1", "--warmup", "0", "-o", str(out)])
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    rows = json.loads((folder / "results.json").read_text())["rows"]
    assert {"py-floor", "py-urllib3", "py-requests", "py-aiohttp", "py-beast-released"} <= {
        r["client"]["name"] for r in rows
    }
    wrong = {
        r["client"]["name"]: (r["status"], r["reason"], [run["stats"]["errors"] for run in r["runs"]])
        for r in rows
        if r["status"] != "ok"
        or any(run["stats"]["errors"] or run["stats"]["requests"] != WORKERS * REQUESTS for run in r["runs"])
    }
    assert wrong == {}
    assert code == 0
    # every request of every row in the origin form: the runner's probes, then the rows' GET /f.bin
    targets = {line.split(" ")[1] for line in seen}
    assert targets <= {"/health", "/", "/f.bin"}, sorted(targets)
