"""beast_client's phases (issue #44): `Client.fetch_phases()`, `AsyncClient.fetch_phases()` (the loop path over
http://, the I/O thread's over https://) and `Response.phases`, against Python's own http.server (a server this
project did not write) that waits X before the response's head and Y between the head and the body: `wait` is X
and `receive` Y within 10 % + 1 ms; connect and tls are non-zero on a new TLS connection, 0 on a re-used one (tls
0 over http://). The bounds are the contract's (docs/raw-format.md); the server's sleeps make the phases longer on a
slow machine, never shorter."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import beast_client
import pytest
from support.timing import about, retimed, timed

pytestmark = retimed  # a timed check that misses runs the test again (support/timing.py)

T = 10.0
X = 0.080  # s before the head
Y = 0.050  # s between the head and the body
BODY = b"b" * 1000
KEYS = ["connect", "tls", "send", "wait", "receive"]


#: the server, in a process of its own (a client holding the GIL, release_gil=False, must not stop it): http.server
#: on 127.0.0.1 (HTTPS with the certificate and key given), one thread per connection; it prints its port
SERVER = r"""
import http.server, ssl, sys, time
X, Y, BODY = float(sys.argv[1]), float(sys.argv[2]), b"b" * 1000

class Delayed(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    disable_nagle_algorithm = True  # each write goes out at once

    def do_GET(self):
        time.sleep(X)
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()  # the head, written now
        time.sleep(Y)
        self.wfile.write(BODY)

    def log_message(self, format, *args):
        pass

httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Delayed)
httpd.daemon_threads = True
if len(sys.argv) > 3:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
print(httpd.server_address[1], flush=True)
httpd.serve_forever()
"""


class Server:
    """The delaying http.server (HTTPS with `pki`'s certificate and key), in a child process."""

    def __init__(self, pki: tuple[Path, Path] | None = None) -> None:
        args = [sys.executable, "-c", SERVER, str(X), str(Y), *(str(p) for p in pki or ())]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())
        self.url = f"{'https' if pki else 'http'}://127.0.0.1:{self.port}/"

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture()
def plain() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


@pytest.fixture()
def tls(dual_pki: tuple[Path, Path, Path]) -> Iterator[tuple[Server, Path]]:
    ca, cert, key = dual_pki
    s = Server((cert, key))
    yield s, ca
    s.close()


def check_delays(phases: dict[str, float], scale: float) -> None:
    """`phases` in seconds * scale (1e9: nanoseconds) shows the server's delays."""
    about(phases["wait"] / scale, X, "wait", phases)
    about(phases["receive"] / scale, Y, "receive", phases)
    assert phases["send"] > 0, phases
    timed(phases["send"] / scale < 0.005, "send", phases)


@pytest.mark.parametrize("release_gil", [True, False])
def test_fetch_phases_over_tls_new_then_reused(tls: tuple[Server, Path], release_gil: bool) -> None:
    server, ca = tls
    with beast_client.Client(timeout=T, verify=str(ca)) as c:
        status, length, first = c.fetch_phases(server.url, release_gil=release_gil)
        assert (status, length) == (200, len(BODY))
        assert list(first) == KEYS  # no dns: an IP address
        assert all(isinstance(v, int) for v in first.values())
        assert first["connect"] > 0 and first["tls"] > 0
        check_delays({k: float(v) for k, v in first.items()}, 1e9)
        _, _, second = c.fetch_phases(url=server.url)
        assert second["connect"] == 0 and second["tls"] == 0
        check_delays({k: float(v) for k, v in second.items()}, 1e9)
        assert c._connections_opened == 1


def test_fetch_phases_over_http(plain: Server) -> None:
    with beast_client.Client(timeout=T) as c:
        status, length, phases = c.fetch_phases(plain.url)
        assert (status, length) == (200, len(BODY))
        assert phases["connect"] > 0 and phases["tls"] == 0
        check_delays({k: float(v) for k, v in phases.items()}, 1e9)
        assert c.fetch_len(plain.url) == (200, len(BODY))  # unchanged: no phases


def test_a_host_name_adds_dns(plain: Server) -> None:
    with beast_client.Client(timeout=T) as c:
        _, _, phases = c.fetch_phases(f"http://localhost:{plain.port}/")
        assert list(phases) == ["dns", *KEYS]
        assert phases["dns"] > 0


def test_fetch_phases_arguments() -> None:
    with beast_client.Client(timeout=T) as c:
        with pytest.raises(TypeError, match="missing required argument 'url'"):
            c.fetch_phases()  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="unexpected keyword argument 'method'"):
            c.fetch_phases("http://127.0.0.1:9/", method="GET")  # type: ignore[call-arg]
        with pytest.raises(ValueError):
            c.fetch_phases("ftp://example.org/")


def test_response_phases_in_seconds(tls: tuple[Server, Path]) -> None:
    server, ca = tls
    with beast_client.Client(timeout=T, verify=str(ca)) as c:
        r = c.request("GET", server.url)
        assert r.body == BODY
        assert list(r.phases) == KEYS
        assert all(isinstance(v, float) for v in r.phases.values())
        assert r.phases["connect"] > 0 and r.phases["tls"] > 0
        check_delays(r.phases, 1.0)
        assert c.request("GET", server.url).phases["tls"] == 0.0
        with c.stream("GET", server.url) as s:  # a stream: none recorded (and no such attribute)
            assert s.read() == BODY
            assert not hasattr(s, "phases")


def test_async_fetch_phases_on_the_loop_path(plain: Server) -> None:
    async def go() -> tuple[dict[str, int], dict[str, int], int]:
        async with beast_client.AsyncClient(timeout=T) as c:
            status, length, first = await c.fetch_phases(plain.url)
            assert (status, length) == (200, len(BODY))
            _, _, second = await c.fetch_phases(plain.url)
            return first, second, c._raw._loop_requests

    first, second, loop_requests = asyncio.run(go())
    assert loop_requests == 2  # both took the loop path
    assert list(first) == KEYS
    assert first["connect"] > 0 and first["tls"] == 0  # connected by the I/O thread
    assert second["connect"] == 0
    for phases in (first, second):
        check_delays({k: float(v) for k, v in phases.items()}, 1e9)


def test_async_fetch_phases_on_the_io_thread(tls: tuple[Server, Path]) -> None:
    server, ca = tls

    async def go() -> tuple[dict[str, int], dict[str, int], float]:
        async with beast_client.AsyncClient(timeout=T, verify=str(ca)) as c:
            _, _, first = await c.fetch_phases(server.url)
            _, _, second = await c.fetch_phases(server.url)
            r = await c.request("GET", server.url)
            assert r.body == BODY
            return first, second, r.phases["wait"]

    first, second, response_wait = asyncio.run(go())
    assert first["connect"] > 0 and first["tls"] > 0
    assert second["connect"] == 0 and second["tls"] == 0
    for phases in (first, second):
        check_delays({k: float(v) for k, v in phases.items()}, 1e9)
    about(response_wait, X, "wait")
