"""The phases of a request (docs/phases.md) against a server nobody here wrote, whose delays are known: Python's
http.server, subclassed to wait X ms before it sends the response's head and Y ms between the head and the body.
Every row that records phases shows its wait (or send+wait) at X and its receive at Y (`near`: tight below, looser
above, as load only delays); over TLS with a connection per request, the C++ and Rust rows' connect, TLS and wait lie
within what curl -w saw on the same server just before and just after them. The rows run as users run them,
`clientbench run --target`."""

from __future__ import annotations

import asyncio
import dataclasses
import http.server
import itertools
import json
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import clientbench.cli as cli
import pytest
from clientbench import harness, sdk
from clientbench.analysis.phases import reading
from clientbench.harness.phases import SAMPLE_EVERY, check_keys
from clientbench.model import Row
from clientbench.schema import InvalidResult, validate_raw
from clientbench.stats import aggregate, phase_means
from support.dualserver import make_pki
from support.rows import client, good_run

# -- the harness, the document and the runner's figures ----------------------------------------------------

INFO = {"language": "Python", "library": "fake", "library_version": "0", "mode": "sync", "gil": None}


def parse(argv: list[str]) -> Any:
    return harness.parser("test driver").parse_args(argv)


KEYS = ("connect+tls", "send", "wait", "receive")


def fake(fail_every: int = 0, mode: str = "sync") -> harness.SyncDriver[Any] | harness.AsyncDriver[Any]:
    """Requests that record 1, 2, 3 and 4 µs of phases (connect+tls on a worker's first only) and fail every
    `fail_every`th."""
    calls: dict[int, itertools.count[int]] = {}  # per client: each worker's own

    def record(client: object, url: str = "") -> tuple[int, int]:
        if id(client) not in calls:
            calls[id(client)] = itertools.count(1)
            sdk.phase("connect+tls", 1000)
        for key, ns in (("send", 2000), ("wait", 3000), ("receive", 4000)):
            sdk.phase(key, ns)
        if fail_every and next(calls[id(client)]) % fail_every == 0:
            raise ConnectionResetError("reset by the fake")
        return 200, 13

    if mode == "sync":
        return harness.SyncDriver(lambda a: object(), record, phases=KEYS)

    async def make(a: Any) -> object:
        return object()

    async def request(client: object, url: str) -> tuple[int, int]:
        await asyncio.sleep(0)
        return record(client)

    async def close(client: object) -> None:
        return None

    return harness.AsyncDriver(make, request, close, phases=KEYS)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("record", ["samples", "histogram"])
def test_the_harness_sums_the_phases_of_the_successful_requests_it_samples(mode: str, record: str) -> None:
    """One request in SAMPLE_EVERY is recorded (0, 8, 16 of 17); every 3rd fails (2, 5, 8, ...): 0 and 16 count."""
    assert SAMPLE_EVERY == 8
    args = ["--url", "http://127.0.0.1:1/", "--workers", "2", "--requests", "17", "--record", record]
    doc = fake(3, mode).run(parse([*args, "--phases"]), INFO)
    validate_raw(doc)
    assert doc["client"]["phases"] == list(KEYS)
    for w in doc["workers"]:
        assert w["failure_count"] == 5
        ph = w["phases"]
        assert ph["count"] == 2 and 0 < ph["latency_ns"]
        # the first request opened the worker's connection; the failed 8th adds nothing
        assert ph["sum_ns"] == {"connect+tls": 1000, "send": 4000, "wait": 6000, "receive": 8000}
    plain = fake(0, mode).run(parse(args), INFO)
    assert "phases" not in plain["client"] and all("phases" not in w for w in plain["workers"])


def test_the_phases_document_is_checked() -> None:
    doc = fake().run(parse(["--url", "http://127.0.0.1:1/", "--workers", "1", "--requests", "2", "--phases"]), INFO)
    for mutate, message in (
        (lambda d: d["client"].pop("phases"), "client.phases does not name them"),
        (lambda d: d["workers"][0].pop("phases"), "has no phases"),
        (lambda d: d["workers"][0]["phases"]["sum_ns"].pop("wait"), "client.phases names"),
        (lambda d: d["workers"][0]["phases"].update(count=3), "more than its 2 successful ones"),
        (lambda d: d["client"].update(phases=["wait+send"]), "'wait\\+send' is not a phase"),
        (lambda d: d["client"].update(phases=["tcp"]), "does not match"),
    ):
        bad = json.loads(json.dumps(doc))
        mutate(bad)
        with pytest.raises(InvalidResult, match=message):
            validate_raw(bad)


