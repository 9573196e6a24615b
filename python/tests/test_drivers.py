"""Every driver of the table (native, bindings, peers) against the real server and a counting raw server,
through the runner (which validates each document against the raw schema); the uploads to /upload (each answer
checked), streamed bodies and a short open loop of the Python rows check-driver's suite does not run."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import beast_client
import pytest
import reqwest_client
from clientbench.conformance.faults import WRONG_ANSWER, FaultServer
from clientbench.execution.driver_process import run_driver
from clientbench.model import RunStatus
from clientbench.registry.shipped import CLIENTS, LOOP_TRANSPORTS
from clientbench.registry.spec import PythonDriver
from clientbench.workload import Workload
from support.conformance import checked, installed
from support.pools import pool_race
from support.rawserver import RawServer, answer
from support.streams import unstreamed

SMALL = Workload(workers=3, requests=5, warmup=1, timeout_s=5)
NAMES = [c.name for c in CLIENTS]
HELLO = b"Hello, World!"
#: the version each driver reports for its library: our bindings report the library they wrap (the same
#: column as the native row of that library)
LIBRARY_VERSIONS = {"beast": beast_client.boost_version, "reqwest": reqwest_client.reqwest_version}
#: the exception our bindings raise for a refused connection, kept after the failure class in the reason
BINDING_ROWS = {
    "py-beast-held",
    "py-beast-released",
    "py-beast-async",
    "py-beast-uvloop",
    "py-reqwest-async",
    "py-reqwest-uvloop",
    "py-reqwest-held",
    "py-reqwest-released",
}


@pytest.fixture(params=CLIENTS, ids=NAMES)
def spec(request):
    spec = request.param
    if not installed(spec):
        pytest.skip(f"peer {spec.needs_module} is not installed here (make peers)")
    return spec


def workers_of(spec, workers: int) -> int:
    return spec.client.fixed_workers or workers


def test_driver_meets_the_contract(spec, server):
    run = run_driver(spec, server.url + "/", SMALL, row_timeout_s=120)
    assert run.status is RunStatus.OK, run.reason
    raw, s = run.raw, run.stats
    c = spec.client
    assert (raw["client"]["language"], raw["client"]["library"]) == (c.language, c.library)
    assert raw["client"]["mode"] == c.mode and raw["client"]["gil"] == c.gil
    if c.library in LIBRARY_VERSIONS:
        assert raw["client"]["library_version"] == LIBRARY_VERSIONS[c.library]
    else:
        assert isinstance(raw["client"]["library_version"], str) and raw["client"]["library_version"]
    assert raw["client"].get("protocol", "HTTP/1.1") == "HTTP/1.1"  # optional; HTTP/1.1 unless --http 2
    if c.language == "Rust":  # nothing but the contract's fields
        assert {k: v for k, v in raw["client"].items() if k != "protocol"} == {
            "language": "Rust",
            "library": "reqwest",
            "mode": c.mode,
            "gil": None,
            "library_version": reqwest_client.reqwest_version,
        }
    workers = workers_of(spec, 3)
    # every field of the contract's workload section is there, with what the driver ran with (more may follow)
    contract = {"url": server.url + "/", "workers": workers, "requests": 5, "warmup": 1, "timeout_s": 5,
                "connection": "keep-alive"}  # fmt: skip
    assert {k: raw["workload"].get(k, "missing") for k in contract} == contract
    assert s.requests == workers * 5 and s.errors == 0, run.reason
    assert s.body_bytes == workers * 5 * len(HELLO)
    assert len(raw["workers"]) == workers
    for w in raw["workers"]:
        assert len(w["latencies_ns"]) == len(w["start_ns"]) == 5
        assert w["failures"] == [] and w["bytes"] == 5 * len(HELLO)
    # every harness reports its own CPU time and peak RSS (VmHWM, not the forked runner's pages)
    assert raw["cpu_ns"] > 0 and 0 < raw["peak_rss_kib"] < 512 * 1024
    if c.language != "Python":
        assert s.peak_rss_mib < 40, "a native driver's RSS must not include the Python runner's"
    # the group clock covers every worker's timed loop
    assert s.bench_ms >= max(w["elapsed_ns"] for w in raw["workers"]) / 1e6 * 0.99
    for w in raw["workers"]:
        assert sum(w["latencies_ns"]) <= w["elapsed_ns"] * 1.01


def test_driver_reads_whole_large_bodies(spec, server):
    n = 1_000_000
    run = run_driver(spec, f"{server.url}/bytes/{n}", Workload(2, 2, 0, 10), row_timeout_s=120, expected_body_bytes=n)
    assert run.status is RunStatus.OK, run.reason
    assert run.stats.body_bytes == run.stats.requests * n


def test_non_200_is_a_counted_failure(spec, server):
    run = run_driver(spec, server.url + "/status/500", Workload(2, 3, 0, 5), row_timeout_s=120)
    assert run.stats is not None, run.reason  # the driver worked ...
    n = run.stats.requests
    assert n == workers_of(spec, 2) * 3 and run.stats.errors == n  # ... and every request failed
    assert run.status is RunStatus.FAILED and run.reason.startswith(f"{n} of {n} requests failed: status 500")
    for w in run.raw["workers"]:
        assert [f["index"] for f in w["failures"]] == [0, 1, 2]
        assert [(f["status"], f["reason"]) for f in w["failures"]] == [(500, "status 500")] * 3


def test_closed_port_gives_classified_failures_not_a_crash(spec, closed_port_url):
    run = run_driver(spec, closed_port_url, Workload(2, 2, 0, 2), row_timeout_s=120)
    assert run.stats is not None, run.reason
    assert run.stats.errors == run.stats.requests == workers_of(spec, 2) * 2 and run.status is RunStatus.FAILED
    reasons = [f["reason"] for w in run.raw["workers"] for f in w["failures"]]
    assert len(reasons) == run.stats.requests
    # `<Class>: <message>`, the class shared by the three languages' harnesses (docs/raw-format.md)
    assert all(r.split(":", 1)[0] == "ConnectionError" and r.split(":", 1)[1].strip() for r in reasons), reasons
    if spec.name in BINDING_ROWS:  # the binding's own exception is kept after the class
        assert all(r.startswith("ConnectionError: ConnectionRefusedError: ") for r in reasons), reasons


# `--connection new` (the workload's field, and one connection per request): test_connections_opened below


#: a body the real server never sends: the integrity check proves the requests went to the counting server
COUNTED = b"counted body\r\n"


@pytest.mark.parametrize("connection", ["keep-alive", "new"])
def test_connections_opened(spec, connection):
    """`--connection new` really opens one connection per timed request; keep-alive one per worker.

    Counted where the connections arrive (accepts of a raw server), with W=2, N=3, no warm-up. Every driver
    builds its clients lazily, so nothing connects before the first request: no setup connection. So
    keep-alive gives exactly W connections and new exactly W x N (measured for every driver, including the
    peers; a serial row's W is 1). A warm-up would add one connection per worker in new mode (the warm-up
    requests use the worker's first client), which is why it is 0 here. A client on hyper's pool reuses its
    connections but not every time (support/pools.py): over N=20 requests per worker, at most half of them
    may open one."""
    racing = connection == "keep-alive" and pool_race(spec)
    workers, requests = workers_of(spec, 2), 20 if racing else 3
    with RawServer(answer(COUNTED)) as srv:
        run = run_driver(
            spec,
            srv.url + "/",
            Workload(2, requests, 0, 5, connection=connection),
            row_timeout_s=120,
            expected_body_bytes=len(COUNTED),
        )
        assert run.status is RunStatus.OK, run.reason
        assert run.raw["workload"]["connection"] == connection
        assert len(srv.heads) == workers * requests  # no request sent twice, none outside the loop
        if racing:
            assert workers <= srv.accepted <= workers * requests // 2, srv.accepted
        else:
            assert srv.accepted == (workers if connection == "keep-alive" else workers * requests)


def test_body_integrity_check_catches_a_short_count(spec, server):
    """The real server sends HELLO: expecting COUNTED's length per request fails the run, though every request
    succeeded."""
    run = run_driver(spec, server.url + "/", Workload(1, 2, 0, 5), row_timeout_s=120, expected_body_bytes=len(COUNTED))
    assert run.stats is not None and run.stats.errors == 0  # every request succeeded ...
    assert run.status is RunStatus.FAILED  # ... yet bytes are missing
    assert (
        run.reason
        == f"body integrity: received {2 * len(HELLO)} bytes, expected 2 x {len(COUNTED)} = {2 * len(COUNTED)}"
    )


# -- uploads and the open loop (the Python drivers; the native ones are tested in their own suites) ------

PYTHON = [c for c in CLIENTS if c.client.language == "Python"]
#: the Python rows check-driver's suite leaves out (test_check_driver.py puts the others through its uploads,
#: echo, wrong-answer, streamed and open-loop checks, which say at least what the tests below say)
UNCHECKED = [c for c in PYTHON if not checked(c)]


def _python_spec(request):
    spec = request.param
    if not installed(spec):
        pytest.skip(f"peer {spec.needs_module} is not installed here (make peers)")
    return spec


@pytest.fixture(params=PYTHON, ids=[c.name for c in PYTHON])
def python_spec(request):
    return _python_spec(request)


@pytest.fixture(params=UNCHECKED, ids=[c.name for c in UNCHECKED])
def unchecked_spec(request):
    return _python_spec(request)


def upload_answer(size: int) -> bytes:
    body = (b"abcdefghijklmnopqrstuvwxyz" * (size // 26 + 1))[:size]
    return f"{size} {hashlib.sha256(body).hexdigest()}".encode()


@pytest.mark.parametrize("method, size", [("POST", 1000), ("PUT", 70_000)])
def test_uploads_are_sent_whole_and_checked(unchecked_spec, server, method, size):
    """Every request sends the contract's body and gets /upload's length and digest of it back (the driver
    compares each answer; here the runner's integrity check adds up the answers' bytes)."""
    answer = upload_answer(size)
    wl = Workload(2, 3, 1, 10, method=method, body_size=size)
    run = run_driver(unchecked_spec, server.url + "/upload", wl, row_timeout_s=120, expected_body_bytes=len(answer))
    assert run.status is RunStatus.OK, run.reason
    assert (run.raw["workload"]["method"], run.raw["workload"]["body_size"]) == (method, size)
    assert run.stats.requests == workers_of(unchecked_spec, 2) * 3 and run.stats.errors == 0


def test_an_echo_is_right_and_a_wrong_upload_answer_a_counted_failure(unchecked_spec, server):
    """/echo answers with the body itself, which is a right answer (docs/raw-format.md); the fault server's /wrong
    answers neither the body nor its length and digest: every request fails, each with the contract's reason."""
    wl = Workload(2, 2, 0, 10, method="POST", body_size=30)
    run = run_driver(unchecked_spec, server.url + "/echo", wl, row_timeout_s=120, expected_body_bytes=30)
    assert run.status is RunStatus.OK, run.reason
    with FaultServer() as faults:
        run = run_driver(unchecked_spec, faults.url + "/wrong", wl, row_timeout_s=120)
    assert run.stats is not None, run.reason
    assert (
        run.status is RunStatus.FAILED and run.stats.errors == run.stats.requests == workers_of(unchecked_spec, 2) * 2
    )
    reasons = {f["reason"] for w in run.raw["workers"] for f in w["failures"]}
    assert reasons == {
        f"Error: upload digest mismatch: got {WRONG_ANSWER.decode()!r}, expected '{upload_answer(30).decode()}'"
    }
    assert run.stats.body_bytes == run.stats.requests * len(WRONG_ANSWER)  # the answers still count as received


def test_streamed_bodies_both_ways_or_the_upload_unsupported(unchecked_spec, server):
    """Every Python row left to this module (the peers' loop variants) streams a body to /echo and reads the echo
    in chunks, every byte checked; a row whose library cannot stream uploads (support/streams.py) says so, exit 3,
    and streams the download of a whole upload."""
    size = 200_000
    wl = Workload(2, 2, 0, 10, method="POST", body_size=size, upload="stream", download="stream", chunk_size=8192)
    run = run_driver(unchecked_spec, server.url + "/echo", wl, row_timeout_s=120, expected_body_bytes=size)
    if "upload" in unstreamed(unchecked_spec):
        assert run.status is RunStatus.UNSUPPORTED and "--upload stream" in (run.reason or ""), run.reason
        wl = dataclasses.replace(wl, upload="whole")
        run = run_driver(unchecked_spec, server.url + "/echo", wl, row_timeout_s=120, expected_body_bytes=size)
    assert run.status is RunStatus.OK, run.reason
    assert (run.raw["workload"]["upload"], run.raw["workload"]["download"]) == (wl.upload, "stream")
    assert run.stats.requests == workers_of(unchecked_spec, 2) * 2 and run.stats.errors == 0


def test_open_loop_smoke(unchecked_spec, server):
    """A low rate for a short time: every worker keeps its schedule (sent + missed = what was due before D),
    records the intended starts, starts nothing early, and the driver stops by itself."""
    workers = workers_of(unchecked_spec, 2)
    wl = Workload(2, 5, 1, 5, rate=40.0, duration_s=0.5)
    run = run_driver(unchecked_spec, server.url + "/", wl, row_timeout_s=120, expected_body_bytes=len(HELLO))
    assert run.status is RunStatus.OK, run.reason
    raw = run.raw
    assert (raw["workload"]["loop"], raw["workload"]["rate"], raw["workload"]["duration_s"]) == ("open", 40.0, 0.5)
    assert raw["workload"]["requests"] is None
    for i, w in enumerate(raw["workers"]):
        due = [(i + k * workers) / 40.0 for k in range(100) if (i + k * workers) / 40.0 < 0.5]
        assert w["count"] + w["missed"] == len(due) and w["count"] >= 1
        assert w["intended_ns"] == [round(t * 1e9) for t in due[: w["count"]]]
        assert all(s >= t for s, t in zip(w["start_ns"], w["intended_ns"], strict=True))
    assert raw["wall_ns"] < (0.5 + 5) * 1e9  # D plus one timeout


def test_open_loop_uploads_with_histograms(python_spec, server):
    answer = upload_answer(10)
    wl = Workload(2, 4, 1, 5, rate=100.0, method="PUT", body_size=10, arrival="poisson", seed=3)
    run = run_driver(
        python_spec,
        server.url + "/upload",
        wl,
        row_timeout_s=120,
        expected_body_bytes=len(answer),
        driver_flags=["--record", "histogram"],
    )
    assert run.status is RunStatus.OK, run.reason
    assert (run.raw["workload"]["record"], run.raw["workload"]["arrival"]) == ("histogram", "poisson")
    for w in run.raw["workers"]:
        assert w["count"] == 4 and set(w["histograms"]) == {"service", "corrected"}
        assert sum(c for _, c in w["histograms"]["corrected"]["counts"]) == 4


# -- the peers: what installing them must not change, their uvloop rows, what one of them cannot do ------

REQUIREMENTS_PEERS = Path(__file__).resolve().parents[1] / "requirements-peers.txt"


def _pinned(name: str) -> str:
    for line in REQUIREMENTS_PEERS.read_text().splitlines():
        if line.startswith(f"{name}=="):
            return line.split("==", 1)[1].strip()
    raise AssertionError(f"{name} is not pinned in {REQUIREMENTS_PEERS.name}")


def test_urllib3_future_sits_beside_urllib3_not_over_it():
    """niquests' urllib3-future, installed from its wheel, rewrites the urllib3 package at every interpreter
    start; `make peers` installs it from its sdist without that hook, so requests and urllib3 rows still
    measure urllib3 (checked in a new interpreter: the hook would act at its start)."""
    if importlib.util.find_spec("urllib3_future") is None:
        pytest.skip("niquests (urllib3-future) is not installed here (make peers)")
    code = "import urllib3, urllib3_future; print(urllib3.__version__, urllib3_future.__version__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [_pinned("urllib3"), _pinned("urllib3-future")]
    hooks = [p for d in sys.path if d and Path(d).is_dir() for p in Path(d).glob("urllib3_future*.pth")]
    assert hooks == []


def test_every_async_python_row_also_runs_on_uvloop_and_rloop():
    """The event loop is part of an async row's result: each async Python row has its uvloop twin, named
    `...-uvloop`, labelled `<library>+uvloop`, run with --loop uvloop, and its rloop twin likewise, but for the
    libraries on the loop's transports, which rloop does not do whole (and our binding's row, listed apart from
    the peers: uvloop only, as the Beast binding's and the asyncio floor's)."""
    rows = {c.name: c for c in CLIENTS}
    on_asyncio = [c for c in PYTHON if c.client.mode == "async" and "--loop" not in c.command.args]
    assert {c.name for c in on_asyncio} >= {"py-aiohttp", "py-reqwest-async", "py-wreq-async", "py-httpx2-async",
                                            "py-niquests-async", "py-pyqwest-async", "py-impit-async",
                                            "py-primp-async", "py-ry-async", "py-httpr-async", "py-aiosonic",
                                            "py-httpx-aiohttp"}  # fmt: skip
    without_rloop = LOOP_TRANSPORTS | {"py-aiohttp", "py-reqwest-async", "py-beast-async", "py-floor-async"}
    for c in on_asyncio:
        for loop in ("uvloop", "rloop"):
            twin = rows.get(c.name.removesuffix("-async") + f"-{loop}")
            if loop == "rloop" and c.name in without_rloop:
                assert twin is None, twin
                continue
            assert twin is not None, (c.name, loop)
            assert twin.client.library == f"{c.client.library}+{loop}" and twin.client.mode == "async"
            assert twin.command.plugin == c.command.plugin and twin.command.args == ("--loop", loop)


@pytest.mark.parametrize("name", ["py-pyqwest-sync", "py-pyqwest-async"])
def test_pyqwest_counts_insecure_as_failures_saying_why(name, tls_server):
    """pyqwest has no switch that turns certificate checks off: --insecure fails every request, counted, with
    the reason (the harness classes it a TLSError)."""
    spec = next(c for c in CLIENTS if c.name == name)
    if importlib.util.find_spec("pyqwest") is None:
        pytest.skip("peer pyqwest is not installed here (make peers)")
    run = run_driver(spec, tls_server.url + "/", Workload(2, 2, 0, 5), row_timeout_s=60, driver_flags=["--insecure"])
    assert run.stats is not None and run.stats.errors == run.stats.requests == 4, run.reason
    reasons = {f["reason"] for w in run.raw["workers"] for f in w["failures"]}
    assert reasons == {"TLSError: ValueError: pyqwest cannot skip certificate verification (--insecure)"}


# -- the peers of late 2026: impit, primp, ry, httpr, aiosonic, geventhttpclient, httpx-aiohttp; rloop ----------------

#: each new peer's distribution (as pinned) and the module its rows import
NEW_PEERS = {
    "impit": "impit",
    "primp": "primp",
    "ry": "ry",
    "httpr": "httpr",
    "aiosonic": "aiosonic",
    "gevent": "gevent",
    "geventhttpclient": "geventhttpclient",
    "httpx-aiohttp": "httpx_aiohttp",
    "rloop": "rloop",
    "curl_cffi": "curl_cffi",
}


def _row(name: str):
    spec = next(c for c in CLIENTS if c.name == name)
    _needs(spec.needs_module)
    return spec


def _needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"peer {module} is not installed here (make peers)")


