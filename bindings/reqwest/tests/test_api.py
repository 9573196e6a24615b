"""reqwest_client's own parts of the issue-12 API (the shared contract is python/tests/test_binding_api.py):
proxies (explicit and from the environment, against a local stand-in proxy that answers itself), br and zstd,
streamed uploads, AsyncClient's request/stream, and the benchmark path staying bare. Every request is bounded."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
import reqwest_client
from clientbench.run.server import Server
from reqwest_client import AsyncClient, Client
from support.rawserver import Conn, RawServer, answer

T = 20.0


@pytest.fixture()
def proxy() -> Iterator[RawServer]:
    """A stand-in HTTP proxy on 127.0.0.1: it records each request head and answers `proxied` itself (so a
    proxied request never leaves the machine)."""
    with RawServer(answer(b"proxied")) as p:
        yield p


def test_explicit_proxy(proxy: RawServer) -> None:
    with Client(timeout=T, proxy=proxy.url, trust_env=False) as c:
        r = c.request("GET", "http://upstream.invalid:8081/path?q=1")
        assert (r.status, r.body) == (200, b"proxied")
        assert c.get("http://upstream.invalid:8081/") == 200  # the benchmark path goes through it too
    # an absolute-form request target: what a client sends to a proxy
    assert proxy.heads[0].split(b"\r\n")[0] == b"GET http://upstream.invalid:8081/path?q=1 HTTP/1.1"
    assert len(proxy.heads) == 2


def test_proxy_from_the_environment(proxy: RawServer, server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    with Client(timeout=T) as c:  # trust_env=True by default
        assert c.request("GET", "http://upstream.invalid/").body == b"proxied"
    with Client(timeout=T, trust_env=False) as c:  # the environment ignored: straight to the server
        assert c.request("GET", server.url + "/").body == b"Hello, World!"
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with Client(timeout=T) as c:
        assert c.request("GET", server.url + "/").body == b"Hello, World!"
    assert len(proxy.heads) == 1


def test_bad_proxy_url_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        Client(proxy="not a url")


def test_unreachable_proxy_is_a_connection_error(closed_port_url: str) -> None:
    with Client(timeout=T, proxy=closed_port_url.rstrip("/"), trust_env=False) as c:
        with pytest.raises(ConnectionError):
            c.request("GET", "http://upstream.invalid/")


@pytest.mark.parametrize(("path", "coding"), [("/brotli", "br"), ("/zstd", "zstd")])
def test_brotli_and_zstd_are_decoded(server: Server, path: str, coding: str) -> None:
    with Client(timeout=T) as c:
        r = c.request("GET", server.url + path)
        assert r.json()["coding"] == path[1:]
        sent = c.request("GET", server.url + "/headers").json()["accept-encoding"][0]
        assert coding in [s.strip() for s in sent.split(",")]
    with Client(timeout=T, decompress=False) as c:
        r = c.request("GET", server.url + path)
        assert r.headers["content-encoding"] == coding
        with pytest.raises(ValueError):  # still compressed: json.loads fails (UnicodeDecodeError / JSONDecodeError)
            r.json()
        if coding == "zstd":
            assert r.body[:4] == b"\x28\xb5\x2f\xfd"  # the zstd frame magic


def test_undecodable_body_is_a_protocol_error(raw_server: Any) -> None:
    def bad_gzip(conn: Conn) -> None:
        while conn.read_request(timeout=5) is not None:
            conn.respond(b"not gzip at all", headers="Content-Encoding: gzip\r\n")

    srv = raw_server(bad_gzip)
    with Client(timeout=T) as c:
        with pytest.raises(reqwest_client.ProtocolError):
            c.request("GET", srv.url + "/")
        with c.stream("GET", srv.url + "/") as s, pytest.raises(reqwest_client.ProtocolError):
            s.read()
    with Client(timeout=T, decompress=False) as c:
        assert c.request("GET", srv.url + "/").body == b"not gzip at all"


def test_benchmark_path_stays_bare(raw_server: Any) -> None:
    """get()/fetch_len() send what they sent before issue 12: no User-Agent, Accept-Encoding or default
    headers; request() sends them."""
    srv = raw_server(answer())
    with Client(timeout=T, headers={"X-Default": "1"}) as c:
        assert c.get(srv.url + "/") == 200
        assert c.fetch_len(srv.url + "/") == (200, 13)
        c.request("GET", srv.url + "/")
    bare = [h.lower() for h in srv.heads[:2]]
    for head in bare:
        assert b"user-agent" not in head and b"accept-encoding" not in head and b"x-default" not in head
    full = srv.heads[2].lower()
    assert b"user-agent: reqwest-client/" in full and b"accept-encoding: " in full and b"x-default: 1" in full


def test_streamed_uploads(server: Server) -> None:
    with Client(timeout=T) as c:
        chunks = (bytes([65 + i]) * 1000 for i in range(5))
        echo = c.request("POST", server.url + "/anything", body=chunks).json()
        assert echo["headers"]["transfer-encoding"] == ["chunked"]
        assert echo["body"] == "".join(chr(65 + i) * 1000 for i in range(5))
        echo = c.request("PUT", server.url + "/anything", body=io.BytesIO(b"x" * 200_000)).json()
        assert echo["body_len"] == 200_000
        # a 307 cannot repeat a streamed body: the 307 itself is returned
        r = c.request("POST", server.url + "/redirect-to?url=/anything&status=307", body=iter([b"a"]))
        assert r.status == 307
        # a 303 turns it into a GET without a body
        r = c.request("POST", server.url + "/redirect-to?url=/anything&status=303", body=iter([b"a"]))
        assert r.json()["method"] == "GET"


def test_upload_source_errors_propagate(server: Server) -> None:
    def failing() -> Iterator[bytes]:
        yield b"first"
        raise LookupError("the source failed")

    with Client(timeout=T) as c:
        with pytest.raises(LookupError, match="the source failed"):
            c.request("POST", server.url + "/anything", body=failing())
        with pytest.raises(TypeError):
            c.request("POST", server.url + "/anything", body=iter(["str chunk"]))
        with pytest.raises(TypeError):
            c.request("POST", server.url + "/anything", body=42)
        assert c.request("GET", server.url + "/").status == 200


def test_headers_class() -> None:
    h = reqwest_client.Headers([("A", "1"), ("b", "2"), ("a", "3")])
    assert h["a"] == "1, 3" and h.get_all("A") == ["1", "3"]
    assert list(h) == ["a", "b"] and len(h) == 2
    assert h.multi_items() == [("a", "1"), ("b", "2"), ("a", "3")]
    assert h == reqwest_client.Headers({"B": "2", "A": "1, 3"})
    with pytest.raises(TypeError):
        hash(h)
    with pytest.raises(TypeError):
        reqwest_client.Headers(42)  # type: ignore[arg-type]


def test_client_option_errors() -> None:
    for kw in ({"connect_timeout": 0}, {"read_timeout": -1}, {"timeout": float("nan")}, {"max_redirects": -1}):
        with pytest.raises(ValueError):
            Client(**kw)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            AsyncClient(**kw)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Client(headers={"bad name": "x"})
    c = Client(5.0)  # positional timeout, as before
    assert (c.timeout, c.connect_timeout, c.read_timeout) == (5.0, 10.0, 30.0)
    c.close()


def test_async_request_and_stream(server: Server) -> None:
    async def main() -> None:
        async with AsyncClient(timeout=T) as c:
            r = await c.request("POST", server.url + "/redirect-to?url=/anything&status=307", json={"a": 1})
            assert r.url == server.url + "/anything"
            echo = r.json()
            assert (echo["method"], json.loads(echo["body"])) == ("POST", {"a": 1})
            r = await c.request("GET", server.url + "/anything", params={"q": "a b"})
            assert r.json()["query"] == "q=a%20b"
            r = await c.request("PUT", server.url + "/anything", body=iter([b"ab", b"cd"]))  # read first
            assert r.json()["body"] == "abcd"
            assert (await c.request("GET", server.url + "/gzip")).json()["coding"] == "gzip"
            with pytest.raises(reqwest_client.TooManyRedirects):
                await c.request("GET", server.url + "/redirect/11")
            n = 1024 * 1024
            async with c.stream("GET", server.url + f"/bytes/{n}") as s:
                assert s.status == 200 and s.headers["content-length"] == str(n)
                sizes = [len(chunk) async for chunk in s.aiter_bytes()]
            assert len(sizes) > 1 and sum(sizes) == n
            assert s.closed
            async with c.stream("GET", server.url + "/stream/3") as s:
                assert (await s.aread()).count(b"\n") == 3
            async with c.stream("GET", server.url + "/bytes/1048576") as s:
                async for _chunk in s.aiter_bytes():
                    break  # leave early: closed with the block
            with pytest.raises(TimeoutError):
                await c.request("GET", server.url + "/delay/3000", timeout=0.3)
            assert await c.get(server.url + "/") == 200

    asyncio.run(asyncio.wait_for(main(), 60))
