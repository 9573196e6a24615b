"""The application API both bindings implement (docs/binding-api.md): redirects, decoding, URL and params
encoding, multi-value headers, text/json, request bodies, the User-Agent, and the stubs that write the
contract down. Each test runs for beast_client and reqwest_client, against the axum server's test endpoints
(server-axum/src/client_api.rs) or, for what it cannot serve, Python's own http.server (support/httpapp.py).
Where the bindings differ, the test says which documented difference it checks. Every request is bounded."""

from __future__ import annotations

import array
import ast
import base64
import inspect
import io
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from clientbench.execution.server import Server
from support import REPO
from support.binding_clients import SYNC
from support.httpapp import BIG, App, echoed, header_of, sent_header_names
from support.rawserver import Conn

#: the text of /charset/{name} (server-axum/src/client_api.rs CHARSET_TEXT)
CHARSET_TEXT = "Grüße aus Köln: café, naïve, ½ + ¼ = ¾\n"
#: a bound for requests that are expected to succeed
T = 20.0

pytestmark = pytest.mark.kinds(*SYNC)


# -- redirects -----------------------------------------------------------------------------------


def test_redirect_chain_is_followed_to_the_final_url(client: Any, server: Server) -> None:
    r = client.request("GET", server.url + "/redirect/3")
    assert (r.status, r.body) == (200, b"Hello, World!")
    assert r.url == server.url + "/"
    assert r.reason == "OK"


@pytest.mark.parametrize("status", [301, 302, 303])
def test_301_302_303_become_get_without_body(client: Any, server: Server, status: int) -> None:
    url = f"{server.url}/redirect-to?url=/anything&status={status}"
    r = client.request("POST", url, body=b"payload", headers={"Content-Type": "text/plain"})
    assert r.status == 200
    echo = r.json()
    assert echo["method"] == "GET"
    assert echo["body_len"] == 0
    assert "content-type" not in echo["headers"]
    assert r.url == server.url + "/anything"


@pytest.mark.parametrize("status", [307, 308])
def test_307_308_keep_method_and_body(client: Any, server: Server, status: int) -> None:
    url = f"{server.url}/redirect-to?url=/anything&status={status}"
    for method in ("POST", "PUT"):
        r = client.request(method, url, body=b"payload")
        assert r.status == 200
        echo = r.json()
        assert (echo["method"], echo["body"]) == (method, "payload")


def test_redirect_methods_and_bodies_as_the_server_saw_them(client: Any, http_app: App) -> None:
    for status, method in ((301, "GET"), (302, "GET"), (303, "GET"), (307, "POST"), (308, "POST")):
        r = client.request("POST", http_app.url + f"/redirect-to?url=/anything&status={status}", body=b"data")
        doc = echoed(r)
        assert doc["method"] == method, status
        assert doc["body"] == ("data" if method == "POST" else ""), status
    assert http_app.seen[-1][0] == "POST"
    r = client.request("HEAD", http_app.url + "/redirect-to?url=/anything&status=303")
    assert r.status == 200 and http_app.seen[-1][0] == "HEAD"  # a 303 turns a HEAD into a HEAD


def test_authorization_and_cookie_dropped_across_hosts(client: Any, server: Server) -> None:
    port = server.url.rsplit(":", 1)[1]
    assert server.url.startswith("http://127.0.0.1:")
    secret = {"Authorization": "Bearer secret", "Cookie": "session=1", "X-Other": "kept"}
    # same host: kept
    r = client.request("GET", server.url + "/redirect-to?url=/headers", headers=secret)
    assert r.json()["authorization"] == ["Bearer secret"]
    assert r.json()["cookie"] == ["session=1"]
    # 127.0.0.1 -> localhost: another host
    target = f"http://localhost:{port}/headers"
    r = client.request("GET", server.url + "/redirect-to", params={"url": target}, headers=secret)
    assert r.status == 200 and r.url == target
    got = r.json()
    assert "authorization" not in got and "cookie" not in got
    assert got["x-other"] == ["kept"]


