"""The benchmark path of uploads, fetch(url, *, method, body, release_gil) (docs/binding-api.md): POST and
PUT to the axum server's /upload (which answers the length and SHA-256 of what it received), GET, the
bare request it sends, its argument errors, the GIL released and held; and both AsyncClients' fetch.
Each test runs for beast_client and reqwest_client."""

from __future__ import annotations

import asyncio
import hashlib
import statistics
import sys
import threading
import time
from collections.abc import Callable
from types import ModuleType

import pytest
from clientbench.execution.server import Server
from support.binding_clients import SYNC
from support.httpapp import App
from support.rawserver import HELLO, RawServer, answer

pytestmark = pytest.mark.kinds(*SYNC)


def pattern(n: int) -> bytes:
    """The raw format's upload body: byte i is 'a' + i mod 26."""
    return bytes(97 + i % 26 for i in range(n))


def upload_line(body: bytes) -> bytes:
    return f"{len(body)} {hashlib.sha256(body).hexdigest()}".encode()


def test_upload_line_of_the_spec() -> None:
    assert upload_line(b"abc") == b"3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert pattern(28) == b"abcdefghijklmnopqrstuvwxyzab"


@pytest.mark.parametrize("release_gil", [True, False])
@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_fetch_uploads_the_whole_body(mod: ModuleType, server: Server, method: str, release_gil: bool) -> None:
    url = server.url + "/upload"
    with mod.Client(timeout=10.0) as c:
        for n in (0, 1, 3, 65_536, 1_000_003):
            body = pattern(n)
            status, got = c.fetch(url, method=method, body=body, release_gil=release_gil)
            assert (status, got) == (200, upload_line(body)), n
            assert isinstance(got, bytes)
            assert c.last_body_bytes == len(got)
        if mod.__name__ == "beast_client":
            assert c._connections_opened == 1  # one kept-alive connection for every upload


def test_fetch_get_and_no_body(mod: ModuleType, server: Server) -> None:
    with mod.Client(timeout=5.0) as c:
        assert c.fetch(server.url + "/") == (200, HELLO)
        status, body = c.fetch(server.url + "/bytes/12345", release_gil=False)
        assert status == 200 and len(body) == 12345 == c.last_body_bytes
        assert c.fetch(server.url + "/upload") == (200, upload_line(b""))
        assert c.fetch(server.url + "/upload", method="POST") == (200, upload_line(b""))
        status, _ = c.fetch(server.url + "/status/500")
        assert status == 500  # returned, not raised
        status, _ = c.fetch(server.url + "/status/500", method="POST", body=b"x")
        assert status == 405  # /status takes GET only


def test_fetch_takes_bytes_like_bodies(mod: ModuleType, server: Server) -> None:
    with mod.Client(timeout=5.0) as c:
        for body in (b"abc", bytearray(b"abc"), memoryview(b"xabcx")[1:4]):
            assert c.fetch(server.url + "/echo", method="POST", body=body) == (200, b"abc")
            assert c.fetch(server.url + "/upload", method="PUT", body=body) == (200, upload_line(b"abc"))


def test_fetch_argument_errors(mod: ModuleType, server: Server) -> None:
    with mod.Client(timeout=5.0) as c:
        for bad in ("text", [b"a", b"b"], 3):
            with pytest.raises(TypeError, match="body"):
                c.fetch(server.url + "/upload", method="POST", body=bad)
        with pytest.raises(ValueError):
            c.fetch(server.url + "/upload", method="BAD METHOD", body=b"x")
        with pytest.raises(ValueError):
            c.fetch("ftp://127.0.0.1/")
        with pytest.raises(TypeError):
            c.fetch(server.url + "/", "POST")  # method is keyword-only
        assert c.fetch(server.url + "/upload", method="POST", body=b"abc") == (200, upload_line(b"abc"))
    with pytest.raises(RuntimeError, match="closed"):
        c.fetch(server.url + "/upload", method="POST", body=b"abc")


