"""Timeouts (total, read, the defaults) and streamed responses of both bindings (docs/binding-api.md), against
the axum server and Python's own http.server (support/httpapp.py: a request it never answers, a body in
flushed chunks). Each test runs for beast_client and reqwest_client; every request is bounded in time."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.binding_clients import SYNC
from support.httpapp import BIG, App

#: a bound for requests that are expected to succeed
T = 20.0
#: what a TimeoutError's message says, per binding: beast names the limit that expired, reqwest says
#: "operation timed out" for each
TIMED_OUT = {
    "beast": {"read": "no data from .* for 0.2 s \\(read timeout\\)", "total": "timed out after 0.2 s"},
    "reqwest": {"read": "operation timed out", "total": "operation timed out"},
}


pytestmark = pytest.mark.kinds(*SYNC)


# -- timeouts ------------------------------------------------------------------------------------


def test_total_timeout_per_request_and_client(new: Callable[..., Any], server: Server) -> None:
    c = new()
    with pytest.raises(TimeoutError):
        c.request("GET", server.url + "/delay/3000", timeout=0.3)
    assert c.request("GET", server.url + "/delay/10", timeout=5).status == 200
    with pytest.raises(TimeoutError):
        new(timeout=0.3).request("GET", server.url + "/delay/3000")
    # the total limit covers a body that keeps coming
    with pytest.raises(TimeoutError):
        c.request("GET", server.url + "/drip?bytes=10&duration_ms=3000", timeout=1.0)


def test_total_timeout_of_a_request_nobody_answers(new: Callable[..., Any], kind: str, http_app: App) -> None:
    c = new(timeout=None, read_timeout=None)
    with pytest.raises(TimeoutError, match=TIMED_OUT[kind]["total"]):
        c.request("GET", http_app.url + "/hang", timeout=0.2)


def test_read_timeout(new: Callable[..., Any], server: Server) -> None:
    c = new(timeout=None, read_timeout=0.4)
    assert c.read_timeout == 0.4
    with pytest.raises(TimeoutError):
        c.request("GET", server.url + "/delay/3000")
    # bytes every 200 ms: the gap never reaches the read timeout, whatever the whole takes
    c2 = new(timeout=None, read_timeout=1.5)
    r = c2.request("GET", server.url + "/drip?bytes=10&duration_ms=2000")
    assert (r.status, r.body) == (200, b"*" * 10)


def test_read_timeout_of_a_request_nobody_answers(mod: ModuleType, kind: str, http_app: App) -> None:
    with mod.Client(read_timeout=0.2) as c:
        assert c.timeout is None and c.read_timeout == 0.2 and c.connect_timeout == 10.0
        with pytest.raises(TimeoutError, match=TIMED_OUT[kind]["read"]):
            c.request("GET", http_app.url + "/hang")


def test_slow_but_steady_download_with_the_defaults(mod: ModuleType, server: Server, http_app: App) -> None:
    with mod.Client() as c:  # no total timeout unless asked for
        assert c.timeout is None
        r = c.request("GET", server.url + "/drip?bytes=20&duration_ms=2500")
        assert (r.status, len(r.body)) == (200, 20)
    with mod.Client(read_timeout=2.0) as c:  # 8 bytes 50 ms apart: each gap far below the read timeout
        assert c.request("GET", http_app.url + "/drip").body == b"x" * 8


# -- streaming -----------------------------------------------------------------------------------


def test_stream_one_mebibyte_in_chunks(client: Any, mod: ModuleType, server: Server) -> None:
    n = 1024 * 1024
    with client.stream("GET", server.url + f"/bytes/{n}") as s:
        assert isinstance(s, mod.StreamResponse)
        assert s.status == 200 and s.headers["content-length"] == str(n)
        sizes = [len(chunk) for chunk in s.iter_bytes()]
    assert len(sizes) > 1 and sum(sizes) == n
    assert s.closed


@pytest.mark.parametrize("path", ["/stream", "/gzip"])
def test_stream_chunked_and_compressed_bodies(new: Callable[..., Any], mod: ModuleType, http_app: App, path: str):
    c = new(timeout=10)
    with c.stream("GET", http_app.url + path) as s:
        assert isinstance(s, mod.StreamResponse)
        assert s.status == 200 and s.url == http_app.url + path and s.reason == "OK"
        assert isinstance(s.headers, mod.Headers)
        chunks = list(s.iter_bytes())
    assert s.closed
    assert len(chunks) > 1 and all(chunks)
    assert b"".join(chunks) == BIG
    assert c.get(http_app.url + "/anything") == 200


def test_stream_read_and_close_early(client: Any, server: Server) -> None:
    with client.stream("GET", server.url + "/stream/20") as s:
        lines = s.read().decode().splitlines()
    assert [json.loads(line)["id"] for line in lines] == list(range(20))
    with client.stream("GET", server.url + "/bytes/1048576") as s:
        first = next(iter(s.iter_bytes()))
        assert first
    assert s.closed
    assert client.request("GET", server.url + "/").status == 200  # the client goes on


def test_stream_read_the_rest_and_iterate_after_close(new: Callable[..., Any], mod: ModuleType, http_app: App):
    c = new(timeout=10)
    with c.stream("GET", http_app.url + "/stream") as s:
        first = next(iter(s.iter_bytes()))
        assert first and len(first) < len(BIG)
        assert len(s.read()) == len(BIG) - len(first)
    with c.stream("POST", http_app.url + "/stream", json={}) as s:
        next(s.iter_bytes())
    assert list(s.iter_bytes()) == []  # closed: nothing more
    assert c.get(http_app.url + "/anything") == 200
    with pytest.raises(mod.TooManyRedirects):
        c.stream("GET", http_app.url + "/redirect/20")


def test_stream_follows_redirects_and_decodes(client: Any, server: Server) -> None:
    with client.stream("GET", server.url + "/redirect-to?url=/gzip") as s:
        assert s.url == server.url + "/gzip"
        body = b"".join(s.iter_bytes())
    assert json.loads(body)["coding"] == "gzip"


def test_stream_read_timeout(mod: ModuleType, http_app: App) -> None:
    with mod.Client(read_timeout=0.2) as c, pytest.raises(TimeoutError):
        c.stream("GET", http_app.url + "/hang")
