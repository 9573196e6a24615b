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
    assert lines[1] == f"the CA to trust: {tmp_path / 'tls' / 'ca.pem'}"
    assert "--target https://THIS-MACHINE:" in lines[2] and "--ca-file ca.pem" in lines[2]
    assert (tmp_path / "tls" / "ca.pem").is_file()  # --tls-dir keeps it


@pytest.mark.parametrize(
    "argv, message",
    [
        (["serve", "--listen", "nowhere"], "expected HOST:PORT"),
        (["serve", "--listen", "127.0.0.1:99999"], "within 0 and 65535"),
        (["serve", "--tls-version", "1.3"], "go with --tls"),
        (["serve", "--tls", "--tls-cert", "/nonexistent.pem"], "go together"),
        (["serve", "--tls", "--tls-cert", "/nonexistent.pem", "--tls-key", "/k.pem"], "no such file"),
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