@pytest.mark.parametrize("distribution, module", sorted(NEW_PEERS.items()))
def test_the_new_peers_are_their_pins(distribution, module):
    _needs(module)
    assert metadata.version(distribution) == _pinned(distribution)


#: the new peers' rows and whether their library does the contract's --http 2
HTTP2 = {
    "py-impit-sync": False,
    "py-impit-async": False,
    "py-primp-sync": True,
    "py-primp-async": True,
    "py-ry-sync": True,
    "py-ry-async": True,
    "py-httpr-sync": True,
    "py-httpr-async": True,
    "py-aiosonic": False,
    "py-httpx-aiohttp": False,
    "py-geventhttpclient": False,
}


@pytest.mark.parametrize("name", sorted(HTTP2))
def test_the_new_peers_share_a_client_and_ask_for_http2_or_say_they_cannot(name, server):
    spec = _row(name)
    shared = Workload(3, 4, 1, 5, client_scope="shared")
    run = run_driver(spec, server.url + "/", shared, row_timeout_s=60, expected_body_bytes=len(HELLO))
    assert run.status is RunStatus.OK and run.raw["workload"]["client_scope"] == "shared", run.reason
    run = run_driver(spec, server.url + "/", Workload(2, 3, 1, 5, http="2"), row_timeout_s=60)
    if HTTP2[name]:  # prior knowledge over http: the server speaks h2c
        assert run.status is RunStatus.OK and run.raw["client"]["protocol"] == "HTTP/2", run.reason
    else:
        assert run.status is RunStatus.UNSUPPORTED and run.reason.startswith("unsupported: HTTP/2"), run.reason


