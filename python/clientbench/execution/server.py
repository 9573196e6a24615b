"""Start and stop the axum server (server-axum/) for a run or a test.

The server prints one JSON line on stdout once it is bound, e.g.
`{"event":"listening","url":"http://127.0.0.1:41234"}`; everything else it writes goes to stderr.
The process is always stopped when the `Server` context exits (also on Ctrl-C, SIGTERM or an exception),
and dies with the runner (execution/children.py).
"""

from __future__ import annotations

import json
import ssl
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from ..environment.binaries import require
from ..errors import SetupError
from .children import ManagedProcess


def https_context(ca_file: str | None = None, insecure: bool = False) -> ssl.SSLContext:
    """The runner's own TLS client settings (health check, body probe): the CA file, or the system roots."""
    ctx = ssl.create_default_context(cafile=ca_file)
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


class Server(ManagedProcess):
    """`with Server(tls=...) as s:` serves on loopback at `s.url` (with tls, trusting `s.ca_file`)."""

    reads_stdout = True  # the first line is the URL; the rest is drained into the log

    def __init__(
        self,
        *,
        threads: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        log: Path | None = None,
        start_timeout: float = 20.0,
        tls: bool = False,
        tls_dir: Path | None = None,
        tls_version: str | None = None,
        tls_cert: Path | None = None,
        tls_key: Path | None = None,
        tls_names: tuple[str, ...] = (),
        inherit_stderr: bool = False,
        cpus: frozenset[int] | None = None,
    ):
        super().__init__(log, start_timeout, inherit_stderr, cpus)
        self.binary = require("clientbench-server")
        self.threads = threads
        self.host = host
        self.port = port
        self.tls_cert, self.tls_key, self.tls_names = tls_cert, tls_key, tls_names
        self.tls = tls
        self.tls_dir = tls_dir
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.tls_version = tls_version
        self.url: str = ""
        self.ca_file: str | None = None  # with tls: the throw-away CA the server generated (PEM)
        self._drain: threading.Thread | None = None

    def __enter__(self) -> Server:
        self.start()
        return self

    def start(self) -> str:  # type: ignore[override]
        if self.tls and self.tls_dir is None and self.tls_cert is None:  # the throw-away CA: a folder of ours
            self._tmp = tempfile.TemporaryDirectory(prefix="clientbench-tls-")
            self.tls_dir = Path(self._tmp.name)
        super().start()
        return self.url

    def command(self) -> list[str]:
        cmd = [str(self.binary), "--host", self.host, "--port", str(self.port)]
        if self.threads:
            cmd += ["--threads", str(self.threads)]
        if self.tls:
            cmd += ["--tls"]
            if self.tls_cert is not None and self.tls_key is not None:
                cmd += ["--tls-cert", str(self.tls_cert), "--tls-key", str(self.tls_key)]
            else:
                cmd += ["--tls-dir", str(self.tls_dir)]
                for name in self.tls_names:
                    cmd += ["--tls-name", name]
            if self.tls_version:
                cmd += ["--tls-version", self.tls_version]
        return cmd

    def wait_ready(self) -> None:
        self.url = self._read_url()
        self._drain = threading.Thread(target=self._drain_stdout, daemon=True)
        self._drain.start()
        self._wait_healthy()

    def _read_url(self) -> str:
        assert self.proc and self.proc.stdout
        stdout = self.proc.stdout
        result: list[bytes] = []
        reader = threading.Thread(target=lambda: result.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        line = result[0] if result else b""
        if not line:
            code = self.proc.poll()
            why = f"exited with status {code}" if code is not None else "printed nothing"
            raise SetupError(f"server {why} within {self.start_timeout:.0f}s; see its log")
        try:
            msg = json.loads(line)
            if self.tls:
                self.ca_file = msg.get("ca_file")
            return str(msg["url"]).rstrip("/")
        except (ValueError, KeyError, TypeError, AttributeError):
            raise SetupError(f"server printed an unexpected first line: {line[:200]!r}") from None

    def context(self) -> ssl.SSLContext | None:
        """What the runner's own requests (/health, /stats) trust: the generated CA, or for a certificate of the
        user's, which need not name this machine, nothing (they only ask whether it answers)."""
        if not self.tls:
            return None
        return https_context(self.ca_file, insecure=self.tls_cert is not None)

    @property
    def local_url(self) -> str:
        """The URL the runner reaches the server at: a wildcard address (0.0.0.0, ::) as loopback."""
        scheme, _, rest = self.url.partition("://")
        host, _, port = rest.rpartition(":")
        loopback = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]"}.get(host, host)
        return f"{scheme}://{loopback}:{port}"

    def _drain_stdout(self) -> None:
        assert self.proc and self.proc.stdout and self._log
        stdout = self.proc.stdout
        for chunk in iter(lambda: stdout.read(4096), b""):
            try:
                self._log.write(chunk)
            except ValueError:  # log closed
                return

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                with urllib.request.urlopen(self.local_url + "/health", timeout=2, context=self.context()) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if self.proc and self.proc.poll() is not None:
                raise SetupError(f"server exited with status {self.proc.returncode} before /health answered")
            if time.monotonic() > deadline:
                raise SetupError(f"server did not answer {self.url}/health within {self.start_timeout:.0f}s")
            time.sleep(0.05)

    def stats(self) -> dict[str, int] | None:
        """GET /stats: connections accepted, TLS handshakes and resumed ones since start, and of the connections
        those that spoke HTTP/2 where the server counts them (None if unreadable)."""
        try:
            with urllib.request.urlopen(self.local_url + "/stats", timeout=5, context=self.context()) as r:
                doc = json.loads(r.read())
            counts = {k: int(doc[k]) for k in ("connections", "tls_handshakes", "tls_resumed")}
            # and what else the server counts (HTTP/2 connections, QUIC connections and handshakes, h3 streams)
            counts |= {k: v for k, v in doc.items() if isinstance(v, int) and not isinstance(v, bool)}
            return counts
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError):
            return None

    def release(self) -> None:
        if self._drain is not None:
            self._drain.join(timeout=2)
            self._drain = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
            self.tls_dir = None
