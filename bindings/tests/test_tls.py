"""HTTPS with every binding client (beast_client.Client, reqwest_client.Client and both AsyncClients):
verification against a CA file (str or Path), the system's roots and verify=False, tls_info, keep-alive over
TLS, session resumption (TLS 1.2 and 1.3), a certificate for another name, an expired one, the wrong scheme
either way, and a silent server during the handshake.

Servers: the project's axum server with `--tls` (its throw-away CA), Python `ssl` + `http.server` servers with
certificates made here with the `openssl` CLI (one for another host name, one expired), and Debian's nginx
with a certificate of that CA (support/nginx.py). The drivers over TLS are tested in python/tests/test_tls.py.
"""

from __future__ import annotations

import http.server
import json
import shutil
import ssl
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from clientbench.execution.server import Server
from support.nginx import curl, missing, running
from support.rawserver import Conn

HELLO = b"Hello, World!"
#: the clients' default timeout
T = 5.0


def fetch(server: Server, path: str) -> bytes:
    with urllib.request.urlopen(server.url + path, context=server.context(), timeout=10) as r:
        return r.read()


def stats(server: Server) -> dict[str, int]:
    return json.loads(fetch(server, "/stats"))


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA (ca.pem) and three leaves it signed: good.pem (127.0.0.1 and localhost, valid now), other.pem
    (SAN DNS:other.example only) and expired.pem (127.0.0.1 and localhost, valid in January 2020 only); one
    key, leaf.key."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI is not installed")
    d = tmp_path_factory.mktemp("pki")
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=clientbench test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d,
    )  # fmt: skip
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=leaf", cwd=d
    )
    (d / "other.cnf").write_text("subjectAltName=DNS:other.example\nbasicConstraints=CA:FALSE\n")
    _openssl(
        "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "other.pem", "-days", "2", "-extfile", "other.cnf", cwd=d,
    )  # fmt: skip
    (d / "good.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
    _openssl(
        "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "good.pem", "-days", "2", "-extfile", "good.cnf", cwd=d,
    )  # fmt: skip
    # OpenSSL 3.0's `x509` has no -not_before/-not_after and refuses negative -days: `openssl ca` takes dates
    db = d / "db"
    db.mkdir()
    (db / "index.txt").write_text("")
    (db / "serial").write_text("1000\n")
    (d / "ca.cnf").write_text(
        f"[ca]\ndefault_ca = c\n[c]\ndir = {db}\ndatabase = $dir/index.txt\nserial = $dir/serial\n"
        f"new_certs_dir = $dir\ncertificate = {d / 'ca.pem'}\nprivate_key = {d / 'ca.key'}\ndefault_md = sha256\n"
        "policy = p\ncopy_extensions = none\nx509_extensions = e\n[p]\ncommonName = supplied\n"
        "[e]\nsubjectAltName = IP:127.0.0.1,DNS:localhost\nbasicConstraints = CA:FALSE\n"
    )
    _openssl(
        "ca", "-batch", "-config", "ca.cnf", "-in", "leaf.csr", "-out", "expired.pem", "-notext",
        "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", cwd=d,
    )  # fmt: skip
    return d


class _Hello(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.send_response(200)
        self.send_header("Content-Length", str(len(HELLO)))
        self.end_headers()
        self.wfile.write(HELLO)

    def log_message(self, *args: object) -> None:
        pass


class _TLSHTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, ctx: ssl.SSLContext):
        super().__init__(("127.0.0.1", 0), _Hello)
        self.ctx = ctx

    def finish_request(self, request: Any, client_address: Any) -> None:
        # the handshake on the handler's thread: a failing client never blocks the accept loop
        request.settimeout(5)
        try:
            tls = self.ctx.wrap_socket(request, server_side=True)
        except OSError:
            return
        try:
            super().finish_request(tls, client_address)
        finally:
            tls.close()


@pytest.fixture(scope="module")
def py_tls_server(pki: Path) -> Iterator[Callable[[str], str]]:
    """`py_tls_server("other" | "expired")`: the https:// URL of a Python ssl server with that leaf."""
    servers: dict[str, _TLSHTTPServer] = {}
    threads: list[threading.Thread] = []

    def start(leaf: str) -> str:
        if leaf not in servers:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(pki / f"{leaf}.pem", pki / "leaf.key")
            servers[leaf] = srv = _TLSHTTPServer(ctx)
            threads.append(threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True))
            threads[-1].start()
        return f"https://127.0.0.1:{servers[leaf].server_address[1]}/"

    yield start
    for srv in servers.values():
        srv.shutdown()
        srv.server_close()
    for t in threads:
        t.join(5)