def test_fetch_stays_bare(mod: ModuleType, raw_server: Callable[..., RawServer], http_app: App) -> None:
    """fetch() sends the method and body exactly as given: Content-Length, no Accept-Encoding, no default
    headers, no redirect followed, nothing decoded."""
    srv = raw_server(answer())
    with mod.Client(timeout=5.0, headers={"X-Default": "1"}) as c:
        assert c.fetch(srv.url + "/up", method="PUT", body=b"12345") == (200, HELLO)
        assert c.fetch(srv.url + "/up", method="POST", body=b"") == (200, HELLO)
    for head, length in zip(srv.heads, (b"5", b"0"), strict=True):
        lines = head.lower().split(b"\r\n")
        assert lines[0] in (b"put /up http/1.1", b"post /up http/1.1")
        # an empty body may go without any framing header (reqwest) or with Content-Length: 0 (Beast)
        assert b"content-length: " + length in lines or (
            length == b"0" and not any(b"content-length" in x for x in lines)
        )
        assert not any(line.startswith((b"accept-encoding", b"x-default", b"transfer-encoding")) for line in lines)
    with mod.Client(timeout=5.0) as c:
        assert c.fetch(http_app.url + "/redirect/1", method="POST", body=b"x")[0] == 302  # not followed
        status, body = c.fetch(http_app.url + "/gzip")
        assert status == 200 and body[:2] == b"\x1f\x8b"  # not decoded


def _counter_progress(call: Callable[[], object], expected: object) -> int:
    """How far a pure-Python counter thread gets while `call()` runs in this thread."""
    counter = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            counter[0] += 1

    t = threading.Thread(target=spin, daemon=True)
    t.start()
    try:
        time.sleep(0.02)
        before = counter[0]
        assert call() == expected
        return counter[0] - before
    finally:
        stop.set()
        t.join(5)


def test_fetch_releases_the_gil_unless_told(mod: ModuleType, server: Server) -> None:
    """While a large upload goes out (to the server in its own process) another Python thread runs with the
    GIL released; with it held, that thread nearly stops (a 1 ms switch interval keeps the switches around
    the call few)."""
    url = server.url + "/upload"
    body = b"abcdefghijklmnopqrstuvwxyz" * (3 << 20)  # 78 MiB: tens of milliseconds on the wire
    expected = (200, upload_line(body))
    released: list[int] = []
    held: list[int] = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        with mod.Client(timeout=30) as c:
            c.fetch(server.url + "/")
            for _ in range(3):
                released.append(_counter_progress(lambda: c.fetch(url, method="PUT", body=body), expected))
                held.append(
                    _counter_progress(lambda: c.fetch(url, method="PUT", body=body, release_gil=False), expected)
                )
    finally:
        sys.setswitchinterval(old)
    r, h = statistics.median(released), statistics.median(held)
    assert r > 0
    # held, the counter still gets about a switch interval around each call (~1 ms of a ~40 ms upload)
    assert r >= 5 * max(h, 1), f"counter progress released={released} held={held}"


# -- AsyncClient.fetch -----------------------------------------------------------------------------


def test_async_fetch_uploads(mod: ModuleType, server: Server) -> None:
    async def main() -> None:
        async with mod.AsyncClient(timeout=10.0) as c:
            for method in ("POST", "PUT"):
                for n in (0, 3, 1_000_003):
                    body = pattern(n)
                    assert await c.fetch(server.url + "/upload", method=method, body=body) == (200, upload_line(body))
            assert await c.fetch(server.url + "/") == (200, HELLO)
            results = await asyncio.gather(
                *(c.fetch(server.url + "/upload", method="POST", body=pattern(i)) for i in range(20))
            )
            assert results == [(200, upload_line(pattern(i))) for i in range(20)]
            with pytest.raises(TypeError, match="body"):
                await c.fetch(server.url + "/upload", method="POST", body="text")  # type: ignore[arg-type]
            with pytest.raises(ValueError):
                await c.fetch(server.url + "/upload", method="BAD METHOD")

    asyncio.run(main())
