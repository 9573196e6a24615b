"""The body limit of every binding client (docs/binding-api.md, "Limits"): `max_body_size` bounds the
decoded body that request() keeps: one byte more is BodyTooLarge (a ProtocolError), whatever the framing
(Content-Length, chunked, the end of the connection) and whether it came compressed (a decompression bomb is
stopped by its decoded size); nothing of it is kept and the client stays usable. The benchmark path (get,
fetch_len, fetch) and stream() are not limited by it. Every request is bounded in time."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.binding_clients import SYNC
from support.httpapp import BIG, App
from support.rawserver import Conn, RawServer

T = 10.0


def stream_read(c: Any, url: str) -> bytes:
    if hasattr(c, "stream_read"):
        return c.stream_read("GET", url)[1]  # type: ignore[no-any-return]
    with c.stream("GET", url) as s:
        return b"".join(s.iter_bytes())


@pytest.mark.kinds(*SYNC)
def test_the_error_class(mod: ModuleType) -> None:
    assert issubclass(mod.BodyTooLarge, mod.ProtocolError) and issubclass(mod.BodyTooLarge, OSError)
    assert mod.BodyTooLarge.__module__ == mod.__name__ and "BodyTooLarge" in mod.__all__


def test_a_body_over_the_limit_is_body_too_large(new: Callable[..., Any], mod: ModuleType, server: Server) -> None:
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


def test_zero_allows_only_an_empty_body(new: Callable[..., Any], mod: ModuleType, server: Server) -> None:
    c = new(max_body_size=0)
    assert c.request("GET", server.url + "/bytes/0").body == b""
    with pytest.raises(mod.BodyTooLarge):
        c.request("GET", server.url + "/bytes/1")


def test_the_decoded_size_counts(new: Callable[..., Any], mod: ModuleType, http_app: App) -> None:
    """A small compressed body that decodes to 1 MiB (a decompression bomb in miniature)."""
    for path in ("/gzip", "/deflate"):
        c = new(max_body_size=len(BIG) - 1)
        with pytest.raises(mod.BodyTooLarge):
            c.request("GET", http_app.url + path)
        assert new(max_body_size=len(BIG)).request("GET", http_app.url + path).body == BIG
        # decompress=False: the body as received, well under the limit
        assert len(new(max_body_size=len(BIG) // 2, decompress=False).request("GET", http_app.url + path).body) > 0


def test_a_body_delimited_by_the_end_of_the_connection(
    new: Callable[..., Any], mod: ModuleType, raw_server: Callable[..., RawServer]
) -> None:
    def until_close(conn: Conn) -> None:
        if conn.read_request(timeout=5) is not None:
            conn.send(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"x" * 5000)

    srv = raw_server(until_close)
    with pytest.raises(mod.BodyTooLarge):
        new(max_body_size=4999).request("GET", srv.url + "/")
    assert new(max_body_size=5000).request("GET", srv.url + "/").body == b"x" * 5000


def test_a_declared_length_over_the_limit_fails_before_the_body(
    new: Callable[..., Any], mod: ModuleType, raw_server: Callable[..., RawServer]
) -> None:
    """A Content-Length of 1 GiB and no body: refused from the head, not after waiting for the bytes."""

    def huge(conn: Conn) -> None:
        if conn.read_request(timeout=5) is not None:
            conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\nxx")
            conn.hold(10)

    srv = raw_server(huge)
    with pytest.raises(mod.BodyTooLarge):
        new(max_body_size=1 << 20, read_timeout=5).request("GET", srv.url + "/")


def test_a_gzip_bomb(new: Callable[..., Any], mod: ModuleType, raw_server: Callable[..., RawServer]) -> None:
    bomb = gzip.compress(bytes(64 << 20), compresslevel=9)  # 64 MiB of zeros in ~64 KiB
    assert len(bomb) < 1 << 17

    def serve(conn: Conn) -> None:
        while conn.read_request(timeout=5) is not None:
            conn.respond(bomb, headers="Content-Encoding: gzip\r\n")

    srv = raw_server(serve)
    with pytest.raises(mod.BodyTooLarge):
        new(max_body_size=1 << 20).request("GET", srv.url + "/")


def test_the_benchmark_path_and_streams_are_not_limited(new: Callable[..., Any], server: Server) -> None:
    c = new(max_body_size=10)
    url = server.url + "/bytes/5000"
    assert c.get(url) == 200
    assert c.fetch_len(url) == (200, 5000)
    status, body = c.fetch(url)
    assert (status, len(body)) == (200, 5000)
    assert len(stream_read(c, url)) == 5000


@pytest.mark.kinds(*SYNC)
def test_bad_values(mod: ModuleType) -> None:
    with pytest.raises(ValueError):
        mod.Client(max_body_size=-1)
    for bad in ("1", 1.5, True):  # a bool is no size
        with pytest.raises(TypeError):
            mod.Client(max_body_size=bad)
    mod.Client(max_body_size=None).close()
    mod.Client(max_body_size=1 << 40).close()
    mod.Client(max_body_size=1 << 70).close()  # more than any body: no bound, in both bindings
