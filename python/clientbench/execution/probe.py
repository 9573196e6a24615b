"""The runner's own requests to a server, in the HTTP version the run asks for: the check that a `--target`
answers, and the body-integrity reference (how many bytes the answer to the drivers' request has).

Each version through a well-kept client library, never a stack of ours: HTTP/1.1 through the standard library's
http.client, HTTP/2 through httpx with h2 (ALPN `h2` over https, offering HTTP/1.1 beside it as the drivers do; prior
knowledge over http), HTTP/3 through aioquic (QUIC to the URL's port, ALPN `h3`, with prior knowledge: no TCP at
all, so a server that listens on UDP alone answers). httpx and aioquic are imported when a probe needs them."""

from __future__ import annotations

import asyncio
import http.client
import ssl
import string
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import SetupError
from .server import https_context

#: how long the check that a --target answers waits for each answer (s)
CHECK_TIMEOUT_S = 5.0


class ProbeError(Exception):
    """Why a request got no HTTP answer (one line: refused, timed out, a TLS failure, ...)."""


@dataclass(frozen=True)
class Trust:
    """What the runner's probes trust over https: a CA file (None: the system's roots), or nothing (insecure)."""

    ca_file: str | None = None
    insecure: bool = False

    def context(self) -> ssl.SSLContext:
        return https_context(self.ca_file, self.insecure)


@dataclass(frozen=True)
class Answer:
    status: int
    body_bytes: int
    protocol: str  # "HTTP/1.1", "HTTP/2", "HTTP/3"


def describe(http: str, scheme: str) -> str:
    """The protocol a probe speaks, as the one-line errors name it."""
    if http == "3":
        return "HTTP/3 (QUIC, ALPN h3)"
    if http == "2":
        return "HTTP/2 (ALPN h2)" if scheme == "https" else "HTTP/2 (prior knowledge)"
    return "HTTP/1.1"


def request_body(size: int) -> Iterator[bytes]:
    """The contract's request body of `size` bytes, `abc...zabc...` (docs/raw-format.md), in chunks."""
    chunk = string.ascii_lowercase.encode() * 2520  # 65,520 bytes: a whole number of alphabets
    for offset in range(0, size, len(chunk)):
        yield chunk[: min(len(chunk), size - offset)]


def fetch(
    url: str,
    timeout: float,
    trust: Trust | None = None,
    http: str = "1.1",
    method: str = "GET",
    body: bytes | Iterator[bytes] | None = None,
    body_size: int = 0,
) -> Answer:
    """One request in HTTP version `http` ("1.1", "2", "3"); its status and body length, or ProbeError."""
    trust = trust or Trust()
    headers = {"Content-Length": str(body_size)} if body is not None else {}
    try:
        if http == "3":
            data = body if isinstance(body, bytes) or body is None else b"".join(body)
            return _http3(url, timeout, trust, method, data)
        if http == "2":
            return _http2(url, timeout, trust, method, body, headers)
        return _http1(url, timeout, trust, method, body, headers)
    except ImportError as exc:  # a dependency of the runner's that this environment lacks
        raise ProbeError(f"the probe needs {exc.name or exc} (pip install clientbench installs it)") from None


def probe_body_bytes(
    url: str,
    timeout: float,
    trust: Trust | None = None,
    method: str = "GET",
    body_size: int = 0,
    body_file: Path | None = None,
    http: str = "1.1",
) -> int | None:
    """Body length of one request to url as the drivers send it (in their HTTP version), with the contract's body
    of `body_size` bytes or a target's body file: the runner's own reference for the body-integrity check. None
    when there was no 200 answer."""
    if body_file is not None:
        body_size = body_file.stat().st_size
    body = (body_file.read_bytes() if body_file is not None else request_body(body_size)) if method != "GET" else None
    try:
        answer = fetch(url, timeout, trust, http, method, body, body_size)
    except ProbeError:
        return None
    return answer.body_bytes if answer.status == 200 else None