def test_too_many_redirects(new: Callable[..., Any], mod: ModuleType, server: Server) -> None:
    c = new()
    assert c.request("GET", server.url + "/redirect/10").status == 200  # 10 hops: the default limit
    with pytest.raises(mod.TooManyRedirects) as e:
        c.request("GET", server.url + "/redirect/11")
    assert issubclass(mod.TooManyRedirects, OSError)
    assert "/redirect/1" in str(e.value)  # names the last URL
    c2 = new(max_redirects=2)
    assert c2.request("GET", server.url + "/redirect/2").status == 200
    with pytest.raises(mod.TooManyRedirects, match="/redirect/1"):
        c2.request("GET", server.url + "/redirect/3")


def test_follow_redirects_false(new: Callable[..., Any], server: Server) -> None:
    c = new()
    r = c.request("GET", server.url + "/redirect/2", follow_redirects=False)
    assert r.status == 302
    assert r.headers["location"] == "/redirect/1"
    assert r.url == server.url + "/redirect/2"
    c2 = new(follow_redirects=False)
    assert c2.request("GET", server.url + "/redirect/1").status == 302
    assert c2.request("GET", server.url + "/redirect/1", follow_redirects=True).status == 200


def test_redirect_to_another_scheme(client: Any, mod: ModuleType, http_app: App) -> None:
    """ProtocolError in both (requests and httpx raise too; test_hostile_input.py has every such Location);
    without following, the 3xx is returned as it is."""
    url = http_app.url + "/redirect-to?url=ftp://example.org/"
    with pytest.raises(mod.ProtocolError):
        client.request("GET", url)
    r = client.request("GET", url, follow_redirects=False)
    assert r.status == 302 and r.headers["location"] == "ftp://example.org/"


# -- decoding ------------------------------------------------------------------------------------


CODINGS = [("gzip", "gzip"), ("deflate", "deflate"), ("brotli", "br"), ("zstd", "zstd")]  # (endpoint, coding)


@pytest.mark.parametrize(("path", "coding"), CODINGS)
def test_every_coding_is_decoded(client: Any, kind: str, server: Server, path: str, coding: str) -> None:
    r = client.request("GET", server.url + "/" + path)
    assert r.status == 200
    assert r.json()["coding"] == path
    if kind == "beast":
        assert r.headers["content-encoding"] == coding  # left as received
    else:
        assert "content-encoding" not in r.headers  # a documented difference: reqwest removes it
    with client.stream("GET", server.url + "/" + path) as s:
        assert json.loads(s.read())["coding"] == path
    sent = client.request("GET", server.url + "/headers").json()
    assert {"gzip", "deflate", "br", "zstd"} <= {c.strip() for c in sent["accept-encoding"][0].split(",")}


@pytest.mark.parametrize("path", ["/gzip", "/deflate"])
def test_a_large_compressed_body_is_decoded_whole(new: Callable[..., Any], kind: str, http_app: App, path: str):
    r = new().request("GET", http_app.url + path)
    assert r.body == BIG
    if kind == "beast":  # the headers as received: they describe the encoded body
        assert r.headers["content-encoding"] in ("gzip", "deflate")
        assert int(r.headers["content-length"]) < len(BIG)
    else:  # a documented difference: reqwest removes them
        assert "content-encoding" not in r.headers and "content-length" not in r.headers
    r = new(decompress=False).request("GET", http_app.url + path)
    assert r.body != BIG and len(r.body) == int(r.headers["content-length"])
    assert r.headers["content-encoding"] == path[1:]
    assert "accept-encoding" not in sent_header_names(http_app)


def test_decompress_false(new: Callable[..., Any], server: Server) -> None:
    c = new(decompress=False)
    r = c.request("GET", server.url + "/gzip")
    assert r.headers["content-encoding"] == "gzip"
    assert r.body[:2] == b"\x1f\x8b"  # as received
    assert "accept-encoding" not in c.request("GET", server.url + "/headers").json()


