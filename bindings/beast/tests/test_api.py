"""beast_client's application API (issue 12): request() with params/headers/body/json, Response and Headers,
redirects, gzip/deflate, URL encoding, the User-Agent, timeouts, the connection pool, streaming, errors.

The server is Python's own http.server (HTTP/1.1, keep-alive) in a thread: software this project did not
write. Every test is bounded: the client timeouts are short and the server is shut down on every path."""

from __future__ import annotations

import collections.abc
import gzip
import json
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import beast_client
import pytest

BIG = bytes(range(256)) * 4096  # 1 MiB


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: App

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes = b"", headers: list[tuple[str, str]] | None = None) -> None:
        self.send_response(status)
        for name, value in headers or []:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _any(self) -> None:
        body = self._body()
        split = urlsplit(self.path)
        self.server.seen.append((self.command, self.path, self.headers.items(), body))
        path = split.path
        query = dict(parse_qsl(split.query))
        if path.startswith("/redirect/"):
            n = int(path.rsplit("/", 1)[1])
            self._send(302, b"", [("Location", f"/redirect/{n - 1}" if n > 1 else "/anything")])
        elif path == "/redirect-to":
            self._send(int(query.get("status", "302")), b"moved", [("Location", query["url"])])
        elif path == "/gzip":
            self._send(200, gzip.compress(BIG), [("Content-Encoding", "gzip")])
        elif path == "/deflate":
            self._send(200, zlib.compress(BIG), [("Content-Encoding", "deflate")])
        elif path == "/cookies":
            self._send(200, b"", [("Set-Cookie", "a=1; Path=/"), ("X-One", "1"), ("Set-Cookie", "b=2, c=3")])
        elif path == "/latin1":
            self._send(200, "café".encode("latin-1"), [("Content-Type", "text/plain; charset=ISO-8859-1")])
        elif path == "/stream":
            # chunked, in 64 KiB pieces, each flushed
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(BIG), 65536):
                piece = BIG[i : i + 65536]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/hang":
            self.server.stop.wait(10)  # answers nothing until the test ends (bounded)
            self.close_connection = True
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "8")
            self.end_headers()
            for _ in range(8):
                self.wfile.write(b"x")
                self.wfile.flush()
                if self.server.stop.wait(0.05):
                    return
        else:  # /anything: the request as JSON
            out = {
                "method": self.command,
                "path": self.path,
                "headers": [[k.lower(), v] for k, v in self.headers.items()],
                "body": body.decode("latin-1"),
            }
            self._send(200, json.dumps(out).encode(), [("Content-Type", "application/json")])

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any


