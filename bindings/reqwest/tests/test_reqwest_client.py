"""What only reqwest_client.Client has (docs/binding-api.md, documented differences): reqwest_version, one
Client shared by threads at once, proxies (explicit and from the environment, against a local stand-in proxy
that answers itself), br and zstd, streamed (chunked) uploads, and option errors found when the client is
made. The API both bindings share is tested in bindings/tests/; AsyncClient in test_async_client.py."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Iterator

import pytest
import reqwest_client
from clientbench.execution.server import Server
from reqwest_client import Client
from support.rawserver import RawServer, answer

T = 20.0


def test_reqwest_version() -> None:
    assert reqwest_client.reqwest_version.startswith("0.13.")
    assert {"reqwest_version", "AsyncClient"} <= set(reqwest_client.__all__)


def test_invalid_default_header_is_refused_when_the_client_is_made() -> None:
    with pytest.raises(ValueError):
        Client(headers={"bad name": "x"})


def test_one_client_from_two_threads(server: Server) -> None:
    with Client(timeout=5) as c:
        results: list[int] = []
        threads = [threading.Thread(target=lambda: results.append(c.get(server.url + "/delay/200"))) for _ in range(2)]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join(5)
        took = time.perf_counter() - t
        assert results == [200, 200]
        assert took < 0.39, f"two concurrent 200 ms requests took {took:.3f}s"


# -- proxies -------------------------------------------------------------------------------------


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


# -- br and zstd ---------------------------------------------------------------------------------


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


# -- streamed uploads ----------------------------------------------------------------------------


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