def test_undecodable_body_is_a_protocol_error(new: Callable[..., Any], mod: ModuleType, raw_server: Any) -> None:
    def bad_gzip(conn: Conn) -> None:
        while conn.read_request(timeout=5) is not None:
            conn.respond(b"not gzip at all", headers="Content-Encoding: gzip\r\n")

    srv = raw_server(bad_gzip)
    c = new()
    with pytest.raises(mod.ProtocolError):
        c.request("GET", srv.url + "/")
    with c.stream("GET", srv.url + "/") as s, pytest.raises(mod.ProtocolError):
        s.read()
    assert new(decompress=False).request("GET", srv.url + "/").body == b"not gzip at all"


# -- URLs and params -----------------------------------------------------------------------------


def test_params_are_percent_encoded_and_merged(client: Any, server: Server) -> None:
    params = {"q": "a b", "é": "ü/&=", "n": [1, 2.5], "skip": None, "t": "~-._"}
    r = client.request("GET", server.url + "/anything?x=1", params=params)
    assert r.json()["query"] == "x=1&q=a%20b&%C3%A9=%C3%BC%2F%26%3D&n=1&n=2.5&t=~-._"
    r = client.request("GET", server.url + "/anything", params=[("a", "1"), ("a", "2")])
    assert r.json()["query"] == "a=1&a=2"


def test_url_with_space_and_non_ascii_is_encoded(client: Any, server: Server) -> None:
    echo = client.request("GET", server.url + "/anything/a b/é?q=c d&e=ü").json()
    assert echo["path"] == "/anything/a%20b/%C3%A9"
    assert echo["query"] == "q=c%20d&e=%C3%BC"
    echo = client.request("GET", server.url + "/anything/%41%2F?q=%20").json()
    assert (echo["path"], echo["query"]) == ("/anything/%41%2F", "q=%20")  # existing escapes kept
    echo = client.request("GET", server.url + "/anything/any thing/é?q=a b&e=%41é#frag").json()
    assert (echo["path"], echo["query"]) == ("/anything/any%20thing/%C3%A9", "q=a%20b&e=%41%C3%A9")  # no fragment


def test_invalid_url_and_arguments(client: Any, server: Server) -> None:
    url = server.url + "/anything"
    for bad in ("not a url", "ftp://127.0.0.1/", "ftp://x/", "http:///x", "http:///nohost", "http://ex ample.org/"):
        with pytest.raises(ValueError):
            client.request("GET", bad)
    with pytest.raises(ValueError):
        client.request("GET", url, timeout=0)
    for kwargs in (
        {"body": b"x", "json": {"a": 1}},
        {"body": "str is not bytes"},
        {"body": [b"a", "b"]},
        {"params": {"a": b"x"}},
        {"params": [("a",)]},
        {"headers": [("a", 1)]},
        {"json": object()},
        {"timeout": "1"},
    ):
        with pytest.raises(TypeError):
            client.request("POST", url, **kwargs)
    assert client.request("GET", url).status == 200  # still usable


def test_connection_refused(client: Any, closed_port_url: str) -> None:
    with pytest.raises(ConnectionRefusedError):
        client.request("GET", closed_port_url)
    with pytest.raises(ConnectionRefusedError):
        client.stream("GET", closed_port_url)


# -- headers -------------------------------------------------------------------------------------


def test_multi_value_headers(client: Any, mod: ModuleType, server: Server) -> None:
    sent = client.request("GET", server.url + "/headers", headers=[("X-A", "1"), ("x-a", "2")]).json()
    assert sent["x-a"] == ["1", "2"]

    r = client.request("GET", server.url + "/cookies/set?a=1&b=2")
    h = r.headers
    assert isinstance(h, mod.Headers) and isinstance(h, Mapping)
    assert h is r.headers
    assert h.get_all("Set-Cookie") == ["a=1; Path=/", "b=2; Path=/"]  # never joined
    assert h["SET-COOKIE"] == "a=1; Path=/, b=2; Path=/"
    assert "Set-Cookie" in h and "nope" not in h
    assert h.get("nope") is None and h.get("nope", "d") == "d"
    assert h.get_all("nope") == []
    with pytest.raises(KeyError):
        h["nope"]
    assert [v for k, v in h.multi_items() if k == "set-cookie"] == ["a=1; Path=/", "b=2; Path=/"]
    assert list(h) == list(h.keys()) and len(h) == len(list(h))
    assert list(h).count("set-cookie") == 1
    assert dict(h.items())["set-cookie"] == h["set-cookie"]
    assert h == {k.upper(): v for k, v in h.items()}
    assert h != {"set-cookie": "other"}
    assert "set-cookie" in repr(h)


