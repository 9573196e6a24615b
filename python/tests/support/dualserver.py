"""One origin but for the scheme: a RawServer (support/rawserver.py) that speaks TLS and plain HTTP on the same
port (a connection whose first byte starts a TLS handshake, 0x16, is wrapped in TLS), so that
`https://localhost:P/` and `http://localhost:P/` reach the same handler. For the tests of an https -> http
downgrade and of Secure cookies. Its certificate (127.0.0.1 and localhost) is signed by a throw-away CA made
with the openssl CLI (`make_pki`). `scripted` is an application for it (or a plain RawServer) whose answers
(status, Location, Set-Cookie) the URL writes, and which echoes every other request's headers.
"""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path

from .rawserver import Conn, Handler, RawServer

#: handler(conn, tls): tls tells whether the connection is the TLS one
DualHandler = Callable[[Conn, bool], None]


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_pki(d: Path, names: str = "IP:127.0.0.1,DNS:localhost") -> tuple[Path, Path, Path]:
    """A CA and a leaf it signed for `names` (subjectAltName entries; default 127.0.0.1 and localhost), valid for
    two days, in `d`: `(ca.pem, leaf.pem, leaf.key)`. Needs the openssl CLI (None of the paths exist without it)."""
    if shutil.which("openssl") is None:
        raise FileNotFoundError("the openssl CLI is not installed")
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=clientbench dual test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d,
    )  # fmt: skip
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=leaf", cwd=d
    )
    (d / "leaf.cnf").write_text(f"subjectAltName={names}\nbasicConstraints=CA:FALSE\n")
    _openssl(
        "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "leaf.pem", "-days", "2", "-extfile", "leaf.cnf", cwd=d,
    )  # fmt: skip
    return d / "ca.pem", d / "leaf.pem", d / "leaf.key"


def dual(ctx: ssl.SSLContext, handler: DualHandler) -> Handler:
    """A RawServer handler: TLS (with `ctx`) or plain HTTP, as the client's first byte says, then `handler`."""

    def run(conn: Conn) -> None:
        try:
            conn.sock.settimeout(10)
            first = conn.sock.recv(1, socket.MSG_PEEK)
        except OSError:
            return
        tls = first == b"\x16"
        if tls:
            try:
                conn.sock = ctx.wrap_socket(conn.sock, server_side=True)
            except OSError:
                return
            conn.server._conns.append(conn.sock)  # so that close() shuts the TLS socket down too
        try:
            handler(conn, tls)
        finally:
            conn.sock.close()

    return run


class DualServer(RawServer):
    """`DualServer(handler, pki)`: a RawServer on 127.0.0.1 whose connections are TLS (with the leaf of `pki`,
    `make_pki`'s triple) or plain HTTP; `ca_file` is the CA to trust, `origin(scheme, host)` a base URL."""

    def __init__(self, handler: DualHandler, pki: tuple[Path, Path, Path]):
        ca, leaf, key = pki
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(leaf, key)
        super().__init__(dual(ctx, handler))
        self.ca_file = str(ca)

    def origin(self, scheme: str, host: str = "localhost") -> str:
        return f"{scheme}://{host}:{self.port}"


def scripted(conn: Conn, tls: bool) -> None:
    """A keep-alive application whose answers the URL writes, for redirects and cookies:
    `/answer?status=S&location=L&set=C&set=C2` (or `/any/path/answer?...`) answers S (default 200) with
    `Location: L` and one `Set-Cookie` per `set` (each as given); every other path answers 200 with JSON
    `{"tls", "method", "target", "headers": {lower-case name: [values]}}` of the request as received."""
    while (head := conn.read_request(timeout=5)) is not None:
        request_line, *lines = head.decode("latin-1").split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        path, _, query = target.partition("?")
        if path.endswith("/answer"):
            q = urllib.parse.parse_qs(query, keep_blank_values=True)
            status = q.get("status", ["200"])[0]
            fields = "".join(f"Location: {v}\r\n" for v in q.get("location", []))
            fields += "".join(f"Set-Cookie: {v}\r\n" for v in q.get("set", []))
            conn.respond(b"", status=f"{status} X", headers=fields)
            continue
        headers: dict[str, list[str]] = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers.setdefault(name.strip().lower(), []).append(value.strip())
        doc = {"tls": tls, "method": method, "target": target, "headers": headers}
        conn.respond(json.dumps(doc).encode(), headers="Content-Type: application/json\r\n")


def answer_url(base: str, status: int = 200, location: str | None = None, cookies: Sequence[str] = ()) -> str:
    """The `scripted` URL (`base` + "/answer?...") that answers `status` with this Location and these Set-Cookie
    fields."""
    query: list[tuple[str, str]] = [("status", str(status))]
    if location is not None:
        query.append(("location", location))
    query += [("set", c) for c in cookies]
    return base + "/answer?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
