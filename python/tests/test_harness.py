"""The Python drivers' harness (clientbench/harness/): failure reasons are `<Class>: <message>` with the classes
shared by the three languages' harnesses (docs/raw-format.md, "Failure reasons"); the contract's flags and their
usage errors; the raw/3 documents of closed and open loops, uploads and histograms, from drivers of fake clients
(the scheduler itself is tested on a fake clock in test_schedule.py)."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import beast_client
import pytest
import reqwest_client
from clientbench import harness
from clientbench.harness import FAILURE_CLASSES, describe, failure_class
from clientbench.schema import validate_raw

PYTHON_DIR = Path(__file__).resolve().parents[1]


def test_the_documented_classes_are_there():
    documented = {"TimeoutError", "ConnectionError", "ProtocolError", "InvalidUrl", "InvalidRequest", "Cancelled"}
    assert documented <= set(FAILURE_CLASSES) and FAILURE_CLASSES[-1] == "Error"  # the catch-all last


@pytest.mark.parametrize(
    "exc, reason",
    [
        (TimeoutError(), "TimeoutError"),
        (TimeoutError("timed out"), "TimeoutError: timed out"),  # the class's own name is not repeated
        (asyncio.TimeoutError(), "TimeoutError"),
        (ConnectionRefusedError(111, "refused"), "ConnectionError: ConnectionRefusedError: [Errno 111] refused"),
        (ConnectionResetError(), "ConnectionError: ConnectionResetError"),
        (beast_client.ProtocolError("malformed HTTP response"), "ProtocolError: malformed HTTP response"),
        (reqwest_client.ProtocolError("invalid HTTP version parsed"), "ProtocolError: invalid HTTP version parsed"),
        (ValueError("invalid header name"), "InvalidRequest: ValueError: invalid header name"),
        (asyncio.CancelledError(), "Cancelled: CancelledError"),
        (RuntimeError("boom"), "Error: RuntimeError: boom"),
        (KeyError("k"), "Error: KeyError: 'k'"),
        (RuntimeError("two\nlines"), "Error: RuntimeError: two lines"),  # one line
        (RuntimeError("  padded \n"), "Error: RuntimeError: padded"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)  # fmt: skip
def test_describe(exc, reason):
    assert describe(exc) == reason
    assert reason.split(":", 1)[0] == failure_class(exc) in FAILURE_CLASSES


def case(module: str, name: str, factory: Callable[[object], BaseException], cls: str):
    """`module.name(...)` (made by factory(module)) must be classified as `cls` (docs/raw-format.md)."""

    def make() -> BaseException:
        return factory(pytest.importorskip(module) if module != "builtins" else None)

    return pytest.param(make, cls, id=f"{module}.{name}")


LIBRARY_EXCEPTIONS = [
    case("requests", "ReadTimeout", lambda m: m.exceptions.ReadTimeout("read timed out"), "TimeoutError"),
    case("requests", "ConnectTimeout", lambda m: m.exceptions.ConnectTimeout("connect timed out"), "TimeoutError"),
    case("requests", "ConnectionError", lambda m: m.exceptions.ConnectionError("refused"), "ConnectionError"),
    case("requests", "InvalidURL", lambda m: m.exceptions.InvalidURL("bad"), "InvalidUrl"),
    case("requests", "MissingSchema", lambda m: m.exceptions.MissingSchema("no scheme"), "InvalidUrl"),
    case("requests", "InvalidSchema", lambda m: m.exceptions.InvalidSchema("ftp"), "InvalidUrl"),
    case("requests", "InvalidHeader", lambda m: m.exceptions.InvalidHeader("bad header"), "InvalidRequest"),
    case("aiohttp", "ServerDisconnectedError", lambda m: m.ServerDisconnectedError(), "ConnectionError"),
    case(
        "aiohttp", "InvalidUrlClientError", lambda m: m.InvalidUrlClientError("http://127.0.0.1:99999/"), "InvalidUrl"
    ),
    case("aiohttp", "ServerTimeoutError", lambda m: m.ServerTimeoutError("timeout"), "TimeoutError"),
    case("httpx", "ConnectError", lambda m: m.ConnectError("refused"), "ConnectionError"),
    case("httpx", "ReadTimeout", lambda m: m.ReadTimeout("timeout"), "TimeoutError"),
    case("httpx", "InvalidURL", lambda m: m.InvalidURL("bad"), "InvalidUrl"),
    case(
        "urllib3", "ReadTimeoutError", lambda m: m.exceptions.ReadTimeoutError(None, "/", "timed out"), "TimeoutError"
    ),
    case(
        "urllib3", "NewConnectionError", lambda m: m.exceptions.NewConnectionError(None, "refused"), "ConnectionError"
    ),
    # URL, reset and libcurl cases
    case(
        "aiohttp",
        "NonHttpUrlClientError",
        lambda m: m.NonHttpUrlClientError("ftp://127.0.0.1/"),
        "InvalidUrl",
    ),
    case(
        "aiohttp",
        "ClientOSError",
        lambda m: m.ClientOSError(104, "Connection reset by peer"),
        "ConnectionError",
    ),
    case(
        "httpx",
        "UnsupportedProtocol",
        lambda m: m.UnsupportedProtocol("unsupported protocol 'ftp://'"),
        "InvalidUrl",
    ),
    case("httpx", "ReadError", lambda m: m.ReadError("Connection reset by peer"), "ConnectionError"),
    case(
        "urllib3",
        "LocationParseError",
        lambda m: m.exceptions.LocationParseError("http://127.0.0.1:99999/"),
        "InvalidUrl",
    ),
    case("pycurl", "error-7", lambda m: m.error(7, "Failed to connect"), "ConnectionError"),
    case("pycurl", "error-28", lambda m: m.error(28, "Operation timed out"), "TimeoutError"),
    case("pycurl", "error-3", lambda m: m.error(3, "URL rejected"), "InvalidUrl"),
    # rnet and wreq: --timeout ending a request mid-body is a body or decoding error that says TimedOut
    case(
        "builtins",
        "BodyError-TimedOut",
        lambda m: type("BodyError", (Exception,), {})("is_body error: wreq::Error { kind: Body, source: TimedOut }"),
        "TimeoutError",
    ),
    case(
        "builtins",
        "DecodingError-TimedOut",
        lambda m: type("DecodingError", (Exception,), {})(
            "is_decode error: wreq::Error { kind: Decode, source: wreq::Error { kind: Body, source: TimedOut } }"
        ),
        "TimeoutError",
    ),
    # our bindings raise ValueError for a URL they cannot use (and for a bad method or header)
    case(
        "builtins",
        "ValueError-url",
        lambda m: ValueError("invalid URL 'ftp://127.0.0.1/': unsupported scheme 'ftp' (plain http:// only)"),
        "InvalidUrl",
    ),
]


@pytest.mark.parametrize("make, cls", LIBRARY_EXCEPTIONS)
def test_library_exceptions_are_classified(make, cls):
    exc = make()
    reason = describe(exc)
    assert reason.startswith(f"{cls}: "), reason
    name = type(exc).__name__
    if name != cls:  # the library's own exception name is kept in the message
        assert reason.startswith(f"{cls}: {name}"), reason


def test_every_exception_gets_a_class():
    for exc in (
        BaseException(),
        Exception(),
        OSError(5, "I/O error"),
        UnicodeEncodeError("utf-8", "\udc80", 0, 1, "x"),
        json.JSONDecodeError("x", "", 0),
    ):
        assert failure_class(exc) in FAILURE_CLASSES
        assert describe(exc).split(":", 1)[0] == failure_class(exc)


# -- the command line ------------------------------------------------------------------------------


def parse(argv: list[str]) -> argparse.Namespace:
    return harness.parser("test driver", gil=True).parse_args(["--url", "http://127.0.0.1:1/", *argv])


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["--rate", "0"], "--rate"),
        (["--rate", "-5"], "--rate"),
        (["--rate", "fast"], "--rate"),
        (["--rate", "nan"], "--rate"),
        (["--rate", "inf"], "--rate"),
        (["--duration", "5"], "--duration"),  # without --rate
        (["--rate", "10", "--duration", "5", "--requests", "3"], "--duration"),
        (["--rate", "10", "--duration", "0"], "--duration"),
        (["--rate", "2000001", "--workers", "2"], "--rate"),  # finer than 1 µs per worker
        (["--method", "POST", "--body-size", "-1"], "--body-size"),
        (["--method", "POST", "--body-size", str((1 << 30) + 1)], "--body-size"),
        (["--method", "POST", "--body-size", "1k"], "--body-size"),
        (["--body-size", "10"], "--body-size"),  # with GET
        (["--method", "PATCH"], "--method"),
        (["--record", "both"], "--record"),
        (["--arrival", "bursty", "--rate", "5"], "--arrival"),
        # the contract's rules (docs/raw-format.md, "Command line")
        (["--arrival", "poisson"], "--arrival"),  # without --rate
        (["--seed", "3"], "--seed"),
        (["--rate", "5", "--seed", "-1"], "--seed"),
        (["--rate", "5", "--seed", str(1 << 64)], "--seed"),
        (["--workers", "0"], "--workers"),
        (["--timeout", "0"], "--timeout"),
        (["--timeout", "86401"], "--timeout"),
        (["--ca-file", "/no/such/ca.pem"], "--ca-file"),
        (["--ca-file", __file__], "--ca-file"),  # a file without a PEM certificate
        (["--ca-file", __file__, "--insecure"], "--ca-file"),
    ],
)
def test_bad_usage_is_one_line_naming_the_flag(argv, flag, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err, err


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1:1/", "http://", "127.0.0.1:1", "http://h:0/", "http://h:65536/", "http://h /", "x"]
)
def test_an_unusable_url_is_bad_usage(url, capsys):
    with pytest.raises(SystemExit) as exit_info:
        harness.parser("test driver").parse_args(["--url", url])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--url" in err, err


def test_usable_urls_and_the_open_loops_defaults():
    for url in ("http://127.0.0.1:1/", "HTTPS://example.com", "http://[::1]:8080/x?y", "http://h:/"):
        assert harness.parser("test driver").parse_args(["--url", url]).url == url
    args = parse(["--rate", "10"])
    assert (args.arrival, args.seed) == ("uniform", 1)
    assert parse(["--rate", "10", "--seed", str((1 << 64) - 1)]).seed == (1 << 64) - 1
    assert parse(["--timeout", "86400"]).timeout == 86400.0


def test_defaults_and_what_parse_fills_in():
    args = parse([])
    assert (args.requests, args.duration, args.rate, args.method, args.body_size, args.record) == (
        100, None, None, "GET", 0, "samples",
    )  # fmt: skip
    assert args.body is None and args.expected is None
    args = parse(["--rate", "1000000", "--duration", "2", "--method", "PUT", "--body-size", "28"])
    assert args.requests is None and args.duration == 2.0 and args.rate == 1e6  # 1 µs per worker: allowed
    assert args.body == b"abcdefghijklmnopqrstuvwxyzab"
    assert args.expected == f"28 {hashlib.sha256(args.body).hexdigest()}".encode()
    assert parse(["--method", "POST"]).body == b""


def test_upload_body_and_answer():
    assert harness.upload_answer(b"abc") == b"3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert harness.upload_body(0) == b""
    body = harness.upload_body(100_003)
    assert len(body) == 100_003 and body == bytes(97 + i % 26 for i in range(100_003))


def test_a_driver_process_exits_2_with_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "clientbench.drivers.binding", "--binding", "beast", "--url", "http://127.0.0.1:1/",
         "--rate", "0"],
        capture_output=True, text=True, timeout=60, cwd=PYTHON_DIR,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "--rate" in proc.stderr


# -- documents, from drivers of fake clients ---------------------------------------------------------


def fake_sync(answer: bytes | None = None, fail_every: int = 0) -> harness.SyncDriver[Any]:
    """A driver whose requests return at once: 200 with 13 bytes (or raise every `fail_every`th call), and
    uploads answered with `answer` (by default the right one)."""
    calls = itertools.count(1)

    def request(client: object, url: str) -> tuple[int, int]:
        if fail_every and next(calls) % fail_every == 0:
            raise ConnectionResetError("reset by the fake")
        return 200, 13

    def upload(client: object, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        return 200, harness.upload_answer(body) if answer is None else answer

    return harness.SyncDriver(lambda a: object(), request, upload=upload)


def fake_async(answer: bytes | None = None) -> harness.AsyncDriver[Any]:
    async def make(a: argparse.Namespace) -> object:
        return object()

    async def request(client: object, url: str) -> tuple[int, int]:
        return 200, 13

    async def upload(client: object, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        await asyncio.sleep(0)
        return 200, harness.upload_answer(body) if answer is None else answer

    async def close(client: object) -> None:
        return None

    return harness.AsyncDriver(make, request, close, upload)


INFO = {"language": "Python", "library": "fake", "library_version": "0", "mode": "sync", "gil": None}


def run_fake(driver: Any, argv: list[str]) -> dict[str, Any]:
    doc: dict[str, Any] = driver.run(parse(argv), INFO)
    validate_raw(doc)  # the runner's check of the contract
    return doc


@pytest.mark.parametrize("make", [fake_sync, fake_async], ids=["sync", "async"])
def test_closed_loop_document(make):
    doc = run_fake(make(), ["--workers", "3", "--requests", "4", "--warmup", "2"])
    assert doc["schema"] == "clientbench.raw/4"
    assert doc["workload"] == {
        "url": "http://127.0.0.1:1/", "workers": 3, "requests": 4, "duration_s": None, "warmup": 2,
        "timeout_s": 30.0, "connection": "keep-alive", "loop": "closed", "rate": None, "arrival": None,
        "seed": None, "method": "GET", "body_size": 0, "record": "samples", "client_scope": "per-worker",
        "http": "1.1", "upload": "whole", "download": "whole", "chunk_size": 65536, "targets": None,
    }  # fmt: skip
    assert doc["client"]["protocol"] == "HTTP/1.1"  # a client without a protocol probe speaks HTTP/1.1 only
    for w in doc["workers"]:
        assert (w["count"], w["late"], w["missed"], w["failure_count"], w["bytes"]) == (4, 0, 0, 0, 52)
        assert len(w["start_ns"]) == len(w["latencies_ns"]) == 4 and "intended_ns" not in w


@pytest.mark.parametrize("make", [fake_sync, fake_async], ids=["sync", "async"])
def test_open_loop_document(make):
    doc = run_fake(make(), ["--workers", "2", "--rate", "400", "--duration", "0.05", "--arrival", "poisson"])
    wl = doc["workload"]
    assert (wl["loop"], wl["rate"], wl["arrival"], wl["seed"], wl["requests"], wl["duration_s"]) == (
        "open", 400.0, "poisson", 1, None, 0.05,
    )  # fmt: skip
    for i, w in enumerate(doc["workers"]):
        due = list(itertools.takewhile(lambda t: t < 50_000_000, harness.intended_ns(i, 2, 400, "poisson", 1)))
        assert w["intended_ns"] == due[: w["count"]] and w["count"] + w["missed"] == len(due)
        assert all(s >= t for s, t in zip(w["start_ns"], w["intended_ns"], strict=True))  # nothing starts early
    assert doc["wall_ns"] < 50_000_000 + 1_000_000_000  # D plus (generously) one request


@pytest.mark.parametrize("make", [fake_sync, fake_async], ids=["sync", "async"])
def test_the_seed_is_recorded_for_a_poisson_schedule_only(make):
    for arrival, seed in (("uniform", None), ("poisson", 9)):
        argv = ["--workers", "1", "--rate", "1000", "--requests", "2", "--arrival", arrival, "--seed", "9"]
        wl = run_fake(make(), argv)["workload"]
        assert (wl["arrival"], wl["seed"]) == (arrival, seed)


@pytest.mark.parametrize("make", [fake_sync, fake_async], ids=["sync", "async"])
def test_uploads_are_checked(make):
    doc = run_fake(make(), ["--workers", "2", "--requests", "3", "--method", "POST", "--body-size", "100"])
    assert (doc["workload"]["method"], doc["workload"]["body_size"]) == ("POST", 100)
    assert all(w["failure_count"] == 0 and w["bytes"] == 3 * 68 for w in doc["workers"])  # "100 <64 hex>"
    doc = run_fake(make(b"3 nonsense"), ["--workers", "2", "--rate", "1000", "--requests", "3", "--method", "PUT"])
    for w in doc["workers"]:
        assert w["failure_count"] == w["count"] == 3 and w["bytes"] == 3 * 10  # still received
        assert w["failures"][0] == {
            "index": 0,
            "status": None,
            "reason": "Error: upload digest mismatch: got '3 nonsense', expected "
            "'0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'",
        }


@pytest.mark.parametrize("loop", [[], ["--rate", "100000"]], ids=["closed", "open"])
def test_histogram_record(loop):
    doc = run_fake(fake_sync(fail_every=4), ["--workers", "2", "--requests", "40", "--record", "histogram", *loop])
    for w in doc["workers"]:
        assert "latencies_ns" not in w and "start_ns" not in w and "intended_ns" not in w
        kinds = {"service", "corrected"} if loop else {"service"}
        assert set(w["histograms"]) == kinds
        for h in w["histograms"].values():
            assert h["significant_digits"] == 3
            assert sum(c for _, c in h["counts"]) == w["count"] - w["failure_count"]
    assert sum(w["failure_count"] for w in doc["workers"]) == 20  # one call in 4, over both workers


def test_a_non_200_upload_answer_is_its_status_not_a_digest_mismatch():
    """A 405's body is not an /upload line: the failure is `status 405`, the digest is compared for a 200 only."""

    def upload(client: object, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        return 405, b"Method Not Allowed"

    async def upload_async(client: object, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        return upload(client, url, method, body)

    async def make(a: argparse.Namespace) -> object:
        return object()

    async def request(client: object, url: str) -> tuple[int, int]:
        return 200, 13

    async def close(client: object) -> None:
        return None

    for driver in (
        harness.SyncDriver(lambda a: object(), lambda c, u: (200, 13), upload=upload),
        harness.AsyncDriver(make, request, close, upload_async),
    ):
        doc = run_fake(driver, ["--workers", "1", "--requests", "2", "--method", "POST", "--body-size", "3"])
        assert [(f["reason"], f["status"]) for f in doc["workers"][0]["failures"]] == [("status 405", 405)] * 2


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("loop", [[], ["--rate", "1000"]], ids=["closed", "open"])
def test_a_request_past_the_timeout_is_a_timeout_whatever_it_returned(sync, loop):
    """--timeout bounds the whole request: a library whose timeout bounds each read can return a 200 after it,
    which fails all the same (its bytes still count)."""
    calls = itertools.count()

    def slow(client: object, url: str) -> tuple[int, int]:
        if next(calls) == 1:
            time.sleep(0.06)
        return 200, 13

    async def slow_async(client: object, url: str) -> tuple[int, int]:
        return slow(client, url)

    async def make(a: argparse.Namespace) -> object:
        return object()

    async def close(client: object) -> None:
        return None

    driver: Any = harness.SyncDriver(lambda a: object(), slow) if sync else harness.AsyncDriver(make, slow_async, close)
    doc = run_fake(driver, ["--workers", "1", "--requests", "3", "--timeout", "0.05", *loop])
    (w,) = doc["workers"]
    assert (w["count"], w["failure_count"], w["bytes"]) == (3, 1, 39)
    (f,) = w["failures"]
    assert f["index"] == 1 and f["status"] is None
    assert f["reason"].startswith("TimeoutError: the request took 0.0") and f["reason"].endswith(
        ", past --timeout 0.05 s"
    )


def test_failures_are_all_counted_and_the_first_thousand_listed():
    doc = run_fake(fake_sync(fail_every=1), ["--workers", "1", "--requests", "1500"])
    (w,) = doc["workers"]
    assert w["failure_count"] == 1500 and len(w["failures"]) == 1000
    assert [f["index"] for f in w["failures"]] == list(range(1000))


def test_a_driver_without_uploads_refuses_post(capsys):
    driver = harness.SyncDriver(lambda a: object(), lambda c, u: (200, 1))
    with pytest.raises(SystemExit) as exit_info:
        driver.run(parse(["--method", "POST"]), INFO)
    assert exit_info.value.code == 3  # docs/raw-format.md, "Exit status": what the client cannot do at all
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("unsupported: --method POST")


def test_a_setup_failure_fails_every_request_of_the_schedule():
    def broken(a: argparse.Namespace) -> object:
        raise ConnectionRefusedError(111, "refused")

    driver = harness.SyncDriver(broken, lambda c, u: (200, 1))
    doc = run_fake(driver, ["--workers", "2", "--rate", "1000", "--requests", "3"])
    assert all(w["failure_count"] == w["count"] == 3 for w in doc["workers"])


@pytest.mark.parametrize("loop", [[], ["--rate", "5000"]], ids=["closed", "open"])
def test_connection_new_makes_a_client_per_timed_request(loop):
    made: list[int] = []
    closed: list[int] = []

    def make(a: argparse.Namespace) -> int:
        made.append(len(made))
        return made[-1]

    driver = harness.SyncDriver(make, lambda c, u: (200, 1), closed.append)
    doc = run_fake(driver, ["--workers", "1", "--requests", "4", "--warmup", "1", "--connection", "new", *loop])
    assert doc["workers"][0]["count"] == 4 and doc["workers"][0]["failure_count"] == 0
    assert made == [0, 1, 2, 3, 4] and closed == made  # the warm-up's client, then one per request; all closed