def test_headers_keep_a_comma_inside_a_value(client: Any, mod: ModuleType, http_app: App) -> None:
    r = client.request("GET", http_app.url + "/cookies")
    h = r.headers
    assert h is r.headers
    assert isinstance(h, mod.Headers) and isinstance(h, Mapping)
    assert h.get_all("Set-Cookie") == ["a=1; Path=/", "b=2, c=3"]
    assert h["set-cookie"] == "a=1; Path=/, b=2, c=3"
    assert h.get("X-ONE") == "1" and h.get("missing") is None and h.get("missing", "d") == "d"
    assert "SET-COOKIE" in h and "nope" not in h and 1 not in h
    with pytest.raises(KeyError):
        h["nope"]
    names = list(h)
    assert names == ["server", "date", "set-cookie", "x-one", "content-length"]  # first-seen order
    assert len(h) == len(set(names)) == len(names)
    assert [v for k, v in h.multi_items() if k == "set-cookie"] == ["a=1; Path=/", "b=2, c=3"]
    assert dict(h.items())["x-one"] == "1" and list(h.keys()) == names and len(h.values()) == len(h)
    assert h == {k.upper(): v for k, v in h.items()}
    assert h != {"x-one": "1"} and h != 1
    assert "set-cookie" in repr(h)
    with pytest.raises(TypeError):
        hash(h)


def test_headers_class(mod: ModuleType) -> None:
    h = mod.Headers([("A", "1"), ("b", "2"), ("a", "3")])
    assert h["a"] == "1, 3" and h.get_all("A") == ["1", "3"]
    assert list(h) == ["a", "b"] and len(h) == 2
    assert h.multi_items() == [("a", "1"), ("b", "2"), ("a", "3")]
    assert h == {"B": "2", "A": "1, 3"}
    assert h != {"a": "1"}
    assert mod.Headers([("A", "1"), ("a", "2")]).get_all("A") == ["1", "2"]
    assert mod.Headers({"A": "1"}) == mod.Headers([("a", "1")])
    with pytest.raises(TypeError):
        hash(h)
    with pytest.raises(TypeError):
        mod.Headers(42)  # type: ignore[arg-type]


def test_two_headers_compare_as_mappings(mod: ModuleType) -> None:
    """Headers == Headers as for any Mapping: the joined values by case-insensitive name, in any order."""
    h = mod.Headers
    assert h([("A", "1"), ("b", "2"), ("a", "3")]) == h({"B": "2", "A": "1, 3"})
    assert h([("b", "1"), ("a", "2")]) == h([("a", "2"), ("b", "1")])
    assert h([("a", "1")]) != h([("a", "2")])


# -- text and JSON ---------------------------------------------------------------------------------


def test_text_uses_the_charset(client: Any, server: Server, http_app: App) -> None:
    for name in ("iso-8859-1", "latin-1", "utf-8"):
        r = client.request("GET", server.url + "/charset/" + name)
        assert r.text() == CHARSET_TEXT, name
    r = client.request("GET", server.url + "/charset/latin1")
    assert len(r.body) == len(CHARSET_TEXT)  # one byte per character: not UTF-8 on the wire
    assert r.body.decode("utf-8", "replace") != CHARSET_TEXT
    assert client.request("GET", http_app.url + "/latin1").text() == "café"  # charset=ISO-8859-1, in capitals


def test_json_request_and_response(client: Any, server: Server, http_app: App) -> None:
    r = client.request("POST", server.url + "/anything", json={"k": ["é", 1, None]})
    echo = r.json()
    assert echo["headers"]["content-type"] == ["application/json"]
    assert json.loads(echo["body"]) == {"k": ["é", 1, None]}
    r = client.request("PUT", server.url + "/anything", json=[1], headers={"content-type": "application/x-mine"})
    assert r.json()["headers"]["content-type"] == ["application/x-mine"]
    with pytest.raises(json.JSONDecodeError):
        client.request("GET", server.url + "/").json()
    r = client.request("GET", http_app.url + "/anything")
    assert r.json()["method"] == "GET"
    assert r.text().startswith("{")
    with pytest.raises(json.JSONDecodeError):
        client.request("GET", http_app.url + "/gzip").json()  # 1 MiB of binary


