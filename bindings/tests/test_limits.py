"""The body limit of every binding client (docs/binding-api.md, "Limits"): `max_body_size` bounds the
decoded body that request() keeps: one byte more is BodyTooLarge (a ProtocolError), whatever the framing
(Content-Length, chunked, the end of the connection) and whether it came compressed (a decompression bomb is
stopped by its decoded size); nothing of it is kept and the client stays usable. The benchmark path (get,
fetch_len, fetch) and stream() are not limited by it. Every request is bounded in time."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.binding_clients import BINDINGS, FACTORIES, MODULES, make
from support.httpapp import BIG, App
from support.rawserver import Conn, RawServer

T = 10.0


@pytest.fixture(params=list(FACTORIES))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture()
def new(kind: str) -> Iterator[Callable[..., Any]]:
    made: list[Any] = []

    def factory(**options: Any) -> Any:
        made.append(make(kind, options.pop("timeout", T), **options))
        return made[-1]

    yield factory
    for c in made:
        c.close()


def stream_read(c: Any, url: str) -> bytes:
    if hasattr(c, "stream_read"):
        return c.stream_read("GET", url)[1]  # type: ignore[no-any-return]
    with c.stream("GET", url) as s:
        return b"".join(s.iter_bytes())


@pytest.mark.parametrize("mod", sorted(BINDINGS))
def test_the_error_class(mod: str) -> None:
    m = BINDINGS[mod]
    assert issubclass(m.BodyTooLarge, m.ProtocolError) and issubclass(m.BodyTooLarge, OSError)
    assert m.BodyTooLarge.__module__ == m.__name__ and "BodyTooLarge" in m.__all__


def test_a_body_over_the_limit_is_body_too_large(new: Callable[..., Any], kind: str, server: Server) -> None:
    mod = MODULES[kind]
    c = new(max_body_size=1000)
    assert len(c.request("GET", server.url + "/bytes/1000").body) == 1000  # exactly the limit: kept
    with pytest.raises(mod.BodyTooLarge, match="max_body_size"):
        c.request("GET", server.url + "/bytes/1001")
    # chunked: no length announced, stopped as it arrives
    assert c.request("GET", server.url + "/stream/10").status == 200
    with pytest.raises(mod.BodyTooLarge):
        c.request("GET", server.url + "/stream/200")
    assert c.request("GET", server.url + "/").body == b"Hello, World!"  # still usable
    # the limit is the client's: another client, no limit
    assert len(new().request("GET", server.url + "/bytes/100000").body) == 100000


def test_zero_allows_only_an_empty_body(new: Callable[..., Any], kind: str, server: Server) -> None:
    c = new(max_body_size=0)
    assert c.request("GET", server.url + "/bytes/0").body == b""
    with pytest.raises(MODULES[kind].BodyTooLarge):
        c.request("GET", server.url + "/bytes/1")


def test_the_decoded_size_counts(new: Callable[..., Any], kind: str, http_app: App) -> None:
    """A small compressed body that decodes to 1 MiB (a decompression bomb in miniature)."""
    mod = MODULES[kind]
    for path in ("/gzip", "/deflate"):
        c = new(max_body_size=len(BIG) - 1)
        with pytest.raises(mod.BodyTooLarge):
            c.request("GET", http_app.url + path)
        assert new(max_body_size=len(BIG)).request("GET", http_app.url + path).body == BIG
        # decompress=False: the body as received, well under the limit
        assert len(new(max_body_size=len(BIG) // 2, decompress=False).request("GET", http_app.url + path).body) > 0


def test_a_body_delimited_by_the_end_of_the_connection(
    new: Callable[..., Any], kind: str, raw_server: Callable[..., RawServer]
) -> None:
    def until_close(conn: Conn) -> None:
        if conn.read_request(timeout=5) is not None:
            conn.send(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"x" * 5000)

    srv = raw_server(until_close)
    with pytest.raises(MODULES[kind].BodyTooLarge):
        new(max_body_size=4999).request("GET", srv.url + "/")
    assert new(max_body_size=5000).request("GET", srv.url + "/").body == b"x" * 5000


def test_a_declared_length_over_the_limit_fails_before_the_body(
    new: Callable[..., Any], kind: str, raw_server: Callable[..., RawServer]
) -> None:
    """A Content-Length of 1 GiB and no body: refused from the head, not after waiting for the bytes."""

    def huge(conn: Conn) -> None:
        if conn.read_request(timeout=5) is not None:
            conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\nxx")
            conn.hold(10)

    srv = raw_server(huge)
    with pytest.raises(MODULES[kind].BodyTooLarge):
        new(max_body_size=1 << 20, read_timeout=5).request("GET", srv.url + "/")


def test_a_gzip_bomb(new: Callable[..., Any], kind: str, raw_server: Callable[..., RawServer]) -> None:
    bomb = gzip.compress(bytes(64 << 20), compresslevel=9)  # 64 MiB of zeros in ~64 KiB
    assert len(bomb) < 1 << 17

    def serve(conn: Conn) -> None:
        while conn.read_request(timeout=5) is not None:
            conn.respond(bomb, headers="Content-Encoding: gzip\r\n")

    srv = raw_server(serve)
    with pytest.raises(MODULES[kind].BodyTooLarge):
        new(max_body_size=1 << 20).request("GET", srv.url + "/")


def test_the_benchmark_path_and_streams_are_not_limited(new: Callable[..., Any], server: Server) -> None:
    c = new(max_body_size=10)
    url = server.url + "/bytes/5000"
    assert c.get(url) == 200
    assert c.fetch_len(url) == (200, 5000)
    status, body = c.fetch(url)
    assert (status, len(body)) == (200, 5000)
    assert len(stream_read(c, url)) == 5000


@pytest.mark.parametrize("mod", sorted(BINDINGS))
def test_bad_values(mod: str) -> None:
    m = BINDINGS[mod]
    with pytest.raises(ValueError):
        m.Client(max_body_size=-1)
    for bad in ("1", 1.5, True):  # a bool is no size
        with pytest.raises(TypeError):
            m.Client(max_body_size=bad)
    m.Client(max_body_size=None).close()
    m.Client(max_body_size=1 << 40).close()
    m.Client(max_body_size=1 << 70).close()  # more than any body: no bound, in both bindings
