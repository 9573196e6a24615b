"""The fault catalogue: every case for beast_client.Client, reqwest_client.Client and
reqwest_client.AsyncClient (documented exception within the timeout, process alive), and for the native
drivers (a counted failure with a reason, exit status 0)."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from typing import Any, Callable, Iterator

import pytest

import beast_client
import reqwest_client
from clientbench.clients import select
from clientbench.runner import Workload, run_driver
from clientbench.server import Server

import faultserver as fs
from binding_clients import FACTORIES, PROTOCOL_ERRORS, make

TIMEOUT = 1.0
SLACK = 2.0  # an error must arrive within TIMEOUT + SLACK


@pytest.fixture(params=list(FACTORIES), ids=list(FACTORIES))
def client(request) -> Iterator[Any]:
    c = make(request.param, TIMEOUT)
    yield c
    c.close()


@pytest.fixture()
def fault(request) -> Iterator[Callable[[fs.Handler], fs.FaultServer]]:
    servers: list[fs.FaultServer] = []

    def start(handler: fs.Handler) -> fs.FaultServer:
        servers.append(fs.FaultServer(handler))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def raises_within(client: Any, url: str, exc: type[BaseException] | tuple[type[BaseException], ...],
                  limit: float = TIMEOUT + SLACK) -> BaseException:
    t0 = time.monotonic()
    with pytest.raises(exc) as info:
        client.get(url)
    assert time.monotonic() - t0 < limit, f"{info.value!r} took {time.monotonic() - t0:.2f}s"
    return info.value


# -- URLs ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("url", [
    "", "not a url", "http://", "http:///path", "://127.0.0.1/", "127.0.0.1:80/",
    "https://127.0.0.1:1/", "ftp://127.0.0.1/", "file:///etc/passwd",
    "http://127.0.0.1:99999/", "http://127.0.0.1:abc/", "http://127.0.0.1:-1/", "http://127.0.0.1:0/",
    "http://[::1/", "http://exa mple.com/",
])
def test_bad_urls_raise_value_error(client, url):
    raises_within(client, url, ValueError, limit=SLACK)


def test_unresolvable_host(client):
    raises_within(client, "http://no-such-host.invalid/", ConnectionError, limit=TIMEOUT + 10)


def test_connection_refused(client, closed_port_url):
    raises_within(client, closed_port_url, ConnectionError)


def test_connect_timeout(client):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):  # fill the accept queue: further SYNs are dropped, connect() hangs
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(s)
    time.sleep(0.2)
    try:
        raises_within(client, f"http://127.0.0.1:{port}/", TimeoutError)
    finally:
        for s in [listener, *fillers]:
            s.close()


def test_read_timeout(client, fault):
    raises_within(client, fault(fs.never_answer).url + "/", TimeoutError)


@pytest.mark.parametrize("handler", [fs.close_after_accept, fs.close_mid_status, fs.close_mid_headers,
                                     fs.close_mid_body], ids=lambda h: h.__name__)
def test_closed_before_a_complete_response(client, fault, handler):
    raises_within(client, fault(handler).url + "/", ConnectionError)


def test_garbage_status_line(client, fault):
    err = raises_within(client, fault(fs.garbage_status).url + "/", PROTOCOL_ERRORS)
    assert isinstance(err, OSError)


def test_oversized_headers(client, fault):
    raises_within(client, fault(fs.huge_headers).url + "/", PROTOCOL_ERRORS, limit=TIMEOUT + 5)


def test_chunked_body(client, fault):
    url = fault(fs.chunked).url + "/"
    r = client.request("GET", url)
    assert r.status == 200 and r.body == fs.CHUNKED_BODY
    assert client.get(url) == 200


def test_empty_body(client, fault):
    r = client.request("GET", fault(fs.empty_body).url + "/")
    assert r.status == 200 and r.body == b""


def test_64_mib_body(client, server):
    n = 64 * 1024 * 1024
    r = client.request("GET", f"{server.url}/bytes/{n}")
    assert r.status == 200 and len(r.body) == n
    assert r.body[:3] == b"abc" and r.body[26:29] == b"abc"


def test_keep_alive_closed_between_requests(client, fault):
    srv = fault(fs.close_idle)
    for _ in range(3):
        assert client.get(srv.url + "/") == 200
        time.sleep(0.2)  # the server closes the idle connection meanwhile
    assert srv.accepted == 3


def test_connection_close_responses(client, fault):
    srv = fault(fs.connection_close)
    for _ in range(3):
        assert client.get(srv.url + "/") == 200
    assert srv.accepted == 3


def test_500_is_returned(client, fault):
    url = fault(fs.status_500).url + "/"
    assert client.get(url) == 500
    r = client.request("GET", url)
    assert r.status == 500 and r.body == b"status 500"


def test_server_restarted_mid_run(client):
    with Server() as s1:
        port = int(s1.url.rsplit(":", 1)[1])
        assert client.get(s1.url + "/") == 200
    with pytest.raises(ConnectionError):  # down: a clear error, not a hang
        client.get(s1.url + "/")
    with Server(port=port) as s2:  # back on the same port: the client reconnects
        assert s2.url == s1.url
        assert client.get(s2.url + "/") == 200
        assert client.get(s2.url + "/") == 200


def test_process_still_works_after_the_catalogue(client, server):
    assert client.get(server.url + "/") == 200


# -- native drivers: counted failures with reasons, never a crash -------------------------------

NATIVE = select(["cpp-beast", "rust-reqwest", "rust-reqwest-sync"])


@pytest.mark.parametrize("spec", NATIVE, ids=[s.name for s in NATIVE])
@pytest.mark.parametrize("handler, expect", [
    (fs.never_answer, "imeout"), (fs.close_after_accept, ""), (fs.close_mid_body, ""),
    (fs.garbage_status, ""), (fs.huge_headers, ""), (fs.status_500, "status 500"),
], ids=lambda v: getattr(v, "__name__", v))
def test_native_driver_counts_faults(spec, fault, handler, expect):
    srv = fault(handler)
    row = run_driver(spec, srv.url + "/", Workload(2, 2, 0, TIMEOUT), row_timeout_s=60)
    assert row.ok, row.reason  # exit 0 and a valid document
    assert row.stats.errors == row.stats.requests == 4
    reasons = [f["reason"] for w in row.raw["workers"] for f in w["failures"]]
    assert all(expect in r for r in reasons), reasons


@pytest.mark.parametrize("spec", NATIVE, ids=[s.name for s in NATIVE])
@pytest.mark.parametrize("handler, body", [(fs.chunked, fs.CHUNKED_BODY), (fs.empty_body, b""),
                                           (fs.connection_close, fs.HELLO), (fs.close_idle, fs.HELLO)],
                         ids=lambda v: getattr(v, "__name__", "body"))
def test_native_driver_handles_valid_variants(spec, fault, handler, body):
    srv = fault(handler)
    row = run_driver(spec, srv.url + "/", Workload(1, 3, 0, TIMEOUT), row_timeout_s=60,
                     expected_body_bytes=len(body))
    assert row.ok and not row.failed, row.reason


@pytest.mark.parametrize("spec", NATIVE, ids=[s.name for s in NATIVE])
@pytest.mark.parametrize("url", ["not a url", "https://127.0.0.1:1/", "http://127.0.0.1:99999/"])
def test_native_driver_bad_url(spec, url):
    row = run_driver(spec, url, Workload(1, 2, 0, TIMEOUT), row_timeout_s=60)
    assert (row.ok and row.stats.errors == 2) or (not row.ok and row.returncode == 2), row.reason


# -- Ctrl-C while blocked in get() with the GIL released ----------------------------------------

CTRL_C = r"""
import signal, sys, threading, time, os
import {module} as m
c = m.Client(timeout=10)
url = sys.argv[1]
assert c.get(url + "/") == 200
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t0 = time.monotonic()
try:
    c.get(url + "/delay/5000")
    print("no interrupt")