def test_request_params_headers_json(mod: ModuleType, kind: str, http_app: App) -> None:
    with mod.Client(timeout=5, headers={"X-Default": "d", "X-Over": "client"}) as c:
        r = c.request(
            "POST",
            http_app.url + "/anything?x=1",
            params={"q": "café au lait", "n": 2, "f": 1.5, "l": ["a", "b"], "skip": None},
            headers=[("X-Over", "request"), ("X-Rep", "1"), ("X-Rep", "2")],
            json={"k": ["v", 1]},
        )
        assert r.status == 200 and r.reason == "OK"
        doc = echoed(r)
        assert doc["path"] == "/anything?x=1&q=caf%C3%A9%20au%20lait&n=2&f=1.5&l=a&l=b"
        assert r.url == http_app.url + doc["path"]
        assert header_of(doc, "x-default") == ["d"]
        assert header_of(doc, "x-over") == ["request"]
        assert header_of(doc, "x-rep") == ["1", "2"]
        assert header_of(doc, "content-type") == ["application/json"]
        assert header_of(doc, "user-agent") == [f"{mod.__name__.replace('_', '-')}/{mod.__version__}"]
        # the same codings, each library's way of writing them
        codings = {"beast": "gzip, deflate, br, zstd", "reqwest": "zstd,gzip,deflate,br"}
        assert header_of(doc, "accept-encoding") == [codings[kind]]
        assert json.loads(doc["body"]) == {"k": ["v", 1]}
        # the caller's Content-Type wins over the json default
        doc = echoed(c.request("POST", http_app.url + "/anything", json=[1], headers={"content-type": "text/x"}))
        assert header_of(doc, "content-type") == ["text/x"]


# -- request bodies --------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [b"a\x00\xff", bytearray(b"a\x00\xff"), memoryview(b"xa\x00\xffx")[1:4]])
def test_bytes_like_bodies(client: Any, server: Server, body: Any) -> None:
    echo = client.request("POST", server.url + "/anything", body=body).json()
    assert echo["body_len"] == 3
    assert echo["body_encoding"] == "base64" and echo["body"] == "YQD/"


def test_body_kinds(client: Any, server: Server, tmp_path: Path) -> None:
    """Every kind of body arrives whole. Buffers go with Content-Length; an iterable or a file is streamed
    (chunked), read as it is sent."""
    streamed = "transfer-encoding"
    for body, framing in (
        (b"abc", "content-length"),
        (bytearray(b"abc"), "content-length"),
        (memoryview(b"xabc")[1:], "content-length"),
        (array.array("B", b"abc"), "content-length"),
        ([b"a", bytearray(b"b"), memoryview(b"c")], streamed),
        (io.BytesIO(b"abc"), streamed),
        (iter([b"ab", b"c"]), streamed),
    ):
        echo = client.request("PUT", server.url + "/anything", body=body).json()
        assert echo["body"] == "abc", body
        want = ["3"] if framing == "content-length" else ["chunked"]
        assert echo["headers"][framing] == want, (body, echo["headers"])
    p = tmp_path / "f.bin"
    p.write_bytes(b"\x00\xff" * 10)
    with open(p, "rb") as f:
        echo = client.request("PUT", server.url + "/anything", body=f).json()
    assert echo["body_len"] == 20 and echo["body_encoding"] == "base64"
    assert base64.b64decode(echo["body"]) == b"\x00\xff" * 10


def test_a_streamed_body_is_read_as_it_is_sent(client: Any, server: Server) -> None:
    """The iterable's items are taken while the request goes out: a generator sees the request under way."""
    seen: list[int] = []

    def pieces() -> Iterator[bytes]:
        for i in range(3):
            seen.append(i)
            yield b"%d" % i

    echo = client.request("POST", server.url + "/anything", body=pieces()).json()
    assert echo["body"] == "012" and echo["headers"]["transfer-encoding"] == ["chunked"]
    assert seen == [0, 1, 2]


