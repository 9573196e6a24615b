"""Proxies, for every binding client (docs/binding-api.md, "Proxies"), through a proxy nobody here wrote: Debian's
tinyproxy (make test-deps), started by these tests with a configuration of their own on a free port and stopped on
every path. http:// requests go to it in absolute form (it adds its Via header to what it forwards), https:// ones
through a CONNECT tunnel (the server's certificate checked through it, the proxy never sees the request); its
credentials (BasicAuth: a 407 without them, a ConnectionError for a tunnel); the environment (trust_env:
HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, lower-case too) and proxy=, which wins over it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.binding_clients import binding_of

T = 10.0
USER, PASSWORD = "user", "pass-w0rd"  # what tinyproxy takes; its "-" percent-encoded in the proxy URL
PROXY_VARS = tuple(v for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY") for v in (name, name.lower()))


class Tinyproxy:
    """tinyproxy in the foreground (-d) on 127.0.0.1:<a free port>, logging every request it reads."""

    def __init__(self, folder: Path, credentials: bool):
        self.folder = folder
        self.credentials = credentials
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url_with_credentials(self) -> str:
        return f"http://{USER}:{PASSWORD.replace('-', '%2D')}@127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = shutil.which("tinyproxy")
        if binary is None:
            pytest.skip("tinyproxy is not installed (make test-deps)")
        for _ in range(3):  # a free port, unless another process takes it first
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
            conf = self.folder / "tinyproxy.conf"
            lines = [
                f"Port {self.port}",
                "Listen 127.0.0.1",
                "Timeout 30",
                f'LogFile "{self.folder / "tinyproxy.log"}"',
                "LogLevel Connect",
                f'PidFile "{self.folder / "tinyproxy.pid"}"',
                "MaxClients 64",
                "Allow 127.0.0.1",
            ]
            if self.credentials:
                lines.append(f"BasicAuth {USER} {PASSWORD}")
            conf.write_text("\n".join(lines) + "\n")
            with open(self.folder / "tinyproxy.out", "wb") as out:
                self.proc = subprocess.Popen(
                    [binary, "-d", "-c", str(conf)], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
                time.sleep(0.05)
            self.stop()
        pytest.fail("tinyproxy did not start: " + (self.folder / "tinyproxy.out").read_text(errors="replace")[-2000:])

    def stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        self.proc = None

    def requests(self) -> list[str]:
        """The request lines it has read so far ("GET http://... HTTP/1.1", "CONNECT host:port HTTP/1.1")."""
        log = self.folder / "tinyproxy.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return [line.split("): ", 1)[1] for line in text.splitlines() if "Request (file descriptor" in line]


@contextlib.contextmanager
def running(folder: Path, credentials: bool) -> Iterator[Tinyproxy]:
    proxy = Tinyproxy(folder, credentials)
    try:
        proxy.start()
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture(scope="module")
def open_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tinyproxy]:
    with running(tmp_path_factory.mktemp("tinyproxy"), credentials=False) as p:
        yield p


@pytest.fixture(scope="module")
def auth_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tinyproxy]:
    with running(tmp_path_factory.mktemp("tinyproxy-auth"), credentials=True) as p:
        yield p


@pytest.fixture(autouse=True)
def no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clients are made with no proxy variable in the environment but those the test sets."""
    for name in (*PROXY_VARS, "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)


def via(client: Any, server: Server) -> str | None:
    """The Via header the server got from `client`'s request, if any (tinyproxy adds one)."""
    vias = client.request("GET", server.url + "/headers").json().get("via")
    return vias[0] if vias else None


def test_http_goes_through_the_proxy_in_absolute_form(new: Callable[..., Any], open_proxy: Tinyproxy, server: Server):
    c = new(proxy=open_proxy.url)
    before = len(open_proxy.requests())
    assert "tinyproxy" in (via(c, server) or "")
    assert c.get(server.url + "/bytes/10") == 200  # the benchmark path too
    # a client of its own: tinyproxy closes every connection after its answer, unannounced, and a POST is not
    # sent twice (beast_client checks a connection before such a request: cpp-beast/tests/test_upload.cpp)
    assert new(proxy=open_proxy.url).fetch(server.url + "/echo", method="POST", body=b"up") == (200, b"up")
    assert open_proxy.requests()[before:] == [
        f"GET {server.url}/headers HTTP/1.1",
        f"GET {server.url}/bytes/10 HTTP/1.1",
        f"POST {server.url}/echo HTTP/1.1",
    ]


def test_https_goes_through_a_tunnel(new: Callable[..., Any], open_proxy: Tinyproxy, tls_server: Server) -> None:
    c = new(proxy=open_proxy.url, verify=tls_server.ca_file)
    before = len(open_proxy.requests())
    r = c.request("GET", tls_server.url + "/headers")
    assert r.status == 200 and "via" not in r.json()  # inside the tunnel: the proxy saw no request
    assert c.get(tls_server.url + "/") == 200
    if binding_of(c.kind) == "beast":  # the server's handshake (reqwest tells none for a tunnel: a difference)
        assert c.tls_info and c.tls_info["version"] in ("TLSv1.2", "TLSv1.3")
    tunnels = [line for line in open_proxy.requests()[before:] if line.startswith("CONNECT ")]
    authority = tls_server.url.removeprefix("https://")
    assert tunnels and all(line.startswith(f"CONNECT {authority} ") for line in tunnels), tunnels
    # the test CA is checked through the tunnel: without it, a TLSError
    with pytest.raises(ConnectionError):
        new(proxy=open_proxy.url).get(tls_server.url + "/")


def test_credentials(new: Callable[..., Any], auth_proxy: Tinyproxy, server: Server, tls_server: Server) -> None:
    c = new(proxy=auth_proxy.url_with_credentials, verify=tls_server.ca_file)
    assert "tinyproxy" in (via(c, server) or "")
    assert c.get(tls_server.url + "/") == 200
    anonymous = new(proxy=auth_proxy.url, verify=tls_server.ca_file)
    assert anonymous.request("GET", server.url + "/").status == 407  # the proxy's answer, returned as any
    with pytest.raises(ConnectionError):  # a tunnel the proxy refuses
        anonymous.get(tls_server.url + "/")


def test_the_environment(
    new: Callable[..., Any], open_proxy: Tinyproxy, server: Server, tls_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trust_env=True (the default) reads the proxy variables when the client is made; NO_PROXY goes direct;
    trust_env=False ignores them; proxy= wins over them, NO_PROXY included."""
    assert via(new(), server) is None
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, open_proxy.url)
        assert "tinyproxy" in (via(new(), server) or ""), name
        assert via(new(trust_env=False), server) is None, name
        monkeypatch.delenv(name)
    monkeypatch.setenv("HTTP_PROXY", open_proxy.url)
    monkeypatch.setenv("no_proxy", "localhost, 127.0.0.0/8")
    assert via(new(), server) is None  # NO_PROXY: direct
    assert "tinyproxy" in (via(new(proxy=open_proxy.url), server) or "")  # proxy= alone, whatever NO_PROXY says
    monkeypatch.delenv("no_proxy")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nobody there: http:// fails, https:// goes by
    monkeypatch.setenv("HTTPS_PROXY", open_proxy.url)
    before = len(open_proxy.requests())
    c = new(verify=tls_server.ca_file)
    assert c.get(tls_server.url + "/") == 200
    assert any(line.startswith("CONNECT ") for line in open_proxy.requests()[before:])
    with pytest.raises(ConnectionError):
        c.get(server.url + "/")


def test_proxies_that_cannot_be_used(new: Callable[..., Any], closed_port_url: str) -> None:
    with pytest.raises(ValueError):
        new(proxy="not a url")
    with pytest.raises(TypeError):
        new(proxy=8080)
    c = new(proxy=closed_port_url.rstrip("/"))
    with pytest.raises(ConnectionError):
        c.get("http://upstream.invalid/")