def test_a_plugin_declares_valid_keys() -> None:
    assert check_keys(("dns", "connect+tls", "send+wait", "receive")) == ("dns", "connect+tls", "send+wait", "receive")
    for bad in (("wait+send",), ("connect", "connect+tls"), ("receive", "send"), ("tcp",), ("connect+wait",)):
        with pytest.raises(ValueError):
            check_keys(bad)
    with pytest.raises(ValueError):
        sdk.SyncClient("x", lambda o: None, lambda c, u: (200, 0), phases=("bogus",))


def _doc(sums: dict[str, int], count: int, latency_ns: int) -> dict[str, Any]:
    return {
        "client": {"phases": list(sums)},
        "workers": [{"phases": {"count": count, "latency_ns": latency_ns, "sum_ns": sums}}] * 2,
    }


def test_the_runner_makes_means_and_the_clients_own_time() -> None:
    means = phase_means(_doc({"connect": 0, "send": 2_000_000, "wait": 6_000_000}, 4, 10_000_000))
    assert means == pytest.approx({"connect": 0.0, "send": 0.5, "wait": 1.5, "own": 0.5})
    assert phase_means({"client": {}, "workers": [{}]}) is None
    assert phase_means(_doc({"wait": 0}, 0, 0)) is None  # no successful request recorded
    # over repeats, each phase's median
    c = client("py-x")
    runs = [good_run(c, seed=i) for i in range(3)]
    stats = [
        dataclasses.replace(r.stats, phases={"wait": w, "own": 0.1}) for r, w in zip(runs, (1.0, 3.0, 2.0), strict=True)
    ]
    agg = aggregate(stats)
    assert agg.median.phases == {"wait": 2.0, "own": 0.1}
    assert agg.ranges["phases.wait"].low == 1.0 and agg.ranges["phases.wait"].high == 3.0


def _phased(name: str, phases: dict[str, float], language: str = "Python", gil: str | None = None) -> Row:
    r = Row(dataclasses.replace(client(name, gil), language=language))
    run = good_run(r.client)
    assert run.stats is not None
    run.stats = dataclasses.replace(run.stats, phases=phases)
    r.add(run)
    return r


def test_the_reading_says_what_the_binding_adds_to_its_native_clients_own_time() -> None:
    rows = [
        _phased("cpp-beast", {"send": 0.002, "wait": 0.030, "receive": 0.004, "own": 0.003}, "C++"),
        _phased("py-beast-released", {"send": 0.002, "wait": 0.031, "receive": 0.004, "own": 0.010}, gil="released"),
        _phased("py-beast-held", {"send": 0.002, "wait": 0.029, "receive": 0.004, "own": 0.041}, gil="held"),
        _phased("py-requests", {}),  # recorded none: nothing said of it
    ]
    text = "\n".join(reading(rows))
    assert "3 rows recorded their phases" in text and "the largest part of a request is wait in 3 of them" in text
    assert "Python Beast's own time** against" in text and "0.003 ms per request" in text
    assert "GIL released 0.010 ms (+0.007)" in text and "GIL held 0.041 ms (+0.038)" in text
    assert "Opening a connection" not in text  # no row asked for a new connection per request
    assert reading([_phased("py-requests", {})]) == []


# -- against a server nobody here wrote -----------------------------------------------------------------