# -- 1. success, tls_info, keep-alive ------------------------------------------------------------------
@pytest.mark.parametrize("as_path", [False, True], ids=["str", "Path"])
def test_verify_with_the_servers_ca(new: Callable[..., Any], tls_server: Server, as_path: bool) -> None:
    assert tls_server.ca_file
    ca = Path(tls_server.ca_file) if as_path else tls_server.ca_file
    c = new(verify=ca)
    assert c.tls_info is None  # before the first connection
    r = c.request("GET", tls_server.url + "/")
    assert (r.status, r.body) == (200, HELLO)
    r = c.request("GET", tls_server.url + "/bytes/100000")
    assert r.status == 200 and len(r.body) == 100000
    assert r.body == fetch(tls_server, "/bytes/100000")
    info = c.tls_info
    assert isinstance(info, dict) and info["version"] in ("TLSv1.2", "TLSv1.3"), info


def test_keep_alive_over_tls(new: Callable[..., Any], tls_server: Server) -> None:
    c = new(verify=tls_server.ca_file)
    before = stats(tls_server)
    for _ in range(5):
        assert c.get(tls_server.url + "/") == 200
    after = stats(tls_server)
    # 1 connection of the client + 1 of the second /stats request
    assert after["connections"] - before["connections"] == 2, (before, after)
    assert after["tls_handshakes"] - before["tls_handshakes"] == 2, (before, after)


@pytest.fixture(scope="module", params=["1.2", "1.3"])
def versioned_tls_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The axum server over HTTPS with TLS 1.2 only, or 1.3 only (`--tls-version`)."""
    with Server(tls=True, tls_dir=tmp_path_factory.mktemp("tls-" + request.param), tls_version=request.param) as s:
        yield s


def test_later_connections_resume_the_session(new: Callable[..., Any], versioned_tls_server: Server) -> None:
    """Each client keeps its TLS sessions per origin (TLS 1.2 sessions, TLS 1.3 tickets): each of its later
    connections to the server resumes one, as the server counts them (/stats: tls_resumed); another client has
    none to offer."""
    s = versioned_tls_server
    version = "TLSv" + str(s.tls_version)
    c = new(verify=s.ca_file)
    before = stats(s)
    for _ in range(3):
        assert c.get(s.url + "/close") == 200  # the server closes each connection: a new one, a new handshake
    after = stats(s)
    assert c.tls_info and c.tls_info["version"] == version
    # the client's three handshakes and that of the second /stats (urllib: never resumed)
    assert after["tls_handshakes"] - before["tls_handshakes"] == 4, (before, after)
    assert after["tls_resumed"] - before["tls_resumed"] == 2, (before, after)
    assert new(verify=s.ca_file).get(s.url + "/") == 200  # a client of its own
    assert stats(s)["tls_resumed"] == after["tls_resumed"]


# -- 2. verify=False, default trust store ----------------------------------------------------------------
def test_verify_false_accepts(new: Callable[..., Any], tls_server: Server, py_tls_server: Callable[[str], str]) -> None:
    c = new(verify=False)
    r = c.request("GET", tls_server.url + "/")
    assert (r.status, r.body) == (200, HELLO)
    r = c.request("GET", py_tls_server("other"))  # another host name, an unknown CA
    assert (r.status, r.body) == (200, HELLO)


def test_default_verify_rejects_the_throwaway_ca(new: Callable[..., Any], mod: ModuleType, tls_server: Server) -> None:
    c = new()
    with pytest.raises(mod.TLSError) as e:
        c.get(tls_server.url + "/")
    assert isinstance(e.value, ConnectionError)


# -- 3., 4. wrong host name, expired ---------------------------------------------------------------------
@pytest.mark.timeout(30)
@pytest.mark.parametrize("leaf", ["other", "expired"])
def test_bad_certificate(
    new: Callable[..., Any], mod: ModuleType, pki: Path, py_tls_server: Callable[[str], str], leaf: str
) -> None:
    url = py_tls_server(leaf)
    c = new(verify=pki / "ca.pem")
    with pytest.raises(mod.TLSError) as e:
        c.get(url)
    assert isinstance(e.value, ConnectionError)
    # the same CA trusts a good certificate: only the name / the dates are wrong
    ok = new(verify=False)
    assert ok.get(url) == 200


# -- software nobody here wrote: nginx with a certificate of our own CA ----------------------------------
NGINX_TLS = """
    server {{
        listen 127.0.0.1:{port} ssl;
        server_name localhost;
        ssl_certificate {pki}/good.pem;
        ssl_certificate_key {pki}/leaf.key;
        location / {{ return 200 "Hello, World!"; }}
    }}