def test_a_streamed_body_may_use_one_buffer_again(client: Any, server: Server) -> None:
    """A piece is sent from its own buffer, not a copy: the next is asked for only once it was written, so a
    generator that fills one bytearray again for every piece (as readinto does) sends each as it was."""
    size, count = 100_000, 30  # 3 MB: more than the socket buffers hold

    def refilled() -> Iterator[bytearray]:
        buf = bytearray(size)
        for i in range(count):
            buf[:] = bytes([65 + i % 26]) * size
            yield buf

    r = client.request("POST", server.url + "/echo", body=refilled())
    assert r.status == 200
    assert r.body == b"".join(bytes([65 + i % 26]) * size for i in range(count))


def test_a_307_to_a_streamed_body_is_returned(client: Any, server: Server) -> None:
    """A streamed body cannot be sent twice: the 307/308 is the answer; a 303 is followed (as a GET without
    body); a bytes body is sent again to the 307's Location."""
    for status in (307, 308):
        url = f"{server.url}/redirect-to?url=/anything&status={status}"
        r = client.request("POST", url, body=iter([b"once"]))
        assert r.status == status and r.url == url
        assert client.request("POST", url, body=b"twice").json()["body"] == "twice"
    r = client.request("POST", f"{server.url}/redirect-to?url=/anything&status=303", body=iter([b"x"]))
    assert r.status == 200 and r.json()["method"] == "GET"


def test_upload_source_errors_propagate(client: Any, server: Server) -> None:
    def failing() -> Iterator[bytes]:
        yield b"first"
        raise LookupError("the source failed")

    with pytest.raises(LookupError, match="the source failed"):
        client.request("POST", server.url + "/anything", body=failing())
    with pytest.raises(TypeError):
        client.request("POST", server.url + "/anything", body=iter(["str chunk"]))
    with pytest.raises(TypeError):
        client.request("POST", server.url + "/anything", body=42)
    assert client.request("GET", server.url + "/").status == 200


def test_user_agent(new: Callable[..., Any], mod: ModuleType, server: Server) -> None:
    url = server.url + "/headers"
    ua = new().request("GET", url).json()["user-agent"]
    assert ua == [f"{mod.__name__.replace('_', '-')}/{mod.__version__}"]
    assert new(user_agent="mine/1").request("GET", url).json()["user-agent"] == ["mine/1"]
    c = new(user_agent="mine/1", headers={"User-Agent": "from-headers", "X-Default": "d"})
    got = c.request("GET", url).json()
    assert got["user-agent"] == ["from-headers"] and got["x-default"] == ["d"]
    got = c.request("GET", url, headers={"user-agent": "per-request", "x-default": "r"}).json()
    assert got["user-agent"] == ["per-request"] and got["x-default"] == ["r"]


# -- the stubs -----------------------------------------------------------------------------------

STUBS = {
    "beast": REPO / "bindings/beast/python/beast_client/_core.pyi",
    "reqwest": REPO / "bindings/reqwest/python/reqwest_client/_core.pyi",
}
#: what the contract lets differ: reqwest's http2 and http3 options, and tls_info (reqwest cannot tell the
#: cipher: None); the raw async client's constructor, whose options beast lists and reqwest takes as **options
ALLOWED = {
    ("Client", "__init__"),
    ("Client", "tls_info"),
    ("RawAsyncClient", "__init__"),
    ("RawAsyncClient", "tls_info"),
}
#: reqwest's own members (HTTP/2: the version a response came with; beast_client speaks HTTP/1.1 only)
REQWEST_ONLY = {("Response", "http_version"), ("StreamResponse", "http_version"), ("RawStream", "http_version")}
#: beast's RawAsyncClient has a loop path too (its AsyncClient's get, fetch_len, fetch_phases and fetch on the
#: loop's own thread)
BEAST_ONLY = {
    "_connections_opened",
    "loop_get",
    "loop_fetch_len",
    "loop_fetch_phases",
    "loop_fetch",
    "abandon",
    "_loop_requests",
}
#: reqwest's constructor options after beast's: http2 and http3
REQWEST_INIT = ", http2: Literal[False, 'alpn', 'prior_knowledge']=False, http3: bool=False"
MAX_CONNECTIONS = ", max_connections: int | None=None"