def check_target(target: str, versions: Sequence[str], trust: Trust | None, timeout: float = CHECK_TIMEOUT_S) -> None:
    """SetupError (one line, naming the protocol) unless `target` answers 200 to GET /health or GET / in each HTTP
    version of `versions`. A failure to connect is not tried again on / (it would only double the wait)."""
    base = target.rstrip("/")
    scheme = urllib.parse.urlsplit(base).scheme.lower()
    for version in dict.fromkeys(versions):
        statuses = []
        for path in ("/health", "/"):
            try:
                answer = fetch(base + path, timeout, trust, version)
            except ProbeError as exc:
                raise SetupError(f"--target {target} does not answer {describe(version, scheme)}: {exc}") from None
            if answer.status == 200:
                break
            statuses.append(f"{answer.status} to GET {path}")
        else:
            raise SetupError(f"--target {target} answered {' and '.join(statuses)} over {describe(version, scheme)}")


def _reason(exc: BaseException) -> str:
    """A library's exception as a short reason: what went wrong, never a traceback."""
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return "timed out"
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


def _http1(
    url: str, timeout: float, trust: Trust, method: str, body: bytes | Iterator[bytes] | None, headers: dict[str, str]
) -> Answer:
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "", parts.port
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    # the standard library's http.client, keep-alive (not urllib's `Connection: close`): the runner closes first,
    # so the connection counter (sockets.py) tells its socket from a driver's
    conn = (
        http.client.HTTPSConnection(host, port, timeout=timeout, context=trust.context())
        if parts.scheme.lower() == "https"
        else http.client.HTTPConnection(host, port, timeout=timeout)
    )
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return Answer(r.status, len(r.read()), "HTTP/1.1")
    except http.client.HTTPException as exc:  # e.g. an HTTP/2-only server's frames where a status line should be
        raise ProbeError(f"not an HTTP/1.1 answer ({type(exc).__name__})") from None
    except (OSError, ValueError) as exc:
        raise ProbeError(_reason(exc)) from None
    finally:
        conn.close()


def _http2(
    url: str, timeout: float, trust: Trust, method: str, body: bytes | Iterator[bytes] | None, headers: dict[str, str]
) -> Answer:
    import httpx  # the runner's dependency, with h2 (httpx[http2])

    https = url.lower().startswith("https://")
    verify: ssl.SSLContext | bool = (False if trust.insecure else trust.context()) if https else True
    # over https ALPN offers h2 and http/1.1, as the drivers' --http 2 does (a server that picks 1.1 answers, and
    # the rows show their fallback); over http HTTP/1.1 off: HTTP/2 with prior knowledge
    with httpx.Client(http1=https, http2=True, verify=verify, timeout=timeout, trust_env=False) as client:
        try:
            r = client.request(method, url, content=body, headers=headers)
        except httpx.TimeoutException:  # also a TLS handshake that never ends (its text is ssl's, not a reason)
            raise ProbeError("timed out") from None
        except (httpx.HTTPError, OSError, ValueError) as exc:
            raise ProbeError(_reason(exc)) from None
        return Answer(r.status_code, len(r.content), r.http_version)


def _http3(url: str, timeout: float, trust: Trust, method: str, body: bytes | None) -> Answer:
    from . import quic_probe  # aioquic, imported when a probe speaks HTTP/3

    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "https" or not parts.hostname:
        raise ProbeError(f"HTTP/3 needs an https:// URL, got {url}")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        status, size = quic_probe.request(
            parts.hostname, parts.port or 443, parts.netloc, method, path, body, trust.ca_file, trust.insecure, timeout
        )
    except (asyncio.TimeoutError, TimeoutError):
        raise ProbeError(f"no answer within {timeout:g} s") from None
    except (ConnectionError, OSError, ValueError) as exc:
        raise ProbeError(_reason(exc)) from None
    return Answer(status, size, "HTTP/3")
