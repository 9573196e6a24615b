"""Hypercorn on aioquic as an HTTP/3 server nobody here wrote (`make quic-server` installs it in build/quic-server,
pinned by python/requirements-quic.txt): one process serving support/asgi/h3app.py over TLS on TCP and over QUIC
on the same port number of 127.0.0.1, or with `tcp=False` over QUIC alone (its configuration file binds no TCP
socket: a server that listens on UDP only, as QUIC stacks' example servers do), with a CA and certificate trustme
makes for each start. Stopped, with its process group, when the `with` block ends, whatever happened in it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
VENV = REPO / "build" / "quic-server"
HYPERCORN = VENV / "bin" / "hypercorn"
MISSING = "Hypercorn and aioquic are not installed (`make quic-server`; `make test` installs them)"
APP_DIR = Path(__file__).resolve().parent / "asgi"
CERTS = """
import sys, trustme
ca = trustme.CA()
cert = ca.issue_cert("127.0.0.1", "localhost")
ca.cert_pem.write_to_path(sys.argv[1] + "/ca.pem")
cert.private_key_pem.write_to_path(sys.argv[1] + "/key.pem")
cert.cert_chain_pems[0].write_to_path(sys.argv[1] + "/cert.pem")
"""


@dataclass(frozen=True)
class QuicServer:
    url: str  # https://127.0.0.1:PORT (no trailing slash)
    ca_file: Path
    log: Path


def _free_port() -> int:
    """A port number free for both TCP and UDP on 127.0.0.1 (Hypercorn binds both to it)."""
    for _ in range(50):
        with closing(socket.socket()) as tcp, closing(socket.socket(socket.AF_INET, socket.SOCK_DGRAM)) as udp:
            tcp.bind(("127.0.0.1", 0))
            port = tcp.getsockname()[1]
            try:
                udp.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no port free for both TCP and UDP on 127.0.0.1")


@contextmanager
def quic_server(folder: Path, timeout: float = 30.0, tcp: bool = True) -> Iterator[QuicServer]:
    if not HYPERCORN.exists():
        raise FileNotFoundError(MISSING)
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(VENV / "bin" / "python"), "-c", CERTS, str(folder)], check=True, timeout=60)
    port = _free_port()
    log = folder / "hypercorn.log"
    address = f"127.0.0.1:{port}"
    argv = [str(HYPERCORN), "--quic-bind", address, "--certfile", str(folder / "cert.pem"),
            "--keyfile", str(folder / "key.pem"), "--workers", "1", "h3app:app"]  # fmt: skip
    if tcp:
        argv[1:1] = ["--bind", address]
    else:  # no --bind: Hypercorn's default (127.0.0.1:8000) would apply; its configuration file says none at all
        (folder / "quic-only.toml").write_text("bind = []\n")
        argv[1:1] = ["--config", str(folder / "quic-only.toml")]
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, cwd=APP_DIR, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while "(QUIC)" not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Hypercorn did not start on {address}: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        yield QuicServer(f"https://{address}", folder / "ca.pem", log)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