@pytest.mark.parametrize("name", ["py-primp-sync", "py-primp-async"])
def test_primp_over_tls_reports_no_protocol_it_cannot_tell(name, tls_server, server):
    """primp offers h2 by ALPN over TLS whatever --http says, and its responses do not say their version: over https
    its document has no client.protocol, and a note why; over http it is held to HTTP/1.1 as every row."""
    from clientbench.drivers.primp_driver import TLS_NOTE

    spec = _row(name)
    ca = ["--ca-file", tls_server.ca_file]
    run = run_driver(spec, tls_server.url + "/", Workload(2, 3, 1, 5), row_timeout_s=60, driver_flags=ca)
    assert run.status is RunStatus.OK, run.reason
    assert "protocol" not in run.raw["client"] and run.raw["client"]["notes"] == TLS_NOTE
    run = run_driver(spec, server.url + "/", Workload(2, 3, 1, 5), row_timeout_s=60)
    assert run.raw["client"]["protocol"] == "HTTP/1.1" and "notes" not in run.raw["client"]


@pytest.mark.parametrize("name", ["py-impit-sync", "py-impit-async"])
def test_impit_trusts_the_ca_file_through_ssl_cert_file(name, tls_server):
    """impit takes no CA file: its plugin hands --ca-file to its verifier through SSL_CERT_FILE; without it the
    throw-away CA is not trusted (a TLSError)."""
    spec = _row(name)
    wl = Workload(2, 3, 1, 5)
    run = run_driver(spec, tls_server.url + "/", wl, row_timeout_s=60, driver_flags=["--ca-file", tls_server.ca_file])
    assert run.status is RunStatus.OK, run.reason
    run = run_driver(spec, tls_server.url + "/", wl, row_timeout_s=60)
    reasons = {f["reason"].split(":", 1)[0] for w in run.raw["workers"] for f in w["failures"]}
    assert run.stats is not None and run.stats.errors == run.stats.requests and reasons == {"TLSError"}


