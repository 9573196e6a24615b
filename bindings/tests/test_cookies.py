"""The cookie jar of every binding client (docs/binding-api.md, "Cookies"): off by default; with
`cookies=True`, request() and stream() store what responses set (a redirect's included) and send it back by
RFC 6265's rules: host-only and Domain cookies, the default path and path matching, Secure cookies only over
https (and not accepted from http), Max-Age over Expires, an expired cookie deleting the stored one. A
request's own Cookie header replaces the jar's; the benchmark path (get, fetch_len, fetch) neither stores nor
sends; the threads that share a client share its jar.

Servers: the axum server's /cookies/set, and the scripted application (support/dualserver.py) on one port
for https and http (the Secure rules need one host over both). Domain matching between subdomains needs host
names that this machine cannot resolve: the jars are tested for it on their own (rust-reqwest/src/cookies.rs,
cpp-beast/tests/test_cookies.cpp). Every request is bounded in time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.binding_clients import SYNC, is_async
from support.dualserver import DualServer, answer_url

T = 10.0


def cookies_sent(c: Any, url: str) -> set[str]:
    """The `name=value` pairs the scripted application (or the axum server's /headers) received."""
    doc = c.request("GET", url).json()
    values = (doc["headers"] if "headers" in doc else doc).get("cookie", [])
    return {pair for value in values for pair in value.split("; ")}


def set_cookies(c: Any, base: str, *fields: str) -> None:
    assert c.request("GET", answer_url(base, 200, None, fields)).status == 200


def test_off_by_default(new: Callable[..., Any], server: Server) -> None:
    c = new()
    assert c.request("GET", server.url + "/cookies/set?a=1").headers.get_all("set-cookie") == ["a=1; Path=/"]
    assert cookies_sent(c, server.url + "/headers") == set()


def test_set_and_sent_back(new: Callable[..., Any], kind: str, server: Server) -> None:
    c = new(cookies=True)
    c.request("GET", server.url + "/cookies/set?a=1&b=2")
    assert cookies_sent(c, server.url + "/headers") == {"a=1", "b=2"}
    c.request("GET", server.url + "/cookies/set?a=3")  # replaced
    assert cookies_sent(c, server.url + "/headers") == {"a=3", "b=2"}
    # stream() stores and sends too
    with_stream = new(cookies=True)
    if is_async(kind):
        with_stream.stream_read("GET", server.url + "/cookies/set?s=1")
    else:
        with with_stream.stream("GET", server.url + "/cookies/set?s=1") as s:
            s.read()
    assert cookies_sent(with_stream, server.url + "/headers") == {"s=1"}
    assert cookies_sent(new(cookies=True), server.url + "/headers") == set()  # one jar per client


def test_redirects_store_and_send(new: Callable[..., Any], dual: DualServer) -> None:
    c = new(cookies=True)
    base = dual.origin("http")
    assert cookies_sent(c, answer_url(base, 302, "/echo", ["s=1"])) == {"s=1"}  # the redirect's own cookie
    # another origin (127.0.0.1 instead of localhost): the caller's Cookie is dropped, the jar's for the new
    # host are sent
    set_cookies(c, dual.origin("http", "127.0.0.1"), "ip=1")
    r = c.request("GET", answer_url(base, 302, dual.origin("http", "127.0.0.1") + "/echo"), headers={"Cookie": "x=1"})
    assert r.json()["headers"]["cookie"] == ["ip=1"]


def test_a_request_cookie_header_replaces_the_jar(new: Callable[..., Any], dual: DualServer) -> None:
    c = new(cookies=True)
    base = dual.origin("http")
    set_cookies(c, base, "a=1")
    got = c.request("GET", base + "/echo", headers={"Cookie": "mine=1"}).json()["headers"]["cookie"]
    assert got == ["mine=1"]
    assert cookies_sent(c, base + "/echo") == {"a=1"}


def test_host_only_and_domain_cookies(new: Callable[..., Any], dual: DualServer) -> None:
    c = new(cookies=True)
    local, ip = dual.origin("http", "localhost"), dual.origin("http", "127.0.0.1")
    set_cookies(
        c, local, "host=1", "dom=1; Domain=localhost", "dot=1; Domain=.LOCALHOST", "foreign=1; Domain=example.org"
    )
    set_cookies(c, ip, "ip=1", "ipdom=1; Domain=0.0.1")
    assert cookies_sent(c, local + "/echo") == {"host=1", "dom=1", "dot=1"}
    assert cookies_sent(c, ip + "/echo") == {"ip=1"}


def test_paths(new: Callable[..., Any], dual: DualServer) -> None:
    c = new(cookies=True)
    base = dual.origin("http")
    # from /dir/answer: the default path is /dir
    set_cookies(c, base + "/dir", "def=1", "root=1; Path=/", "acc=1; Path=/acc", "rel=1; Path=rel")
    for path, want in (
        ("/dir/x", {"def=1", "rel=1", "root=1"}),
        ("/dir", {"def=1", "rel=1", "root=1"}),
        ("/directory", {"root=1"}),
        ("/acc/x/y", {"acc=1", "root=1"}),
        ("/accounts", {"root=1"}),
        ("/", {"root=1"}),
    ):
        assert cookies_sent(c, base + path) == want, path


def test_secure_cookies_only_over_https(new: Callable[..., Any], dual: DualServer) -> None:
    c = new(cookies=True, verify=dual.ca_file)
    https, http = dual.origin("https"), dual.origin("http")
    set_cookies(c, https, "s=1; Secure", "p=1")
    assert cookies_sent(c, https + "/echo") == {"s=1", "p=1"}
    assert cookies_sent(c, http + "/echo") == {"p=1"}  # the same host and port, over http
    set_cookies(c, http, "s2=1; Secure")  # a Secure cookie from http is not accepted
    assert cookies_sent(c, https + "/echo") == {"s=1", "p=1"}


def test_expiry_and_deletion(new: Callable[..., Any], dual: DualServer) -> None:
    c = new(cookies=True)
    base = dual.origin("http")
    past, future = "Thu, 01 Jan 1970 00:00:00 GMT", "Wed, 01 Jan 2200 00:00:00 GMT"
    set_cookies(c, base, "a=1", "b=1", "c=1; Expires=" + future, "d=1; Max-Age=3600", "short=1; Max-Age=1")
    assert cookies_sent(c, base + "/echo") == {"a=1", "b=1", "c=1", "d=1", "short=1"}
    set_cookies(c, base, "a=x; Max-Age=0", "b=x; Expires=" + past, "c=x; Max-Age=-1")
    assert cookies_sent(c, base + "/echo") == {"d=1", "short=1"}
    # Max-Age wins over Expires
    set_cookies(c, base, "e=1; Max-Age=3600; Expires=" + past, "f=1; Max-Age=0; Expires=" + future)
    assert cookies_sent(c, base + "/echo") == {"d=1", "e=1", "short=1"}
    time.sleep(2.1)  # Max-Age=1 has passed
    assert cookies_sent(c, base + "/echo") == {"d=1", "e=1"}


def test_the_benchmark_path_neither_stores_nor_sends(new: Callable[..., Any], server: Server) -> None:
    c = new(cookies=True)
    assert c.fetch(server.url + "/cookies/set?bench=1")[0] == 200
    assert c.get(server.url + "/cookies/set?bench=1") == 200
    assert cookies_sent(c, server.url + "/headers") == set()
    c.request("GET", server.url + "/cookies/set?a=1")
    status, body = c.fetch(server.url + "/headers")
    assert status == 200 and b"cookie" not in body


def test_threads_share_the_jar(new: Callable[..., Any], kind: str, server: Server) -> None:
    c = new(cookies=True)
    errors: list[BaseException] = []

    def set_one(i: int) -> None:
        try:
            c.request("GET", server.url + f"/cookies/set?t{i}={i}")
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    # an AsyncClient's adapter runs one event loop, one thread's: its threads take turns
    concurrent = not is_async(kind)
    threads = [threading.Thread(target=set_one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
        if not concurrent:
            t.join(T)
    for t in threads:
        t.join(T)
    assert not errors, errors
    assert cookies_sent(c, server.url + "/headers") == {f"t{i}={i}" for i in range(4)}


@pytest.mark.kinds(*SYNC)
def test_bad_values(mod: ModuleType) -> None:
    for bad in ("yes", 1, None):
        with pytest.raises(TypeError):
            mod.Client(cookies=bad)
