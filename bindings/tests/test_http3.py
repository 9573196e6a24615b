"""reqwest_client's `http3=True` (docs/binding-api.md, "HTTP/3") against the project's server started with TLS,
which serves HTTP/3 over QUIC on the HTTPS port's number (its /stats count QUIC connections and HTTP/3 requests
apart from TCP's): every request over QUIC in both clients, the version told, what such a client refuses, and
QUIC's failures as the binding's typed exceptions. beast_client has no HTTP/3: these are reqwest_client's.
Every test makes its own server (module-scoped where the counts allow it), so the counts are its own."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import reqwest_client
from clientbench.execution.server import Server

T = 20.0


@pytest.fixture(scope="module")
def h3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tls=True, tls_dir=tmp_path_factory.mktemp("h3-server")) as s:
        assert s.http3, "the server serves HTTP/3 with --tls"
        yield s


def stats(server: Server) -> dict[str, int]:
    s = server.stats()
    assert s is not None
    return s


def closed_udp_url() -> str:
    """An https:// URL of a loopback port on which nothing listens over UDP (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"https://127.0.0.1:{port}/"


def test_sync_client_speaks_http3_only(h3: Server) -> None:
    before = stats(h3)
    body = bytes(range(256)) * 300  # several QUIC packets
    with reqwest_client.Client(timeout=T, verify=h3.ca_file, http3=True) as c:
        assert c.get(h3.url + "/") == 200
        assert c.fetch_len(h3.url + "/bytes/200000") == (200, 200_000)
        assert c.fetch(h3.url + "/echo", method="POST", body=body) == (200, body)
        r = c.request("GET", h3.url + "/redirect/2")  # redirects followed over QUIC
        assert (r.status, r.url, r.http_version) == (200, h3.url + "/", "HTTP/3")
        # an iterable body is streamed (no Content-Length): the server's digest says it arrived whole
        up = c.request("PUT", h3.url + "/upload", body=iter([body[:1000], body[1000:]]))
        assert up.text().split() == [str(len(body)), hashlib.sha256(body).hexdigest()]
        with c.stream("GET", h3.url + "/bytes/100000") as s:
            assert s.http_version == "HTTP/3"
            assert sum(len(chunk) for chunk in s.iter_bytes()) == 100_000
        assert c.tls_info == {"version": "TLSv1.3", "cipher": None}
    after = stats(h3)
    # two QUIC connections: the lean path's, and (decompress=True) request/stream's own pool's (docs/binding-api.md);
    # no TCP connection but the /stats read's own
    assert after["quic_connections"] - before["quic_connections"] == 2
    assert after["connections"] - before["connections"] == 1
    assert after["h3_requests"] - before["h3_requests"] == 4 + 3 + 1
    with reqwest_client.Client(timeout=T, verify=h3.ca_file, http3=True, decompress=False) as c:
        assert c.get(h3.url + "/") == 200
        assert c.request("GET", h3.url + "/").http_version == "HTTP/3"
    assert stats(h3)["quic_connections"] - after["quic_connections"] == 1  # one pool without decompression


def test_async_client_speaks_http3_only(h3: Server) -> None:
    async def main() -> tuple[int, tuple[int, bytes], str, str, int]:
        async with reqwest_client.AsyncClient(timeout=T, verify=h3.ca_file, http3=True) as c:
            status = await c.get(h3.url + "/")
            echoed = await c.fetch(h3.url + "/echo", method="PUT", body=b"over QUIC")
            r = await c.request("GET", h3.url + "/bytes/5000")
            async with c.stream("GET", h3.url + "/bytes/70000") as s:
                n = sum([len(chunk) async for chunk in s.aiter_bytes()])
                version = s.http_version
            return status, echoed, r.http_version, version, n

    before = stats(h3)
    assert asyncio.run(main()) == (200, (200, b"over QUIC"), "HTTP/3", "HTTP/3", 70_000)
    after = stats(h3)
    # the lean path's connection and request/stream's (decompress=True)
    assert after["quic_connections"] - before["quic_connections"] == 2
    assert after["h3_requests"] - before["h3_requests"] == 4


def test_threads_share_one_quic_connection(h3: Server) -> None:
    """The GIL is released while a request waits: 8 threads share the client, and its one QUIC connection."""
    before = stats(h3)
    with reqwest_client.Client(timeout=T, verify=h3.ca_file, http3=True) as c:
        assert c.get(h3.url + "/") == 200  # the connection, made before the threads ask for it

        def work(_: int) -> list[int]:
            return [c.get(h3.url + "/delay/5") for _ in range(10)]

        with ThreadPoolExecutor(8) as pool:
            assert [s for r in pool.map(work, range(8)) for s in r] == [200] * 80
    after = stats(h3)
    assert after["quic_connections"] - before["quic_connections"] == 1
    assert after["h3_requests"] - before["h3_requests"] == 81


