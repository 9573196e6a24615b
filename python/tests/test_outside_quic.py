"""HTTP/3 against software nobody here wrote, both ways: an outside HTTP/3 client (curl_cffi's libcurl, built with
ngtcp2 and nghttp3) gets right answers from the project's server, and the rows that speak HTTP/3 run with 0 errors
against an outside QUIC server (Hypercorn on aioquic: support/quicserver.py, `make quic-server`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from clientbench import cli
from clientbench.execution.server import Server
from support.quicserver import QuicServer, quic_server

curl_cffi = pytest.importorskip("curl_cffi")
V3ONLY = curl_cffi.CurlHttpVersion.V3ONLY
V3 = curl_cffi.CurlHttpVersion.V3

#: the rows that speak HTTP/3 (docs/http3.md): each must get it, with 0 errors, from a server that is not ours
H3_ROWS = [
    "rust-reqwest",
    "rust-reqwest-sync",
    "py-reqwest-held",
    "py-reqwest-released",
    "py-reqwest-async",
    "py-reqwest-uvloop",
    "py-pycurl",
    "py-curl_cffi-sync",
    "py-curl_cffi-async",
    "py-curl_cffi-uvloop",
    "py-curl_cffi-rloop",
    "py-niquests-sync",
    "py-niquests-async",
    "py-niquests-uvloop",
    "py-pyqwest-sync",
    "py-pyqwest-async",
    "py-pyqwest-uvloop",
    "py-pyqwest-rloop",
    "py-impit-sync",
    "py-impit-async",
    "py-impit-uvloop",
    "py-impit-rloop",
]


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuicServer]:
    with quic_server(tmp_path_factory.mktemp("hypercorn")) as s:
        yield s


def test_the_outside_server_answers_over_quic(outside: QuicServer) -> None:
    """What the rows' test below stands on: Hypercorn really serves HTTP/3 (curl with HTTP/3 only)."""
    with curl_cffi.Session() as session:
        r = session.get(outside.url + "/bytes/5000", verify=str(outside.ca_file), http_version=V3ONLY, timeout=20)
    assert (r.status_code, r.http_version, r.content) == (200, V3, b"x" * 5000)


def test_an_outside_client_gets_right_answers_from_our_server(tls_server: Server) -> None:
    body = bytes(range(256)) * 300  # 76,800 bytes: several QUIC packets each way
    before = tls_server.stats()
    assert before is not None
    with curl_cffi.Session() as session:
        kw = {"verify": str(tls_server.ca_file), "http_version": V3ONLY, "timeout": 20}
        hello = session.get(tls_server.url + "/", **kw)
        big = session.get(tls_server.url + "/bytes/200000", **kw)
        echo = session.post(tls_server.url + "/echo", data=body, **kw)
        upload = session.put(tls_server.url + "/upload", data=body, **kw)
        missing = session.get(tls_server.url + "/status/503", **kw)
    assert {r.http_version for r in (hello, big, echo, upload, missing)} == {V3}
    assert (hello.status_code, hello.content) == (200, b"Hello, World!")
    assert (big.status_code, len(big.content)) == (200, 200_000)
    assert (echo.status_code, echo.content) == (200, body)
    assert (upload.status_code, upload.text.strip()) == (200, f"{len(body)} {hashlib.sha256(body).hexdigest()}")
    assert missing.status_code == 503
    after = tls_server.stats()
    assert after is not None and after["h3_requests"] - before["h3_requests"] == 5


# every HTTP/3 row, each a new interpreter: beside the suites and the aarch64 build, 5-10 s a row (over 120 s in all)
@pytest.mark.timeout(600)
def test_the_http3_rows_get_http3_from_an_outside_server(outside: QuicServer, tmp_path: Path) -> None:
    code = cli.main(["run", "--target", outside.url + "/", "--ca-file", str(outside.ca_file), "--http", "3",
                     "-c", ",".join(H3_ROWS), "-w", "2", "-n", "20", "--warmup", "2", "-r", "1",
                     "-o", str(tmp_path / "out")])  # fmt: skip
    results = json.loads((tmp_path / "out" / "latest" / "results.json").read_text())
    seen = {row["client"]["name"]: row for row in results["rows"]}
    assert sorted(seen) == sorted(H3_ROWS)
    for name, row in seen.items():
        assert row["status"] == "ok", (name, row["reason"], outside.log.read_text()[-2000:])
        assert row["client"]["protocol"] == "HTTP/3", name
        stats = row["runs"][0]["stats"]
        assert (stats["requests"], stats["errors"]) == (40, 0), name
    assert code == 0
