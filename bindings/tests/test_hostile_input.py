"""One behaviour on hostile input, in every binding client (beast_client.Client, reqwest_client.Client and
both AsyncClients; docs/binding-api.md, "Hostile input"):
- a control character (CR, LF, NUL, any of U+0000-U+001F and U+007F) anywhere in a URL, and CR, LF or NUL
  in a method, a header name or value (default ones included) is a ValueError before anything is sent: the
  raw server sees no connection at all;
- a redirect whose Location cannot be followed (another scheme, a URL that does not parse, no host, a bad
  port, a control character) is a ProtocolError, and nothing is requested from where it points;
- Authorization, Cookie and Proxy-Authorization are dropped when a redirect changes the origin (another host,
  port or scheme: an https -> http downgrade on the same host and port included) and kept on a same-origin one.
Every request is bounded in time."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from support.dualserver import DualHandler, DualServer, answer_url, scripted
from support.rawserver import RawServer

T = 10.0


def stream_read(c: Any, method: str, url: str, **kw: Any) -> tuple[int, bytes]:
    if hasattr(c, "stream_read"):
        return c.stream_read(method, url, **kw)  # type: ignore[no-any-return]
    with c.stream(method, url, **kw) as s:
        return s.status, s.read()


def calls(c: Any, url: str) -> list[tuple[str, Callable[[], Any]]]:
    """Every way of sending a GET to `url`."""
    return [
        ("get", lambda: c.get(url)),
        ("fetch_len", lambda: c.fetch_len(url)),
        ("fetch", lambda: c.fetch(url)),
        ("request", lambda: c.request("GET", url)),
        ("stream", lambda: stream_read(c, "GET", url)),
    ]


def assert_nothing_arrived(srv: RawServer) -> None:
    assert srv.accepted == 0 and srv.heads == [], srv.heads


# -- control characters: ValueError before anything is sent -------------------------------------------

URL_INJECTIONS = [
    "http://u\r\nX-Injected: 1@127.0.0.1:{port}/",  # user info
    "http://127.0.0.1\r\n:{port}/",  # host
    "http://127.0.0.1:{port}\n/",  # port
    "http://127.0.0.1:{port}/a\r\nX-Injected: 1",  # path
    "http://127.0.0.1:{port}/a?q=1\r\nX-Injected: 1",  # query
    "http://127.0.0.1:{port}/a#f\r\nx",  # fragment
    "http://127.0.0.1:{port}/a\x00b",
    "http://127.0.0.1:{port}/a\rb",
    "http://127.0.0.1:{port}/a\tb",
    "http://127.0.0.1:{port}/a\x01b",
    "http://127.0.0.1:{port}/a\x7fb",
    "ht\rtp://127.0.0.1:{port}/",  # scheme
    "\nhttp://127.0.0.1:{port}/",
    "http://127.0.0.1:{port}/\r\n",
]


@pytest.mark.parametrize("template", URL_INJECTIONS, ids=repr)
def test_a_control_character_in_a_url_is_value_error(new: Callable[..., Any], capture: RawServer, template: str):
    c = new()
    url = template.format(port=capture.port)
    for name, call in calls(c, url):
        with pytest.raises(ValueError):
            call()
            pytest.fail(f"{name} accepted {url!r}")
    assert_nothing_arrived(capture)
    assert c.request("GET", capture.url + "/").status == 200  # still usable


@pytest.mark.parametrize("method", ["GET\r\nX-Injected: 1", "GE\nT", "GET\x00", "GET /x HTTP/1.1\r\n", "\rGET"])
def test_a_control_character_in_a_method_is_value_error(new: Callable[..., Any], capture: RawServer, method: str):
    c = new()
    url = capture.url + "/"
    for call in (
        lambda: c.request(method, url),
        lambda: c.fetch(url, method=method, body=b"x"),
        lambda: stream_read(c, method, url),
    ):
        with pytest.raises(ValueError):
            call()
    assert_nothing_arrived(capture)


HEADER_INJECTIONS = [
    {"X-A": "1\r\nX-Injected: 1"},
    {"X-A": "1\nX-Injected: 1"},
    {"X-A": "1\rX-Injected: 1"},
    {"X-A": "1\x00"},
    {"X-A\r\nX-Injected": "1"},
    {"X-A\x00": "1"},
    {"Cookie": "a=1\r\nX-Injected: 1"},
]


@pytest.mark.parametrize("headers", HEADER_INJECTIONS, ids=repr)
def test_a_control_character_in_a_header_is_value_error(
    new: Callable[..., Any], capture: RawServer, headers: dict[str, str]
) -> None:
    c = new()
    url = capture.url + "/"
    with pytest.raises(ValueError):
        c.request("POST", url, headers=headers, body=b"x")
    with pytest.raises(ValueError):
        stream_read(c, "GET", url, headers=headers)
    # as the client's default headers: refused when the client is made
    with pytest.raises(ValueError):
        new(headers=headers)
    assert_nothing_arrived(capture)


@pytest.mark.parametrize("agent", ["x\r\nX-Injected: 1", "x\n", "x\x00"], ids=repr)
def test_a_control_character_in_the_user_agent_is_value_error(new: Callable[..., Any], agent: str) -> None:
    with pytest.raises(ValueError):
        new(user_agent=agent)


# -- redirects that cannot be followed: ProtocolError ---------------------------------------------------

BAD_LOCATIONS = [
    "ftp://127.0.0.1/",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "mailto:a@example.org",
    "data:,x",
    "ws://127.0.0.1/",
    "http://[::1",
    "http://127.0.0.1:99999/",
    "http://127.0.0.1:0/",
    "http://",
    "/a\tb",
]


@pytest.fixture()
def app(raw_server: Callable[..., RawServer]) -> RawServer:
    """The scripted application (support/dualserver.py) over plain HTTP."""
    return raw_server(lambda conn: scripted(conn, False))


@pytest.mark.parametrize("location", BAD_LOCATIONS, ids=repr)
@pytest.mark.parametrize("status", [302, 307])
def test_a_redirect_that_cannot_be_followed_is_a_protocol_error(
    new: Callable[..., Any], mod: ModuleType, app: RawServer, location: str, status: int
) -> None:
    c = new()
    url = answer_url(app.url, status, location)
    with pytest.raises(mod.ProtocolError) as e:
        c.request("GET", url)
    assert not isinstance(e.value, getattr(mod, "BodyTooLarge", ()))
    with pytest.raises(mod.ProtocolError):
        stream_read(c, "GET", url)
    assert len(app.heads) == 2  # the redirect itself, twice; nothing where it points
    r = c.request("GET", url, follow_redirects=False)
    assert (r.status, r.headers.get_all("location")) == (status, [location])
    assert c.request("GET", app.url + "/").status == 200  # still usable


# -- credentials across origins ---------------------------------------------------------------------

SECRETS = {"Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic cHJveHk="}
CREDENTIALS = {name.lower() for name in SECRETS}


def sent(r: Any) -> dict[str, list[str]]:
    assert r.status == 200, (r.status, r.url)
    return r.json()["headers"]  # type: ignore[no-any-return]


def test_credentials_kept_on_a_same_origin_redirect(new: Callable[..., Any], dual: DualServer) -> None:
    for scheme in ("http", "https"):
        base = dual.origin(scheme)
        c = new(verify=dual.ca_file)
        for location in ("/echo", base + "/echo", base.replace("localhost", "LOCALHOST") + "/echo"):
            got = sent(c.request("GET", answer_url(base, 302, location), headers={**SECRETS, "X-Other": "1"}))
            for name, value in SECRETS.items():
                assert got[name.lower()] == [value], (scheme, location)
            assert got["x-other"] == ["1"]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_credentials_dropped_on_an_https_to_http_downgrade(
    new: Callable[..., Any], dual: DualServer, status: int
) -> None:
    """The same host and port, only the scheme changes."""
    c = new(verify=dual.ca_file)
    url = answer_url(dual.origin("https"), status, dual.origin("http") + "/echo")
    r = c.request("GET", url, headers={**SECRETS, "X-Other": "1"})
    assert r.json()["tls"] is False and r.url == dual.origin("http") + "/echo"
    got = sent(r)
    assert not CREDENTIALS & got.keys(), got
    assert got["x-other"] == ["1"]


def test_credentials_dropped_when_the_origin_changes(
    new: Callable[..., Any], dual_server: Callable[[DualHandler], DualServer]
) -> None:
    first, other = dual_server(scripted), dual_server(scripted)
    c = new(verify=first.ca_file)
    defaults = new(verify=first.ca_file, headers=SECRETS)  # default headers are dropped too
    for start, target in (
        (first.origin("http", "127.0.0.1"), first.origin("http", "localhost")),  # another host
        (first.origin("http"), other.origin("http")),  # another port
        (first.origin("http"), first.origin("https")),  # another scheme (an upgrade)
        (first.origin("https"), other.origin("https")),
    ):
        url = answer_url(start, 302, target + "/echo")
        got = sent(c.request("GET", url, headers={**SECRETS, "X-Other": "1"}))
        assert not CREDENTIALS & got.keys(), (start, target, got)
        assert got["x-other"] == ["1"]
        assert not CREDENTIALS & sent(defaults.request("GET", url)).keys()
        # and kept when the same request is not redirected
        assert CREDENTIALS <= sent(c.request("GET", target + "/echo", headers=SECRETS)).keys()