X_MS, Y_MS = 40.0, 25.0
BODY = b"p" * 2000
#: every shipped row that records phases (docs/phases.md's table), in each of its modes
ROWS = (
    "cpp-beast,cpp-beast-serial,cpp-floor,rust-reqwest,rust-reqwest-sync,py-floor,py-floor-async,py-floor-uvloop,"
    "py-pycurl,py-curl_cffi-sync,py-curl_cffi-async,py-curl_cffi-uvloop,py-curl_cffi-rloop,py-httpx-sync,"
    "py-httpx-async,py-httpx-uvloop,py-httpx2-sync,py-httpx2-async,py-httpx2-uvloop,py-aiohttp,py-aiohttp-uvloop,"
    "py-beast-held,py-beast-released,py-beast-async,py-beast-uvloop,py-reqwest-held,py-reqwest-released,"
    "py-reqwest-async,py-reqwest-uvloop"
)
#: the rows curl -w is compared with
NATIVE = ("cpp-beast", "rust-reqwest")


def near(measured_ms: float, expected_ms: float) -> bool:
    """Within 10% + 1 ms (the issue's bound) below, a third + 2 ms above: a sleep never ends early (the clock: 1 ms),
    but beside the other suites on 2 cores it ends late, on the server's side and the client's (CI saw the 25 ms
    trickle read as 29.2 ms by py-floor, the 40 ms wait as 45.6 by httpx on uvloop). A phase holding its neighbour's
    time (wait with the trickle: 65 ms; receive with the wait) still lies far outside."""
    return expected_ms - (0.1 * expected_ms + 1.0) <= measured_ms <= expected_ms + expected_ms / 3 + 2.0