class App(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.seen: list[tuple[str, str, list[tuple[str, str]], bytes]] = []
        self.stop = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture()
def app() -> Iterator[App]:
    srv = App()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.stop.set()
        srv.shutdown()
        srv.server_close()
        thread.join(10)


def echoed(r: beast_client.Response) -> dict:
    return r.json()


def header_of(doc: dict, name: str) -> list[str]:
    return [v for k, v in doc["headers"] if k == name]


# ---- request(), Response, Headers -------------------------------------------------------------------


def test_module_exports() -> None:
    for name in ("Client", "Headers", "Response", "StreamResponse", "TooManyRedirects", "ProtocolError"):
        assert name in beast_client.__all__
    assert issubclass(beast_client.TooManyRedirects, OSError)
    assert beast_client.TooManyRedirects.__module__ == "beast_client"
    assert issubclass(beast_client.Headers, collections.abc.Mapping)


def test_request_params_headers_json(app: App) -> None:
    with beast_client.Client(timeout=5, headers={"X-Default": "d", "X-Over": "client"}) as c:
        r = c.request(
            "POST",
            app.url + "/anything?x=1",
            params={"q": "café au lait", "n": 2, "f": 1.5, "l": ["a", "b"], "skip": None},
            headers=[("X-Over", "request"), ("X-Rep", "1"), ("X-Rep", "2")],
            json={"k": ["v", 1]},
        )
        assert r.status == 200 and r.reason == "OK"
        assert repr(r) == "<Response [200]>"
        doc = echoed(r)
        assert doc["path"] == "/anything?x=1&q=caf%C3%A9%20au%20lait&n=2&f=1.5&l=a&l=b"
        assert r.url == app.url + doc["path"]
        assert header_of(doc, "x-default") == ["d"]
        assert header_of(doc, "x-over") == ["request"]
        assert header_of(doc, "x-rep") == ["1", "2"]
        assert header_of(doc, "content-type") == ["application/json"]
        assert header_of(doc, "user-agent") == [f"beast-client/{beast_client.__version__}"]
        assert header_of(doc, "accept-encoding") == ["gzip, deflate"]
        assert json.loads(doc["body"]) == {"k": ["v", 1]}
        # the caller's Content-Type wins over the json default
        doc = echoed(c.request("POST", app.url + "/anything", json=[1], headers={"content-type": "text/x"}))
        assert header_of(doc, "content-type") == ["text/x"]


def test_body_kinds(app: App, tmp_path) -> None:
    import array
    import io

    with beast_client.Client(timeout=5) as c:
        for body, expected in (
            (b"abc", "abc"),
            (bytearray(b"abc"), "abc"),
            (memoryview(b"xabc")[1:], "abc"),
            (array.array("B", b"abc"), "abc"),
            ([b"a", bytearray(b"b"), memoryview(b"c")], "abc"),
            (io.BytesIO(b"abc"), "abc"),
            (iter([b"ab", b"c"]), "abc"),
        ):
            doc = echoed(c.request("PUT", app.url + "/anything", body=body))
            assert doc["body"] == expected, body
            assert header_of(doc, "content-length") == ["3"]
        p = tmp_path / "f.bin"
        p.write_bytes(b"\x00\xff" * 10)
        with open(p, "rb") as f:
            assert echoed(c.request("PUT", app.url + "/anything", body=f))["body"] == "\x00\xff" * 10


def test_argument_errors(app: App) -> None:
    with beast_client.Client(timeout=5) as c:
        with pytest.raises(TypeError):
            c.request("POST", app.url + "/anything", body=b"x", json={})
        with pytest.raises(TypeError):
            c.request("POST", app.url + "/anything", body="text")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            c.request("POST", app.url + "/anything", body=[b"a", "b"])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            c.request("GET", app.url + "/anything", params={"a": b"x"})  # type: ignore[dict-item]
        with pytest.raises(TypeError):
            c.request("GET", app.url + "/anything", params=[("a",)])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            c.request("GET", app.url + "/anything", headers=[("a", 1)])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            c.request("GET", app.url + "/anything", json=object())
        with pytest.raises(TypeError):
            c.request("GET", app.url + "/anything", timeout="1")  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            c.request("GET", app.url + "/anything", timeout=0)
        with pytest.raises(ValueError):
            c.request("GET", "ftp://x/")
        with pytest.raises(ValueError):
            c.request("GET", "http:///nohost")
        with pytest.raises(ValueError):
            c.request("GET", "http://ex ample.org/")  # a space in the host is not encoded
        assert c.request("GET", app.url + "/anything").status == 200  # still usable
    for kwargs in ({"connect_timeout": 0}, {"read_timeout": -1}, {"max_redirects": -1}, {"timeout": float("nan")}):
        with pytest.raises(ValueError):
            beast_client.Client(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        beast_client.Client(headers={"a": 1})  # type: ignore[dict-item]


def test_headers_mapping(app: App) -> None:
    with beast_client.Client(timeout=5) as c:
        r = c.request("GET", app.url + "/cookies")
    h = r.headers
    assert h is r.headers
    assert isinstance(h, beast_client.Headers) and isinstance(h, collections.abc.Mapping)
    assert h.get_all("Set-Cookie") == ["a=1; Path=/", "b=2, c=3"]
    assert h["set-cookie"] == "a=1; Path=/, b=2, c=3"
    assert h.get("X-ONE") == "1" and h.get("missing") is None and h.get("missing", "d") == "d"
    assert "SET-COOKIE" in h and "nope" not in h and 1 not in h
    with pytest.raises(KeyError):
        h["nope"]
    names = list(h)
    assert names[0] == "server" or "set-cookie" in names
    assert len(h) == len(set(names)) == len(names)
    assert [v for k, v in h.multi_items() if k == "set-cookie"] == ["a=1; Path=/", "b=2, c=3"]
    assert dict(h.items())["x-one"] == "1" and list(h.keys()) == names and len(h.values()) == len(h)
    assert h == {k.upper(): v for k, v in h.items()}
    assert h != {"x-one": "1"} and h != 1
    assert beast_client.Headers([("A", "1"), ("a", "2")]).get_all("A") == ["1", "2"]
    assert beast_client.Headers({"A": "1"}) == beast_client.Headers([("a", "1")])
    assert "set-cookie" in repr(h)
    with pytest.raises(TypeError):
        hash(h)


def test_text_and_json(app: App) -> None:
    with beast_client.Client(timeout=5) as c:
        assert c.request("GET", app.url + "/latin1").text() == "café"
        r = c.request("GET", app.url + "/anything")
        assert r.json()["method"] == "GET"
        assert r.text().startswith("{")
        with pytest.raises(json.JSONDecodeError):
            c.request("GET", app.url + "/gzip").json()


# ---- redirects --------------------------------------------------------------------------------------


def test_redirects_followed_by_default(app: App) -> None:
    with beast_client.Client(timeout=5) as c:
        r = c.request("GET", app.url + "/redirect/3")
        assert r.status == 200 and r.url == app.url + "/anything"
        assert c._connections_opened == 1
        r = c.request("GET", app.url + "/redirect/3", follow_redirects=False)
        assert r.status == 302 and r.headers["location"] == "/redirect/2"
    with beast_client.Client(timeout=5, follow_redirects=False) as c:
        assert c.request("GET", app.url + "/redirect/1").status == 302
        assert c.request("GET", app.url + "/redirect/1", follow_redirects=True).status == 200


def test_redirect_methods_and_bodies(app: App) -> None:
    with beast_client.Client(timeout=5) as c:
        for status, method in ((301, "GET"), (302, "GET"), (303, "GET"), (307, "POST"), (308, "POST")):
            r = c.request("POST", app.url + f"/redirect-to?url=/anything&status={status}", body=b"data")
            doc = echoed(r)
            assert doc["method"] == method, status
            assert doc["body"] == ("data" if method == "POST" else ""), status
        doc = app.seen[-1]
        assert doc[0] == "POST"
        r = c.request("HEAD", app.url + "/redirect-to?url=/anything&status=303")
        assert r.status == 200 and app.seen[-1][0] == "HEAD"


def test_too_many_redirects(app: App) -> None:
    with beast_client.Client(timeout=5, max_redirects=2) as c:
        with pytest.raises(beast_client.TooManyRedirects, match="/redirect/1"):
            c.request("GET", app.url + "/redirect/3")
        assert c.request("GET", app.url + "/redirect/2").status == 200


def test_authorization_dropped_across_hosts(app: App) -> None:
    other = app.url.replace("127.0.0.1", "localhost") + "/anything"
    with beast_client.Client(timeout=5) as c:
        h = {"Authorization": "Bearer x", "Cookie": "a=1", "X-Keep": "k"}
        doc = echoed(c.request("GET", app.url + "/redirect-to", params={"url": other}, headers=h))
        assert header_of(doc, "authorization") == [] and header_of(doc, "cookie") == []
        assert header_of(doc, "x-keep") == ["k"]
        doc = echoed(c.request("GET", app.url + "/redirect-to?url=/anything", headers=h))
        assert header_of(doc, "authorization") == ["Bearer x"]


def test_redirect_to_unsupported_scheme_is_a_protocol_error(app: App) -> None:
    with beast_client.Client(timeout=5) as c:
        with pytest.raises(beast_client.ProtocolError):
            c.request("GET", app.url + "/redirect-to?url=ftp://example.org/")


# ---- decompression, URLs ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/gzip", "/deflate"])
def test_decompression(app: App, path: str) -> None:
    with beast_client.Client(timeout=5) as c:
        r = c.request("GET", app.url + path)
        assert r.body == BIG
        assert r.headers["content-encoding"] in ("gzip", "deflate")  # as received
        assert int(r.headers["content-length"]) < len(BIG)
    with beast_client.Client(timeout=5, decompress=False) as c:
        r = c.request("GET", app.url + path)
        assert r.body != BIG and len(r.body) == int(r.headers["content-length"])
        assert all(k.lower() != "accept-encoding" for k, _ in app.seen[-1][2])


def test_get_stays_lean(app: App) -> None:
    with beast_client.Client(timeout=5) as c:
        assert c.fetch_len(app.url + "/gzip")[1] == len(gzip.compress(BIG))  # not decoded
        assert all(k.lower() != "accept-encoding" for k, _ in app.seen[-1][2])
        assert c.get(app.url + "/redirect/1") == 302  # not followed


def test_url_encoding(app: App) -> None:
    with beast_client.Client(timeout=5) as c:
        doc = echoed(c.request("GET", app.url + "/any thing/é?q=a b&e=%41é#frag"))
        assert doc["path"] == "/any%20thing/%C3%A9?q=a%20b&e=%41%C3%A9"


def test_user_agent(app: App) -> None:
    with beast_client.Client(timeout=5, user_agent="mine/1") as c:
        assert header_of(echoed(c.request("GET", app.url + "/anything")), "user-agent") == ["mine/1"]
        doc = echoed(c.request("GET", app.url + "/anything", headers={"User-Agent": "theirs"}))
        assert header_of(doc, "user-agent") == ["theirs"]


# ---- timeouts -----------------------------------------------------------------------------------------


def test_read_timeout(app: App) -> None:
    with beast_client.Client(read_timeout=0.2) as c:
        assert c.timeout is None and c.read_timeout == 0.2 and c.connect_timeout == 10.0
        with pytest.raises(TimeoutError, match="read timeout"):
            c.request("GET", app.url + "/hang")


def test_total_timeout_per_request(app: App) -> None:
    with beast_client.Client(read_timeout=None) as c:
        with pytest.raises(TimeoutError, match="timed out after"):
            c.request("GET", app.url + "/hang", timeout=0.2)


def test_slow_steady_body_needs_no_total_timeout(app: App) -> None:
    with beast_client.Client(read_timeout=2.0) as c:
        assert c.request("GET", app.url + "/drip").body == b"x" * 8


# ---- the pool -----------------------------------------------------------------------------------------


def test_pool_keeps_one_connection_per_host(app: App) -> None:
    port = app.server_address[1]
    with beast_client.Client(timeout=5) as c:
        for i in range(10):
            host = "localhost" if i % 2 else "127.0.0.1"
            assert c.get(f"http://{host}:{port}/anything") == 200
        assert c._connections_opened == 2


# ---- streaming ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/stream", "/gzip"])
def test_stream_in_chunks(app: App, path: str) -> None:
    with beast_client.Client(timeout=10) as c:
        with c.stream("GET", app.url + path) as s:
            assert isinstance(s, beast_client.StreamResponse)
            assert s.status == 200 and s.url == app.url + path and s.reason == "OK"
            assert isinstance(s.headers, beast_client.Headers)
            chunks = list(s.iter_bytes())
        assert s.closed
        assert len(chunks) > 1 and all(chunks)
        assert b"".join(chunks) == BIG
        assert c.get(app.url + "/anything") == 200
        assert c._connections_opened == 1  # read to the end: the connection was re-used


def test_stream_read_and_early_close(app: App) -> None:
    with beast_client.Client(timeout=10) as c:
        with c.stream("GET", app.url + "/stream") as s:
            first = next(iter(s.iter_bytes()))
            assert first and len(first) < len(BIG)
            assert len(s.read()) == len(BIG) - len(first)
        with c.stream("POST", app.url + "/stream", json={}) as s:
            next(s.iter_bytes())
        assert list(s.iter_bytes()) == []  # closed: nothing more
        assert c.get(app.url + "/anything") == 200
        assert c._connections_opened == 2  # closed before the end: not re-used
        with pytest.raises(beast_client.TooManyRedirects):
            c.stream("GET", app.url + "/redirect/20")


def test_stream_read_timeout_between_chunks(app: App) -> None:
    with beast_client.Client(read_timeout=0.2) as c:
        with pytest.raises(TimeoutError):
            c.stream("GET", app.url + "/hang")


# ---- errors -------------------------------------------------------------------------------------------


def test_connection_refused(closed_port_url: str) -> None:
    with beast_client.Client(timeout=5) as c:
        with pytest.raises(ConnectionRefusedError):
            c.request("GET", closed_port_url)
        with pytest.raises(ConnectionRefusedError):
            c.stream("GET", closed_port_url)