def test_requests_after_a_goaway_succeed(h3: Server) -> None:
    """/close ends its QUIC connection with a GOAWAY: the next requests, a POST among them, go on a new one."""
    with reqwest_client.Client(timeout=T, verify=h3.ca_file, http3=True) as c:
        for _ in range(3):
            assert c.get(h3.url + "/close") == 200
            assert c.fetch(h3.url + "/echo", method="POST", body=b"x") == (200, b"x")


def test_arguments_and_urls_an_http3_client_refuses(h3: Server) -> None:
    for cls in (reqwest_client.Client, reqwest_client.AsyncClient):
        with pytest.raises(ValueError, match="http3=True speaks HTTP/3 only"):
            cls(http3=True, http2="alpn")
        with pytest.raises(TypeError):
            cls(http3="yes")  # type: ignore[arg-type]
    before = stats(h3)["h3_requests"]
    with reqwest_client.Client(timeout=T, verify=h3.ca_file, http3=True) as c:
        plain = h3.url.replace("https://", "http://") + "/"
        with pytest.raises(ValueError, match="https:// URLs only"):
            c.get(plain)
        with pytest.raises(ValueError, match="https:// URLs only"):
            c.request("GET", plain)
        # a redirect to http:// cannot be followed over QUIC: ProtocolError, as any redirect that cannot be
        with pytest.raises(reqwest_client.ProtocolError, match="cannot be followed over HTTP/3"):
            c.request("GET", h3.url + "/redirect-to", params={"url": plain, "status": "302"})
    assert stats(h3)["h3_requests"] - before == 1  # only the redirect was sent


def test_nothing_on_the_udp_port_is_a_timeout() -> None:
    """No QUIC handshake answers, and no ICMP error reaches a UDP client: TimeoutError, within the timeout."""
    url = closed_udp_url()
    with reqwest_client.Client(timeout=0.5, verify=False, http3=True) as c:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            c.get(url)
        assert time.monotonic() - started < 5

    async def main() -> None:
        async with reqwest_client.AsyncClient(timeout=0.5, verify=False, http3=True) as c:
            await c.get(url)

    with pytest.raises(TimeoutError):
        asyncio.run(main())


def test_an_untrusted_certificate_is_a_tls_error(h3: Server) -> None:
    """The QUIC handshake checks the certificate as TLS over TCP does: the system's roots do not hold the
    server's throw-away CA (TLSError, a ConnectionError); verify=False accepts it."""
    with reqwest_client.Client(timeout=T, http3=True) as c:
        with pytest.raises(reqwest_client.TLSError):
            c.get(h3.url + "/")
    with reqwest_client.Client(timeout=T, verify=False, http3=True) as c:
        assert c.get(h3.url + "/") == 200


def test_a_slow_response_is_a_timeout(h3: Server) -> None:
    with reqwest_client.Client(timeout=0.5, verify=h3.ca_file, http3=True) as c:
        assert c.get(h3.url + "/") == 200
        with pytest.raises(TimeoutError):
            c.get(h3.url + "/delay/3000")
    with reqwest_client.Client(timeout=T, read_timeout=0.5, verify=h3.ca_file, http3=True) as c:
        with pytest.raises(TimeoutError):
            c.request("GET", h3.url + "/delay/3000")


def test_a_server_gone_mid_body_is_a_timeout(tmp_path: Path) -> None:
    """The server is killed while a body drips: QUIC hears nothing more (no FIN, no reset over UDP), so the
    next read waits out read_timeout: TimeoutError, the bytes read before it kept."""
    with Server(tls=True, tls_dir=tmp_path) as s:
        with reqwest_client.Client(timeout=T, read_timeout=1.0, verify=s.ca_file, http3=True) as c:
            with c.stream("GET", s.url + "/drip", params={"bytes": "100", "duration_ms": "10000"}) as r:
                assert r.status == 200 and r.http_version == "HTTP/3"
                chunks = r.iter_bytes()
                assert len(next(chunks)) >= 1
                assert s.proc is not None
                s.proc.kill()
                s.proc.wait(timeout=10)
                started = time.monotonic()
                with pytest.raises(TimeoutError):
                    for _ in chunks:
                        pass
                assert time.monotonic() - started < 5
