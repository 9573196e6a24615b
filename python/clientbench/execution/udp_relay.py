"""The workspace's udp-relay (udp-relay/: delays and drops datagrams) as a child of the runner: `--network` over
QUIC, which toxiproxy (TCP) cannot carry (network.py). It listens on loopback and prints its address first."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

from ..environment.binaries import require
from ..errors import SetupError
from ..network import Network
from .children import ManagedProcess
from .toxiproxy import Toxiproxy, through

#: tries to find a port number free for both the relay (UDP) and the TCP proxy
ATTEMPTS = 8


class UdpRelay(ManagedProcess):
    """`with UdpRelay(upstream, network) as relay:` relays datagrams between loopback clients and `upstream`
    (host:port, the server's UDP port) with the network's delay, jitter and loss; `relay.addr` is where clients
    send (`port`: the port to listen on, 0 for any)."""

    reads_stdout = True

    def __init__(
        self,
        upstream: str,
        network: Network,
        port: int = 0,
        log: Path | None = None,
        start_timeout: float = 10.0,
        cpus: frozenset[int] | None = None,
        seed: int = 1,
    ):
        super().__init__(log, start_timeout, cpus=cpus)
        self.binary = require("udp-relay")
        self.upstream, self.network, self.port, self.seed = upstream, network, port, seed
        self.addr = ""

    def __enter__(self) -> UdpRelay:
        self.start()
        return self

    def command(self) -> list[str]:
        return [
            str(self.binary), "--listen", f"127.0.0.1:{self.port}", "--upstream", self.upstream,
            *self.network.relay_flags(), "--seed", str(self.seed),
        ]  # fmt: skip

    def wait_ready(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        line = got[0] if got else b""
        if not line:
            try:
                code = self.proc.wait(timeout=1)
            except Exception:
                code = None
            why = f"exited with status {code}" if code is not None else "printed nothing"
            raise SetupError(f"udp-relay {why} within {self.start_timeout:g}s; see its log")
        try:
            self.addr = str(json.loads(line)["addr"])
        except (ValueError, KeyError, TypeError):
            raise SetupError(f"udp-relay printed an unexpected first line: {line[:200]!r}") from None

    @property
    def port_number(self) -> int:
        return int(self.addr.rsplit(":", 1)[1])


def through_both(
    tp: Toxiproxy, base_url: str, network: Network, name: str, log: Path | None, cpus: frozenset[int] | None
) -> tuple[str, UdpRelay]:
    """An https endpoint behind the network: the UDP relay (QUIC) and the TCP proxy on one port number, as the
    server serves HTTP/3 on its HTTPS port's number; the proxy's base URL and the relay (the caller stops it)."""
    parts = urlsplit(base_url)
    try:  # the relay takes an address, not a name
        host = str(socket.getaddrinfo(parts.hostname, parts.port, type=socket.SOCK_DGRAM)[0][4][0])
    except (OSError, UnicodeError) as exc:
        raise SetupError(f"--network: cannot resolve {parts.hostname}: {exc}") from None
    upstream = f"[{host}]:{parts.port}" if ":" in host else f"{host}:{parts.port}"
    for attempt in range(ATTEMPTS):
        relay = UdpRelay(upstream, network, log=log, cpus=cpus)
        relay.start()
        try:
            url = through(tp, base_url, network, name=f"{name}-{attempt}", listen=f"127.0.0.1:{relay.port_number}")
            return url, relay
        except SetupError:  # that TCP port is taken: another pair
            relay.stop()
    raise SetupError(f"--network: no port number free for both the TCP proxy and the UDP relay in {ATTEMPTS} tries")