class Delayed(http.server.BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive: X ms, the head, Y ms, the body (Content-Length framed)."""

    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: otherwise the body waits, behind Nagle's algorithm, for the client's delayed ACK of the head
    disable_nagle_algorithm = True

    wait_ms = X_MS

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        time.sleep(self.wait_ms / 1000)
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()  # writes the head: the wfile is unbuffered
        time.sleep(Y_MS / 1000)
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_pki(tmp_path_factory.mktemp("pki"))


#: the TLS server's wait before the head: the Python server's own time (its accept thread does every handshake)
#: grows under the suites' load by several ms, which 10% of a longer wait covers
TLS_WAIT_MS = 100.0


class DelayedLonger(Delayed):
    wait_ms = TLS_WAIT_MS


def _serve(tls: ssl.SSLContext | None) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), DelayedLonger if tls else Delayed)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def plain() -> Iterator[str]:
    yield from _serve(None)


@pytest.fixture
def secure(pki: tuple[Path, Path, Path]) -> Iterator[str]:
    _, leaf, key = pki
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(leaf, key)
    yield from _serve(context)


def run_phases(tmp_path: Path, url: str, rows: str, *more: str, workers: int = 2) -> dict[str, dict[str, float]]:
    """`clientbench run --target URL` of these rows, 2 workers x 9 requests (the Python harness records 0 and 8 of each
    worker: SAMPLE_EVERY): each row's phases (mean ms)."""
    out = tmp_path / "out"
    argv = [
        "run",
        "--target",
        url,
        "-c",
        rows,
        "-w",
        str(workers),
        "-n",
        "9",
        "-r",
        "1",
        "--warmup",
        "1",
        "-o",
        str(out),
    ]
    code = cli.main([*argv, *more])
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    found = json.loads((folder / "results.json").read_text())["rows"]
    bad = {r["client"]["name"]: (r["status"], r["reason"]) for r in found if r["status"] != "ok"}
    assert bad == {} and code == 0
    return {r["client"]["name"]: r["aggregate"]["median"]["phases"] for r in found}


def _one(phases: dict[str, float], *names: str) -> float | None:
    """The phase of these names, or the merged one that holds the first (send+wait for wait)."""
    for key, value in phases.items():
        if names[0] in key.split("+"):
            return value
    return None


@pytest.mark.long(40)
@pytest.mark.timeout(600)
def test_every_row_that_records_phases_sees_the_servers_wait_and_trickle(tmp_path: Path, plain: str) -> None:
    # a row whose phases miss the bounds is run again, up to 3 more times, alone with the others that missed: beside
    # the suites a sleep ends late (CI saw a 40 ms trickle read as 59 ms while the aarch64 wheels built), never
    # early, and a phase that holds its neighbour's time misses on every try
    wrong: dict[str, list[dict[str, float]]] = {}
    rows = ROWS
    for attempt in range(4):
        phases = run_phases(tmp_path / str(attempt), plain + "/", rows)
        assert set(phases) == set(rows.split(","))
        for name, ph in phases.items():
            assert ph is not None, f"{name} recorded no phases"
            wait, receive = _one(ph, "wait"), _one(ph, "receive")
            assert wait is not None and receive is not None, (name, ph)
            assert ph["own"] > -1.0, (name, ph)  # the phases lie within the request (clocks read apart: a little)
            if near(wait, X_MS) and near(receive, Y_MS):
                wrong.pop(name, None)
            else:
                wrong.setdefault(name, []).append(ph)
        if not wrong:
            return
        rows = ",".join(wrong)
    pytest.fail(
        f"wait should be {X_MS} ms and receive {Y_MS} ms (10% + 1 ms below, a third + 2 ms above) in one of "
        f"4 runs: {wrong}"
    )


def curl_times(url: str, ca: Path, n: int = 6) -> list[dict[str, float]]:
    """curl -w's times of requests on new connections, in ms: connect, TLS (appconnect - connect) and wait
    (starttransfer - pretransfer: Debian's curl 7.88 has no posttransfer; sending a GET takes microseconds). One
    curl, n URLs, each on a connection of its own (`Connection: close`, no TLS session resumed); the first is left
    out: its TLS time includes loading the CA file into the handle."""
    fields = "%{time_connect} %{time_appconnect} %{time_pretransfer} %{time_starttransfer}\\n"
    done = subprocess.run(
        ["curl", "-sS", "--cacert", str(ca), "--no-sessionid", "-H", "Connection: close", "-w", fields,
         *(["-o", "/dev/null", url] * n)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    out = []
    for line in done.stdout.splitlines()[1:]:
        connect, appconnect, pretransfer, starttransfer = (float(v) * 1000 for v in line.split())
        out.append({"connect": connect, "tls": appconnect - connect, "wait": starttransfer - pretransfer})
    return out


@pytest.mark.long(20)
@pytest.mark.timeout(600)
def test_curl_agrees_with_the_native_rows_over_tls_on_new_connections(
    tmp_path: Path, secure: str, pki: tuple[Path, Path, Path]
) -> None:
    ca = pki[0]
    # one worker, as curl makes one connection at a time: the server's accept thread does every TLS handshake, so a
    # second worker's handshake would wait for the first's (seen: 3.7 ms against curl's 2.1 with 2 workers)
    before = curl_times(secure + "/", ca)
    phases = run_phases(
        tmp_path, secure + "/", ",".join(NATIVE), "--connection", "new", "--ca-file", str(ca), workers=1
    )
    curls = before + curl_times(secure + "/", ca)
    # a row's mean against the range of curl's single requests on either side of it: the suites' load moves both
    # (CI saw curl's median handshake at 5.6 ms while Beast's mean, a minute earlier, was 2.9)
    low = {k: min(c[k] for c in curls) for k in curls[0]}
    high = {k: max(c[k] for c in curls) for k in curls[0]}

    def agrees(measured: float, key: str) -> bool:
        return low[key] / 2 - 1.0 <= measured <= high[key] * 1.5 + 1.0

    assert low["connect"] > 0 and low["tls"] > 0 and near(low["wait"], TLS_WAIT_MS), curls
    for name in NATIVE:
        ph = phases[name]
        assert all(v > 0 for k, v in ph.items() if k.split("+")[0] in ("connect", "tls")), (name, ph)
        if "connect+tls" in ph:
            # reqwest makes both in one step, with rustls: its handshake is not OpenSSL's (curl's and Beast's), and
            # was measured 1-2 ms quicker beside the suites' load (2.1 ms against curl's 3.5): no slower than curl's
            opening = max(c["connect"] + c["tls"] for c in curls)
            assert 0 < ph["connect+tls"] <= opening * 1.5 + 1.0, (name, ph, curls)
        else:  # Beast's OpenSSL handshake, as curl's
            assert agrees(ph["connect"], "connect") and agrees(ph["tls"], "tls"), (name, ph, curls)
        wait = _one(ph, "wait") or 0.0
        assert near(wait, TLS_WAIT_MS) and agrees(wait, "wait"), (name, ph, curls)
