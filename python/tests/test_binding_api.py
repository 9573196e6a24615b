"""The user-facing API that both bindings share (issue 12: one contract, checked against both compiled modules)
against the axum server's test endpoints (server-axum/src/client_api.rs): redirects, decompression, URL and
params encoding, multi-value headers, text/json, bodies, the User-Agent, timeouts, streaming, and the stubs.

Each test runs for `beast_client` and `reqwest_client`. Every request is bounded in time."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import beast_client
import pytest
import reqwest_client
from clientbench.run.server import Server

REPO = Path(__file__).resolve().parents[2]
MODULES = {"beast": beast_client, "reqwest": reqwest_client}
UA_PREFIX = {"beast": "beast-client", "reqwest": "reqwest-client"}
#: the text of /charset/{name} (server-axum/src/client_api.rs CHARSET_TEXT)
CHARSET_TEXT = "Grüße aus Köln: café, naïve, ½ + ¼ = ¾\n"
#: a bound for requests that are expected to succeed
T = 20.0


@pytest.fixture(params=sorted(MODULES))
def mod(request: pytest.FixtureRequest) -> ModuleType:
    return MODULES[request.param]


@pytest.fixture()
def client(mod: ModuleType) -> Iterator[Any]:
    with mod.Client(timeout=T) as c:
        yield c


@pytest.fixture()
def make(mod: ModuleType) -> Iterator[Callable[..., Any]]:
    """`make(**options)`: a client of the module under test, closed after the test."""
    made: list[Any] = []

    def new(**kw: Any) -> Any:
        kw.setdefault("timeout", T)
        made.append(mod.Client(**kw))
        return made[-1]

    yield new
    for c in made:
        c.close()


def kind(mod: ModuleType) -> str:
    return "beast" if mod is beast_client else "reqwest"


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


def test_too_many_redirects(make: Callable[..., Any], mod: ModuleType, server: Server) -> None:
    c = make()
    assert c.request("GET", server.url + "/redirect/10").status == 200  # 10 hops: the default limit
    with pytest.raises(mod.TooManyRedirects) as e:
        c.request("GET", server.url + "/redirect/11")
    assert issubclass(mod.TooManyRedirects, OSError)
    assert "/redirect/1" in str(e.value)  # names the last URL
    c2 = make(max_redirects=2)
    assert c2.request("GET", server.url + "/redirect/2").status == 200
    with pytest.raises(mod.TooManyRedirects):
        c2.request("GET", server.url + "/redirect/3")


def test_follow_redirects_false(make: Callable[..., Any], server: Server) -> None:
    c = make()
    r = c.request("GET", server.url + "/redirect/2", follow_redirects=False)
    assert r.status == 302
    assert r.headers["location"] == "/redirect/1"
    assert r.url == server.url + "/redirect/2"
    c2 = make(follow_redirects=False)
    assert c2.request("GET", server.url + "/redirect/1").status == 302
    assert c2.request("GET", server.url + "/redirect/1", follow_redirects=True).status == 200


# -- compression ---------------------------------------------------------------------------------


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_gzip_and_deflate_are_decoded(client: Any, mod: ModuleType, server: Server, coding: str) -> None:
    r = client.request("GET", server.url + "/" + coding)
    assert r.status == 200
    assert r.json()["coding"] == coding
    if kind(mod) == "beast":
        assert r.headers["content-encoding"] == coding  # left as received
    else:
        assert "content-encoding" not in r.headers  # reqwest removes it from a decoded response
    sent = client.request("GET", server.url + "/headers").json()
    assert {"gzip", "deflate"} <= {c.strip() for c in sent["accept-encoding"][0].split(",")}


def test_decompress_false(make: Callable[..., Any], server: Server) -> None:
    c = make(decompress=False)
    r = c.request("GET", server.url + "/gzip")
    assert r.headers["content-encoding"] == "gzip"
    assert r.body[:2] == b"\x1f\x8b"  # as received
    assert "accept-encoding" not in c.request("GET", server.url + "/headers").json()


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


def test_invalid_url_and_arguments(client: Any, server: Server) -> None:
    for bad in ("not a url", "ftp://127.0.0.1/", "http:///x"):
        with pytest.raises(ValueError):
            client.request("GET", bad)
    with pytest.raises(TypeError):
        client.request("POST", server.url + "/anything", body=b"x", json={"a": 1})
    with pytest.raises(TypeError):
        client.request("POST", server.url + "/anything", body="str is not bytes")


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


def test_text_uses_the_charset(client: Any, server: Server) -> None:
    for name in ("iso-8859-1", "latin-1", "utf-8"):
        r = client.request("GET", server.url + "/charset/" + name)
        assert r.text() == CHARSET_TEXT, name
    r = client.request("GET", server.url + "/charset/latin1")
    assert len(r.body) == len(CHARSET_TEXT)  # one byte per character: not UTF-8 on the wire
    assert r.body.decode("utf-8", "replace") != CHARSET_TEXT


def test_json_request_and_response(client: Any, server: Server) -> None:
    r = client.request("POST", server.url + "/anything", json={"k": ["é", 1, None]})
    echo = r.json()
    assert echo["headers"]["content-type"] == ["application/json"]
    assert json.loads(echo["body"]) == {"k": ["é", 1, None]}
    r = client.request("PUT", server.url + "/anything", json=[1], headers={"content-type": "application/x-mine"})
    assert r.json()["headers"]["content-type"] == ["application/x-mine"]
    with pytest.raises(json.JSONDecodeError):
        client.request("GET", server.url + "/").json()


@pytest.mark.parametrize("body", [b"a\x00\xff", bytearray(b"a\x00\xff"), memoryview(b"xa\x00\xffx")[1:4]])
def test_bytes_like_bodies(client: Any, server: Server, body: Any) -> None:
    echo = client.request("POST", server.url + "/anything", body=body).json()
    assert echo["body_len"] == 3
    assert echo["body_encoding"] == "base64" and echo["body"] == "YQD/"


def test_user_agent(make: Callable[..., Any], mod: ModuleType, server: Server) -> None:
    url = server.url + "/headers"
    ua = make().request("GET", url).json()["user-agent"]
    assert ua == [f"{UA_PREFIX[kind(mod)]}/{mod.__version__}"]
    assert make(user_agent="mine/1").request("GET", url).json()["user-agent"] == ["mine/1"]
    c = make(user_agent="mine/1", headers={"User-Agent": "from-headers", "X-Default": "d"})
    got = c.request("GET", url).json()
    assert got["user-agent"] == ["from-headers"] and got["x-default"] == ["d"]
    got = c.request("GET", url, headers={"user-agent": "per-request", "x-default": "r"}).json()
    assert got["user-agent"] == ["per-request"] and got["x-default"] == ["r"]


# -- timeouts ------------------------------------------------------------------------------------


def test_total_timeout_per_request_and_client(make: Callable[..., Any], server: Server) -> None:
    c = make()
    with pytest.raises(TimeoutError):
        c.request("GET", server.url + "/delay/3000", timeout=0.3)
    assert c.request("GET", server.url + "/delay/10", timeout=5).status == 200
    with pytest.raises(TimeoutError):
        make(timeout=0.3).request("GET", server.url + "/delay/3000")
    # the total limit covers a body that keeps coming
    with pytest.raises(TimeoutError):
        c.request("GET", server.url + "/drip?bytes=10&duration_ms=3000", timeout=1.0)


def test_read_timeout(make: Callable[..., Any], server: Server) -> None:
    c = make(timeout=None, read_timeout=0.4)
    assert c.read_timeout == 0.4
    with pytest.raises(TimeoutError):
        c.request("GET", server.url + "/delay/3000")
    # bytes every 200 ms: the gap never reaches the read timeout, whatever the whole takes
    c2 = make(timeout=None, read_timeout=1.5)
    r = c2.request("GET", server.url + "/drip?bytes=10&duration_ms=2000")
    assert (r.status, r.body) == (200, b"*" * 10)


def test_slow_but_steady_download_with_the_defaults(mod: ModuleType, server: Server) -> None:
    with mod.Client() as c:  # no total timeout unless asked for
        assert c.timeout is None
        r = c.request("GET", server.url + "/drip?bytes=20&duration_ms=2500")
        assert (r.status, len(r.body)) == (200, 20)


# -- streaming -----------------------------------------------------------------------------------


def test_stream_one_mebibyte_in_chunks(client: Any, mod: ModuleType, server: Server) -> None:
    n = 1024 * 1024
    with client.stream("GET", server.url + f"/bytes/{n}") as s:
        assert isinstance(s, mod.StreamResponse)
        assert s.status == 200 and s.headers["content-length"] == str(n)
        sizes = [len(chunk) for chunk in s.iter_bytes()]
    assert len(sizes) > 1 and sum(sizes) == n
    assert s.closed


def test_stream_read_and_close_early(client: Any, server: Server) -> None:
    with client.stream("GET", server.url + "/stream/20") as s:
        lines = s.read().decode().splitlines()
    assert [json.loads(line)["id"] for line in lines] == list(range(20))
    with client.stream("GET", server.url + "/bytes/1048576") as s:
        first = next(iter(s.iter_bytes()))
        assert first
    assert s.closed
    assert client.request("GET", server.url + "/").status == 200  # the client goes on


def test_stream_follows_redirects_and_decodes(client: Any, server: Server) -> None:
    with client.stream("GET", server.url + "/redirect-to?url=/gzip") as s:
        assert s.url == server.url + "/gzip"
        body = b"".join(s.iter_bytes())
    assert json.loads(body)["coding"] == "gzip"


# -- the stubs -----------------------------------------------------------------------------------

STUBS = {
    "beast": REPO / "bindings/beast/src/beast_client/_core.pyi",
    "reqwest": REPO / "bindings/reqwest/python/reqwest_client/_core.pyi",
}
#: what the spec lets differ: reqwest's proxy options, and tls_info (reqwest cannot tell the cipher: None)
ALLOWED = {("Client", "__init__"), ("Client", "tls_info")}


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
    shared = ["Headers", "Response", "StreamResponse", "Client", "_BytesIterator"]
    for cls in shared:
        names_b = {m for c, m in beast if c == cls}
        names_r = {m for c, m in reqwest if c == cls}
        assert names_b - {"_connections_opened"} == names_r, cls
    for key in sorted(beast.keys() & reqwest.keys()):
        if key[0] in shared and key not in ALLOWED:
            assert beast[key] == reqwest[key], key
    # the constructor: the same parameters, and reqwest's two more
    init_b = beast[("Client", "__init__")]
    init_r = reqwest[("Client", "__init__")]
    assert init_r == init_b.replace(") -> ", ", trust_env: bool=True, proxy: str | None=None) -> ")
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
    assert aliases["beast"] == aliases["reqwest"]
