"""The dimensions `clientbench sweep` runs over, each defined once: its name, what a point is, its default points,
how a point's text is read, how a point changes the workload (or where its requests go), and its axis. The
command line's choices and help, the sweep loop (commands/sweep.py), the plots and docs/usage.md's list all
derive from DIMENSIONS; adding a dimension is one `Dimension(...)` here (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import SetupError
from .network import Network
from .options.values import one_of, rate_point, whole
from .workload import Workload, WorkloadError, number

if TYPE_CHECKING:  # the sweep command's testbed; imported for types only, so the command line stays light
    from .execution.testbed import Endpoint, Testbed

#: the largest payload point: the server's /bytes/N and /echo bound (server-axum's MAX_BYTES, MAX_ECHO_BYTES)
MAX_PAYLOAD = 64 << 20


def _payload(base: Workload, value: int) -> Workload:
    """GET /bytes/N (the response's direction); with a body (POST, or --upload stream), POST /echo of N bytes,
    which answers them back: N bytes each way."""
    if base.method == "GET":
        return base.replace(path=f"/bytes/{value}")
    if base.method != "POST":
        raise WorkloadError(f"sweep payload: --method {base.method} has no echo (POST /echo answers the body back)")
    return base.replace(path="/echo", body_size=value)


#: The QUIC benchmark seed's grid (../shared/seeds, docs/http3.md): long connections (many requests each: the
#: stack's cost per request) at a web page's 5 KB, images' 15 and 50 KB and video's 2 MB, short ones (a new
#: connection per request: the handshake) at 1 KB; each over HTTP/1.1, 2 and 3. KB and MB are decimal, as there.
SCENARIOS = {"long-5KB": 5_000, "long-15KB": 15_000, "long-50KB": 50_000, "long-2MB": 2_000_000, "short-1KB": 1_000}
_SCENARIO = re.compile(r"^(long|short)-(\d+)(KB|MB)-h(1\.1|2|3)$")


def scenario(text: str) -> str:
    """`long-5KB-h3`: a connection's length, a response size and an HTTP version."""
    m = _SCENARIO.match(text)
    if not m:
        raise SetupError(
            f"expected a scenario such as long-5KB-h3 or short-1KB-h1.1 (long|short-<n>KB|MB-h1.1|2|3), got {text!r}"
        )
    return text


def _scenario(base: Workload, value: str) -> Workload:
    m = _SCENARIO.match(value)
    assert m is not None
    length, size, unit, http = m.groups()
    body = int(size) * (1_000 if unit == "KB" else 1_000_000)
    if body > MAX_PAYLOAD:
        raise WorkloadError(f"scenario {value}: {body} bytes is above the server's {MAX_PAYLOAD} (64 MiB)")
    return base.replace(path=f"/bytes/{body}", connection="keep-alive" if length == "long" else "new", http=http)


#: the default rate ladder: from 250 requests/s, doubling, 12 rates (up to 512,000/s: within the drivers'
#: schedule of 1,000,000/s per worker even for one worker); by default a client leaves it after its first
#: saturated rate (execution/ladder.py)
LADDER = tuple(250.0 * 2**i for i in range(12))


@dataclass(frozen=True)
class Dimension:
    name: str
    help: str  # what a point is (the command line's help and docs/usage.md)
    defaults: tuple[Any, ...]
    axis: str  # the plots' axis label
    parse: Callable[[str], Any]  # one point from its text; SetupError naming what was expected
    #: the point's workload (from the command's); the default leaves it as it is
    workload: Callable[[Workload, Any], Workload] = lambda base, value: base
    #: the point's network, as its results record it (from the command's --network); None: the command's
    network: Callable[[Network | None, Any], Network | None] | None = None
    #: where the point's requests go (a proxy, a server of its own); None: the testbed's endpoint
    endpoint: Callable[[Testbed, Any], Endpoint] | None = None
    log_x: bool = False  # numbers spanning decades: a log axis
    #: open loops at a ladder of rates (execution/ladder.py) instead of one run of the rows per point
    ladder: bool = False
    #: the points start servers of their own: not with --target
    own_servers: bool = False

    def points(self, text: str | None, flag: str = "--values") -> list[Any]:
        """The points of `--values` (or the defaults), in the order given; SetupError naming the bad one."""
        if text is None:
            return list(self.defaults)
        items = [v.strip() for v in text.split(",") if v.strip()]
        if not items:
            raise SetupError(f"{flag} is empty")
        out = []
        for item in items:
            try:
                out.append(self.parse(item))
            except SetupError as exc:
                raise SetupError(f"{flag} for {self.name}: {exc}") from None
        return sorted(set(out)) if self.ladder else out

    def folder(self, value: Any) -> str:
        """The point's folder under points/ (and its name in tables), e.g. `workers-10`, `rate-2000`."""
        return f"{self.name}-{number(value) if isinstance(value, float) else value}"

    def default_text(self) -> str:
        return ",".join(number(v) if isinstance(v, float) else str(v) for v in self.defaults)


def _rtt(base: Network | None, value: Any) -> Network:
    return dataclasses.replace(base or Network(), rtt_ms=int(value), name=None)


def _rtt_endpoint(testbed: Testbed, value: Any) -> Endpoint:
    return testbed.via(_rtt(testbed.options.network, value))


def _tls_endpoint(testbed: Testbed, value: Any) -> Endpoint:
    """Plain HTTP, or HTTPS with a server restricted to one TLS version (behind --network's proxy, if any)."""
    server = testbed.start_server(tls=value != "http", tls_version=None if value == "http" else value)
    return testbed.via(testbed.options.network, server) if testbed.options.network else server


DIMENSIONS: dict[str, Dimension] = {
    d.name: d
    for d in (
        Dimension(
            "workers",
            "W workers, each with its own client",
            (1, 2, 4, 8, 10, 16, 32),
            "workers (W)",
            whole(1),
            workload=lambda base, value: base.replace(workers=value),
            log_x=True,
        ),
        Dimension(
            "payload",
            "GET /bytes/N: a response body of N bytes (with --method POST or --upload stream: POST /echo, N each way)",
            (13, 1024, 10240, 102400, 1048576),
            "body size (bytes)",
            whole(0, MAX_PAYLOAD, " (64 MiB, the server's bound)"),
            workload=_payload,
            log_x=True,
        ),
        Dimension(
            "delay",
            "GET /delay/MS: the server waits MS ms before it answers",
            (0, 1, 5, 20),
            "server delay per request (ms)",
            whole(0),
            workload=lambda base, value: base.replace(path=f"/delay/{value}"),
        ),
        Dimension(
            "connection",
            "keep-alive, or a new connection for every request",
            ("keep-alive", "new"),
            "connection mode",
            one_of("keep-alive", "new"),
            workload=lambda base, value: base.replace(connection=value),
        ),
        Dimension(
            # toxiproxy delays in whole ms, so 0.5 ms cannot be emulated
            "rtt",
            "the round trip in ms, through toxiproxy (0: the proxy alone)",
            (0, 1, 2, 5, 10),
            "round-trip time (ms, emulated by toxiproxy)",
            whole(0),
            network=_rtt,
            endpoint=_rtt_endpoint,
        ),
        Dimension(
            "tls",
            "http, or HTTPS with the server restricted to TLS 1.2 or 1.3 (with --connection new: the handshake)",
            ("http", "1.2", "1.3"),
            "scheme and TLS version",
            one_of("http", "1.2", "1.3"),
            endpoint=_tls_endpoint,
            own_servers=True,
        ),
        Dimension(
            # HTTP/3 is QUIC, whose handshake is TLS 1.3: with 3 among the points the command needs --tls
            "protocol",
            "the HTTP version asked of every row: 1.1, 2 (ALPN h2) and 3 (QUIC) over TLS",
            ("1.1", "2", "3"),
            "HTTP version",
            one_of("1.1", "2", "3"),
            workload=lambda base, value: base.replace(http=value),
        ),
        Dimension(
            # with h3 among the points the command needs --tls, as for `protocol`
            "scenario",
            "the QUIC seed's grid: long connections at 5 KB, 15 KB, 50 KB, 2 MB and short ones (a new connection "
            "per request) at 1 KB, each over HTTP/1.1, 2 and 3 (e.g. long-5KB-h3)",
            tuple(f"{name}-h{http}" for name in SCENARIOS for http in ("1.1", "2", "3")),
            "scenario",
            scenario,
            workload=_scenario,
        ),
        Dimension(
            "rate",
            "open loops at rising rates (requests/s) until every client saturates",
            LADDER,
            "offered rate (requests/s)",
            rate_point,
            workload=lambda base, value: base.replace(rate=value),
            log_x=True,
            ladder=True,
        ),
    )
}


def dimension(name: str) -> Dimension:
    try:
        return DIMENSIONS[name]
    except KeyError:
        raise SetupError(f"unknown sweep dimension {name!r}; known: {', '.join(DIMENSIONS)}") from None


def help_text(dimensions: Sequence[Dimension] = tuple(DIMENSIONS.values())) -> str:
    return "; ".join(f"{d.name}: {d.help} (default {d.default_text()})" for d in dimensions)