"""


@pytest.fixture(scope="module")
def nginx_tls(pki: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """Debian's nginx serving HTTPS (good.pem, signed by pki's CA) on 127.0.0.1 and localhost: its port."""
    if why := missing():
        pytest.skip(why)
    with running(tmp_path_factory.mktemp("nginx"), NGINX_TLS.replace("{pki}", str(pki))) as port:
        yield port


@pytest.mark.timeout(30)
@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
def test_nginx_with_a_certificate_of_our_own_ca(
    new: Callable[..., Any], mod: ModuleType, pki: Path, nginx_tls: int, host: str
) -> None:
    url = f"https://{host}:{nginx_tls}/"
    # the reference: curl trusts the same CA and gets the same answer
    assert curl("--cacert", str(pki / "ca.pem"), url) == HELLO
    c = new(verify=str(pki / "ca.pem"))
    assert c.get(url) == 200
    r = c.request("GET", url)
    assert (r.status, r.body) == (200, HELLO)
    assert c.tls_info and c.tls_info["version"] in ("TLSv1.2", "TLSv1.3")
    without = new()  # the system's roots do not know our CA
    with pytest.raises(mod.TLSError):
        without.get(url)


# -- 5. wrong scheme -------------------------------------------------------------------------------------
@pytest.mark.timeout(30)
def test_https_url_to_plain_http_server(new: Callable[..., Any], mod: ModuleType, server: Server) -> None:
    c = new(timeout=5.0, verify=False)
    url = "https://" + server.url.removeprefix("http://") + "/"
    t0 = time.monotonic()
    with pytest.raises(mod.TLSError):
        c.get(url)
    assert time.monotonic() - t0 < 5.0


@pytest.mark.timeout(30)
def test_http_url_to_tls_server(new: Callable[..., Any], mod: ModuleType, tls_server: Server) -> None:
    # documented for both: a server answering with a TLS alert record (rustls) -> ProtocolError
    c = new(timeout=5.0)
    url = "http://" + tls_server.url.removeprefix("https://") + "/"
    t0 = time.monotonic()
    with pytest.raises(mod.ProtocolError):
        c.get(url)
    assert time.monotonic() - t0 < 5.0


# -- 6. a silent server: the handshake is covered by the timeout -----------------------------------------
@pytest.mark.timeout(10)
def test_silent_server_times_out_in_handshake(new: Callable[..., Any], raw_server: Callable[..., Any]) -> None:
    def silent(conn: Conn) -> None:
        conn.hold(10)  # reads the ClientHello, never answers

    srv = raw_server(silent)
    c = new(timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        c.get("https://" + srv.url.removeprefix("http://") + "/")
    assert time.monotonic() - t0 < 1.5
