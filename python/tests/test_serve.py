"""`clientbench serve` (the embedded server on its own, for a second machine) and `clientbench list` (each row
installed, or how to get it)."""

from __future__ import annotations

import os
import signal
import ssl
import urllib.request

import pytest
from clientbench import cli
from clientbench.commands.serve import Listen, serve
from clientbench.environment import binaries
from clientbench.errors import SetupError


def _get(url: str, context: ssl.SSLContext | None = None) -> bytes:
    with urllib.request.urlopen(url, timeout=10, context=context) as r:
        return bytes(r.read())


def test_serve_answers_until_sigterm_then_stops_the_server(tmp_path):
    seen = {}

    def ready(server):
        seen["hello"] = _get(server.local_url + "/")
        seen["pid"] = server.pid
        os.kill(os.getpid(), signal.SIGTERM)  # what a service manager sends

    lines: list[str] = []
    assert serve(Listen("127.0.0.1", 0), out=lines.append, ready=ready) == 0
    assert seen["hello"] == b"Hello, World!"
    assert lines[0].startswith("serving http://127.0.0.1:") and lines[-1] == "stopped"
    assert "on the client machine: clientbench run --target http://127.0.0.1:" in lines[1]
    with pytest.raises(ProcessLookupError):
        os.kill(seen["pid"], 0)  # reaped: no server left behind


def test_serve_tls_on_every_address_prints_the_ca_to_copy(tmp_path):
    seen = {}

    def ready(server):
        ca = tmp_path / "tls" / "ca.pem"
        seen["hello"] = _get(server.local_url + "/", ssl.create_default_context(cafile=str(ca)))
        os.kill(os.getpid(), signal.SIGINT)

    lines: list[str] = []
    assert serve(Listen("0.0.0.0", 0), tls=True, tls_dir=tmp_path / "tls", out=lines.append, ready=ready) == 0
    assert seen["hello"] == b"Hello, World!"
    # with TLS the server speaks HTTP/3 too, and says so
    assert lines[0].endswith("(HTTP/1.1, HTTP/2 and HTTP/3: QUIC over UDP at the same port); Ctrl-C stops it")
    assert lines[1] == f"the CA to trust: {tmp_path / 'tls' / 'ca.pem'}"
    assert "--target https://THIS-MACHINE:" in lines[2] and "--ca-file ca.pem" in lines[2]
    assert lines[4].startswith("for HTTP/3 add --http 3 (UDP port ")
    assert (tmp_path / "tls" / "ca.pem").is_file()  # --tls-dir keeps it


def test_serve_listens_on_several_addresses_with_one_port(tmp_path):
    seen = {}

    def ready(server):
        seen["urls"] = server.urls
        seen["hello"] = [_get(url + "/", ssl.create_default_context(cafile=server.ca_file)) for url in server.urls]
        os.kill(os.getpid(), signal.SIGTERM)

    lines: list[str] = []
    listen = Listen.parse(["127.0.0.1:0", "127.0.0.2:0", "127.0.0.3:0"])
    assert listen.hosts == ("127.0.0.1", "127.0.0.2", "127.0.0.3") and listen.port == 0
    assert serve(listen, tls=True, out=lines.append, ready=ready) == 0
    port = seen["urls"][0].rpartition(":")[2]
    assert seen["urls"] == tuple(f"https://127.0.0.{k}:{port}" for k in (1, 2, 3))
    assert seen["hello"] == [b"Hello, World!"] * 3  # each address verified: the certificate names them
    assert lines[0].startswith(f"serving {', '.join(seen['urls'])} (HTTP/1.1, HTTP/2 and HTTP/3")
    lines = []
    seen.clear()
    assert serve(Listen("127.0.0.1", 0), out=lines.append, ready=ready) == 0
    assert lines[0].endswith(" (HTTP/1.1 and HTTP/2); Ctrl-C stops it") and not any("HTTP/3" in x for x in lines)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["serve", "--listen", "nowhere"], "expected HOST:PORT"),
        (["serve", "--listen", "127.0.0.1:99999"], "within 0 and 65535"),
        (["serve", "--tls-version", "1.3"], "go with --tls"),
        (["serve", "--tls", "--tls-cert", "/nonexistent.pem"], "go together"),
        (["serve", "--tls", "--tls-cert", "/nonexistent.pem", "--tls-key", "/k.pem"], "no such file"),
        (["serve", "--listen", "127.0.0.1:0", "--listen", "127.0.0.2:8080"], "every --listen takes one port"),
        # the default (127.0.0.1:8080) is replaced, not kept beside what is given
        (["serve", "--listen", "127.0.0.2:0", "--listen", "127.0.0.2:0"], "given twice"),
        (["serve", "--listen", "127.0.0.2:0", "--listen", "nowhere"], "expected HOST:PORT"),
    ],
)
def test_bad_serve_flags_are_one_line(capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_a_port_in_use_is_one_line(capsys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SetupError, match="server exited with status 1"):
            serve(Listen("127.0.0.1", port), out=lambda line: None)


def test_a_server_that_exits_at_once_is_seen_as_exited(monkeypatch):
    """Its stdout ends before it is reaped: the start waits for the exit (bounded) rather than poll too early."""
    from clientbench.execution.server import Server

    monkeypatch.setattr(Server, "command", lambda self: ["/bin/sh", "-c", "exit 3"])
    for _ in range(20):
        server = Server()
        with pytest.raises(SetupError, match="server exited with status 3 "):
            server.start()
        assert server.proc is None


@pytest.mark.long(33)
def test_list_says_whether_each_row_is_installed_or_how_to_get_it(capsys, monkeypatch):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    state = {out[i].split()[0]: out[i + 1].strip() for i in range(0, len(out), 2)}
    assert state["cpp-beast"] == f"installed (built in {binaries.checkout()})"
    assert state["py-requests"].startswith("installed (requests ")
    # installed with pip, without clientbench-native: the native rows say how to get them
    monkeypatch.setattr(binaries, "checkout", lambda: None)
    monkeypatch.setattr(binaries, "native_bin", lambda: None)
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    state = {out[i].split()[0]: out[i + 1].strip() for i in range(0, len(out), 2)}
    assert state["cpp-beast"] == 'unavailable: the C++ Beast driver is not installed: pip install "clientbench[native]"'
    assert state["rust-reqwest"].endswith('pip install "clientbench[native]"')
