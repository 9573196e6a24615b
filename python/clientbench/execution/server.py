"""Start and stop the axum server (server-axum/) for a run or a test.

The server prints one JSON line on stdout once it is bound, e.g.
`{"event":"listening","url":"http://127.0.0.1:41234","urls":["http://127.0.0.1:41234"],"http3":false}`;
everything else it writes goes to stderr. It listens on one port at every address it is given (`hosts`: the
loopback origins of `run --hosts N`, or `serve --listen` repeated), one URL each. The process is always stopped
when the `Server` context exits (also on Ctrl-C, SIGTERM or an exception), and dies with the runner
(execution/children.py).
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

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


#: the addresses a wildcard listener is reached at from this machine
_LOOPBACK = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]"}
#: after the server closed its stdout without a listening line, how long it gets to exit (it is exiting: a bind
#: failure is reported and returned from at once)
_EXIT_WAIT_S = 5.0


def loopback_hosts(n: int) -> tuple[str, ...]:
    """The first `n` loopback addresses, 127.0.0.1 ... 127.0.0.N: the origins of `run --hosts N`."""
    if not 1 <= n <= 254:
        raise SetupError(f"hosts: {n} loopback addresses asked for; 1 to 254 exist (127.0.0.1 ... 127.0.0.254)")
    return tuple(f"127.0.0.{k}" for k in range(1, n + 1))


def origins_used(before: Mapping[str, Any], after: Mapping[str, Any], own: str | None = None) -> int:
    """How many origins were requested between two /stats documents (`Server.stats_document()`): the authorities
    of `origin_requests` whose count rose, less `own`, the authority of the /stats request that read `after`
    (`Server.own_authority`), when that request is its only rise. `origins` itself only grows (every authority
    seen since start) and cannot tell that."""
    was, now = before.get("origin_requests") or {}, after.get("origin_requests") or {}
    rose = {a: n - int(was.get(a, 0)) for a, n in now.items() if n > int(was.get(a, 0))}
    if own is not None and rose.get(own) == 1:
        del rose[own]
    return len(rose)


class Server(ManagedProcess):
    """`with Server(tls=...) as s:` serves on loopback at `s.url` (with tls, trusting `s.ca_file`).

    `hosts` is where it listens, one port for all: an int N, the loopback origins 127.0.0.1 ... 127.0.0.N (what
    `run --hosts N` reaches; 1, the default, is 127.0.0.1 alone), or the addresses themselves (IP addresses or
    names, the first one's URL is `url`). `urls` has one URL per address, in that order. With tls and the
    generated certificate, every address but the first is also passed as `--tls-name` (a wildcard address
    names nothing), so that a client verifies each origin."""

    reads_stdout = True  # the first line is the URL; the rest is drained into the log

    def __init__(
        self,
        *,
        threads: int | None = None,
        hosts: int | Sequence[str] = 1,
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
        self.hosts = loopback_hosts(hosts) if isinstance(hosts, int) else tuple(hosts)
        if not self.hosts or isinstance(hosts, str):
            raise SetupError(f"hosts: {hosts!r} is not a number of loopback addresses or a list of addresses")
        self.port = port
        self.tls_cert, self.tls_key, self.tls_names = tls_cert, tls_key, tls_names
        self.tls = tls
        self.tls_dir = tls_dir
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.tls_version = tls_version
        self.url: str = ""
        self.urls: tuple[str, ...] = ()  # one per address, `url` first
        self.ca_file: str | None = None  # with tls: the throw-away CA the server generated (PEM)
        self.http3 = False  # with tls, unless off: HTTP/3 at every URL's address and port, over UDP
        self.udp_addr: str | None = None  # the first address's UDP (HTTP/3)
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

    @property
    def tls_names_passed(self) -> tuple[str, ...]:
        """The certificate's names asked for: `tls_names`, then every address after the first that names a host
        (not a wildcard), each once."""
        names = list(self.tls_names)
        for host in self.hosts[1:]:
            bare = host.strip("[]")
            try:
                if ipaddress.ip_address(bare).is_unspecified:
                    continue
            except ValueError:
                pass  # a host name: the certificate can name it too
            if bare not in names:
                names.append(bare)
        return tuple(names)

    def command(self) -> list[str]:
        cmd = [str(self.binary), "--port", str(self.port)]
        for host in self.hosts:
            cmd += ["--host", host.strip("[]")]
        if self.threads:
            cmd += ["--threads", str(self.threads)]
        if self.tls:
            cmd += ["--tls"]
            if self.tls_cert is not None and self.tls_key is not None:
                cmd += ["--tls-cert", str(self.tls_cert), "--tls-key", str(self.tls_key)]
            else:
                cmd += ["--tls-dir", str(self.tls_dir)]
                for name in self.tls_names_passed:
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
            if result:  # end of stdout: the server is exiting, and may not be reaped yet (poll() would say None)
                try:
                    code: int | None = self.proc.wait(timeout=_EXIT_WAIT_S)
                except subprocess.TimeoutExpired:
                    code = None
                why = f"exited with status {code}" if code is not None else "closed its stdout without a word"
            else:
                code = self.proc.poll()
                why = f"exited with status {code}" if code is not None else "printed nothing"
            raise SetupError(f"server {why} within {self.start_timeout:.0f}s; see its log")
        try:
            msg = json.loads(line)
            if self.tls:
                self.ca_file = msg.get("ca_file")
            url = str(msg["url"]).rstrip("/")
            # a server from before several addresses has no urls: then it serves one, if one was asked for
            urls = tuple(str(u).rstrip("/") for u in msg.get("urls", [url]))
            self.http3 = msg.get("http3") is True
            self.udp_addr = msg.get("udp_addr") if self.http3 else None
        except (ValueError, KeyError, TypeError, AttributeError):
            raise SetupError(f"server printed an unexpected first line: {line[:200]!r}") from None
        if len(urls) != len(self.hosts) or urls[0] != url:
            raise SetupError(f"server listens at {', '.join(urls)}, not at the {len(self.hosts)} addresses asked for")
        self.urls = urls
        return url

    def context(self) -> ssl.SSLContext | None:
        """What the runner's own requests (/health, /stats) trust: the generated CA, or for a certificate of the
        user's, which need not name this machine, nothing (they only ask whether it answers)."""
        if not self.tls:
            return None
        return https_context(self.ca_file, insecure=self.tls_cert is not None)

    @property
    def local_url(self) -> str:
        """The URL the runner reaches the server at: a wildcard address (0.0.0.0, ::) as loopback."""
        return _local(self.url)

    @property
    def local_urls(self) -> tuple[str, ...]:
        """`urls` as the runner reaches them (a wildcard address as loopback)."""
        return tuple(_local(u) for u in self.urls)

    @property
    def own_authority(self) -> str:
        """The authority the runner's own requests (/health, /stats) name: `local_url`'s host and port."""
        return self.local_url.partition("://")[2]

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
        those that spoke HTTP/2 where the server counts them (None if unreadable). Integers only: each can be
        diffed between two reads (`origins`, the authorities seen since start, only grows: see `origins_used`)."""
        doc = self.stats_document()
        return None if doc is None else counters(doc)

    def stats_document(self) -> dict[str, Any] | None:
        """GET /stats as the server answers it (None if unreadable): the counters, the UDP buffer sizes (or
        null), and `origin_requests`, each authority's requests since start (see `origins_used`)."""
        parts = urllib.parse.urlsplit(self.local_url)
        host, port, context = parts.hostname or "127.0.0.1", parts.port, self.context()
        # a keep-alive request (not urllib's `Connection: close`): the runner closes first, so its socket waits in
        # TIME_WAIT where the connection counter (sockets.py) tells it from a driver's, not in a close of the server's
        conn = (
            http.client.HTTPSConnection(host, port, timeout=5, context=context)
            if context is not None
            else http.client.HTTPConnection(host, port, timeout=5)
        )
        try:
            conn.request("GET", "/stats")
            doc = json.loads(conn.getresponse().read())
            counters(doc)  # the counters every server has, or unreadable
            return dict(doc)
        except (http.client.HTTPException, OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        finally:
            conn.close()

    def release(self) -> None:
        if self._drain is not None:
            self._drain.join(timeout=2)
            self._drain = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
            self.tls_dir = None


def _local(url: str) -> str:
    scheme, _, rest = url.partition("://")
    host, _, port = rest.rpartition(":")
    return f"{scheme}://{_LOOPBACK.get(host, host)}:{port}"


def counters(doc: Mapping[str, Any]) -> dict[str, int]:
    """The integer counters of a /stats document (KeyError, TypeError or ValueError when it lacks the basic ones)."""
    counts = {k: int(doc[k]) for k in ("connections", "tls_handshakes", "tls_resumed")}
    # and what else the server counts (HTTP/2 connections, QUIC connections and handshakes, h3 streams, origins)
    counts |= {k: v for k, v in doc.items() if isinstance(v, int) and not isinstance(v, bool)}
    return counts