def _signatures(path: Path) -> dict[tuple[str, str], str]:
    """(class, member) -> the member's signature as text; `__new__` and `__init__` are one constructor."""
    out: dict[tuple[str, str], str] = {}
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                args = item.args
                # without self / cls (positional-only in `def f(self, x, /)`)
                if args.posonlyargs:
                    trimmed = {"posonlyargs": args.posonlyargs[1:], "args": args.args}
                else:
                    trimmed = {"posonlyargs": [], "args": args.args[1:]}
                text = ast.unparse(ast.arguments(**{**{f: getattr(args, f) for f in args._fields}, **trimmed}))
                name = "__init__" if item.name == "__new__" else item.name
                ret = "" if name == "__init__" else ast.unparse(item.returns) if item.returns else ""
                out[(node.name, name)] = f"({text}) -> {ret}"
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                out[(node.name, item.target.id)] = ast.unparse(item.annotation)
    return out


def test_stub_signatures_match() -> None:
    beast = _signatures(STUBS["beast"])
    reqwest = _signatures(STUBS["reqwest"])
    shared = [
        "Headers",
        "Response",
        "StreamResponse",
        "Client",
        "_BytesIterator",
        "Completer",
        "RawStream",
        "RawAsyncClient",
        "RawUpload",
    ]
    for cls in shared:
        names_b = {m for c, m in beast if c == cls}
        names_r = {m for c, m in reqwest if c == cls and (c, m) not in REQWEST_ONLY}
        only = BEAST_ONLY - {"abandon"} if cls == "Completer" else BEAST_ONLY  # both Completers have abandon()
        assert names_b - only == names_r, cls
    for key in sorted(beast.keys() & reqwest.keys()):
        if key[0] in shared and key not in ALLOWED:
            assert beast[key] == reqwest[key], key
    # the constructor: the same parameters, and reqwest's http2 and http3 after them
    init_b = beast[("Client", "__init__")]
    init_r = reqwest[("Client", "__init__")]
    assert MAX_CONNECTIONS in init_b and ", trust_env: bool=True, proxy: str | None=None" in init_b
    assert init_r == init_b.replace(") -> ", REQWEST_INIT + ") -> ")
    # the raw async client takes what the Client takes (beast lists it, reqwest's stub says **options)
    raw_b = beast[("RawAsyncClient", "__init__")]
    assert raw_b == init_b, "RawAsyncClient's options are Client's"
    # the aliases the signatures use are the same
    aliases = {}
    for name, path in STUBS.items():
        tree = ast.parse(path.read_text())
        aliases[name] = {
            n.targets[0].id: ast.unparse(n.value)
            for n in tree.body
            if isinstance(n, ast.Assign)
            and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id.startswith("_")
            and not n.targets[0].id.startswith("__")
        }
    assert aliases["beast"]["_AsyncBody"] == "_Body | AsyncIterable[Buffer]"
    assert aliases["beast"] == aliases["reqwest"]


def test_async_clients_have_the_same_api() -> None:
    """beast_client.AsyncClient and reqwest_client.AsyncClient (each package's Python wrapper): the same
    methods with the same signatures, the same properties (reqwest's http_version on a streamed response
    aside: HTTP/2)."""
    import beast_client
    import reqwest_client

    def public(cls: type) -> set[str]:
        return {n for n in dir(cls) if not n.startswith("_") or n in ("__init__", "__aenter__", "__aexit__")}

    b, r = beast_client.AsyncClient, reqwest_client.AsyncClient
    assert public(b) == public(r)
    for name in sorted(public(b)):
        member = getattr(b, name)
        if callable(member):
            assert str(inspect.signature(member)) == str(inspect.signature(getattr(r, name))), name
    assert public(beast_client.AsyncStreamResponse) == public(reqwest_client.AsyncStreamResponse) - {"http_version"}