except KeyboardInterrupt:
    print("interrupted after %.3f" % (time.monotonic() - t0 - 0.5))
print("status after", c.get(url + "/"))
"""


@pytest.mark.parametrize("module", ["beast_client", "reqwest_client"])
def test_ctrl_c_interrupts_get_promptly(module, server):
    import sys
    out = subprocess.run([sys.executable, "-c", CTRL_C.format(module=module), server.url],
                         capture_output=True, text=True, timeout=30)
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stderr
    assert lines[0].startswith("interrupted after"), out.stdout
    assert float(lines[0].split()[-1]) < 0.5  # well under a second, not when the 5 s request ends
    assert lines[1] == "status after 200"  # the client is still usable


# -- one Client shared by several threads ------------------------------------------------------

@pytest.mark.parametrize("module", ["beast_client", "reqwest_client"])
def test_shared_client_works_or_raises_runtime_error(module, server):
    mod = {"beast_client": beast_client, "reqwest_client": reqwest_client}[module]
    c = mod.Client(timeout=5)
    outcomes: list[Any] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(50):
            try:
                r = c.request("GET", server.url + "/bytes/1000")
                ok = r.status == 200 and len(r.body) == 1000
                with lock:
                    outcomes.append("ok" if ok else f"bad {r.status} {len(r.body)}")
            except RuntimeError as exc:
                with lock:
                    outcomes.append("busy" if "thread" in str(exc) else f"other {exc}")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(outcomes) == 200
    assert set(outcomes) <= {"ok", "busy"}, set(outcomes)
    assert "ok" in outcomes
    assert c.get(server.url + "/") == 200
    c.close()