@pytest.mark.parametrize("name", ["py-httpr-sync", "py-httpr-async"])
def test_httpr_reports_an_untrusted_certificate_as_a_connect_error(name, tls_server):
    """httpr 0.7.8's exceptions keep reqwest's top-level message only: a failed TLS handshake is the same
    ConnectError as a refused connection, and the row counts it as httpr says (docs/peers.md). A release that
    keeps the cause fails this test: then its rows pass check-driver's untrusted-CA check, and the docs change."""
    spec = _row(name)
    run = run_driver(spec, tls_server.url + "/", Workload(2, 1, 0, 5), row_timeout_s=60)
    reasons = {f["reason"] for w in run.raw["workers"] for f in w["failures"]}
    assert run.stats is not None and run.stats.errors == run.stats.requests == 2
    assert reasons == {f"ConnectionError: ConnectError: error sending request for url ({tls_server.url}/)"}


@pytest.mark.parametrize("name", ["py-aiosonic", "py-httpx-aiohttp"])
def test_no_tls_on_rloop_is_unsupported_over_https_and_runs_over_http(name, tls_server, server):
    spec = _row(name)
    _needs("rloop")
    rloop = dataclasses.replace(spec, command=PythonDriver(spec.command.plugin, ("--loop", "rloop")))
    flags = ["--ca-file", tls_server.ca_file]
    run = run_driver(rloop, tls_server.url + "/", Workload(1, 2, 0, 5), row_timeout_s=60, driver_flags=flags)
    assert run.status is RunStatus.UNSUPPORTED, run.reason
    assert run.reason.startswith("unsupported: --loop rloop over https (rloop 0.5.0 has no TLS"), run.reason
    run = run_driver(rloop, server.url + "/", Workload(2, 3, 1, 5), row_timeout_s=60, expected_body_bytes=len(HELLO))
    assert run.status is RunStatus.OK and run.raw["client"]["library"] == f"{spec.client.library}+rloop", run.reason


def test_geventhttpclient_runs_its_workers_as_greenlets(server):
    """Its driver process re-executes itself with gevent's patches first: the harness's W threads are greenlets of
    one OS thread, which wait for the server together (4 x /delay/300 take about 300 ms, not 1200)."""
    spec = _row("py-geventhttpclient")
    run = run_driver(spec, server.url + "/delay/300", Workload(4, 1, 0, 5), row_timeout_s=60)
    assert run.status is RunStatus.OK, run.reason
    assert run.raw["client"]["concurrency"].startswith("gevent greenlets") and run.raw["client"]["mode"] == "sync"
    assert 0.3e9 <= run.raw["wall_ns"] < 0.9e9
    assert run.raw["client"]["library_version"] == f"{_pinned('geventhttpclient')} (gevent {_pinned('gevent')})"


def test_geventhttpclient_plugin_will_not_replace_a_process_not_its_own():
    """Loaded in another program (here pytest), unpatched, the plugin refuses rather than exec over it."""
    _needs("geventhttpclient")
    from clientbench.drivers import geventhttpclient_driver

    with pytest.raises(RuntimeError, match="its own driver process"):
        geventhttpclient_driver.plugin()
