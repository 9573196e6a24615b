"""Network conditions in user space: toxiproxy (a TCP proxy) in front of the server, with its toxics.

The kernel here has no netem qdisc, so the runner starts toxiproxy, points one proxy at the server and adds
toxics in both directions through toxiproxy's HTTP API. `--network SPEC` takes `rtt=`, `jitter=`, `rate=`
(comma-separated) or a preset name (PRESETS). `rtt` is the round trip: half of it is added to each
direction (toxiproxy's latency is in whole ms, so an odd rtt puts the extra ms on the response's way back).

What a TCP proxy cannot emulate: the client's TCP handshake completes with the proxy at loopback speed, so
a new connection's extra round trip is not part of the figures (a TLS handshake's round trips are, since
its messages are data to the proxy).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SetupError
from .paths import repo_root
from .process import ManagedProcess

#: the version `make toxiproxy` installs (go install .../cmd/server@TOXIPROXY_VERSION)
TOXIPROXY_VERSION = "v2.5.0"

PRESETS = {
    "loopback": "",  # no proxy at all
    "lan": "rtt=1ms,jitter=0ms,rate=1000mbit",
    "wan": "rtt=40ms,jitter=2ms,rate=100mbit",
}


@dataclass(frozen=True)
class Network:
    """What the proxy adds. rtt/jitter in whole ms; rate in kbit/s (None: unlimited)."""

    rtt_ms: int = 0
    jitter_ms: int = 0
    rate_kbit: int | None = None
    name: str | None = None  # the preset, when one was named

    def describe(self) -> str:
        parts = [f"rtt {self.rtt_ms} ms"]
        if self.jitter_ms:
            parts.append(f"jitter {self.jitter_ms} ms")
        if self.rate_kbit:
            parts.append(f"rate {_rate_text(self.rate_kbit)}")
        text = ", ".join(parts) + " (toxiproxy)"
        return f"{self.name}: {text}" if self.name else text

    def to_json(self) -> dict[str, Any]:
        return {
            "emulator": f"toxiproxy {TOXIPROXY_VERSION}",
            "preset": self.name,
            "rtt_ms": self.rtt_ms,
            "jitter_ms": self.jitter_ms,
            "rate_kbit": self.rate_kbit,
        }

    def toxics(self) -> list[dict[str, Any]]:
        """The toxics for both directions (upstream = client to server)."""
        out: list[dict[str, Any]] = []
        up, down = self.rtt_ms // 2, self.rtt_ms - self.rtt_ms // 2
        jitter_up, jitter_down = self.jitter_ms // 2, self.jitter_ms - self.jitter_ms // 2
        for stream, latency, jitter in (("upstream", up, jitter_up), ("downstream", down, jitter_down)):
            if latency or jitter:
                out.append(
                    {
                        "name": f"latency_{stream}",
                        "type": "latency",
                        "stream": stream,
                        "toxicity": 1.0,
                        "attributes": {"latency": latency, "jitter": jitter},
                    }
                )
            if self.rate_kbit:
                # toxiproxy's bandwidth toxic counts KB/s (1000 bytes)
                out.append(
                    {
                        "name": f"bandwidth_{stream}",
                        "type": "bandwidth",
                        "stream": stream,
                        "toxicity": 1.0,
                        "attributes": {"rate": max(1, self.rate_kbit // 8)},
                    }
                )
        return out


def _rate_text(kbit: int) -> str:
    return f"{kbit // 1000} Mbit/s" if kbit % 1000 == 0 else f"{kbit} kbit/s"


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(us|ms|s)?$")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)(kbit|mbit|gbit)$")


def _ms(key: str, text: str) -> int:
    m = _DURATION.match(text.strip().lower())
    if not m:
        raise SetupError(f"--network {key}={text}: expected a duration such as 1ms, 10ms or 0")
    value = float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3, None: 1.0}[m.group(2)]
    if value != int(value):
        raise SetupError(f"--network {key}={text}: toxiproxy delays in whole milliseconds")
    return int(value)


def parse(spec: str) -> Network | None:
    """`rtt=1ms,jitter=1ms,rate=100mbit`, or a preset name; None for `loopback` (no proxy)."""
    text = spec.strip()
    name = None
    if text in PRESETS:
        name, text = text, PRESETS[text]
        if not text:
            return None
    values: dict[str, Any] = {}
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or key not in ("rtt", "jitter", "rate"):
            raise SetupError(
                f"--network: unknown item {item!r}; expected rtt=, jitter=, rate= or a preset ({', '.join(PRESETS)})"
            )
        if key == "rate":
            m = _RATE.match(value.strip().lower())
            if not m:
                raise SetupError(f"--network rate={value}: expected e.g. 100mbit, 1gbit, 512kbit")
            kbit = float(m.group(1)) * {"kbit": 1, "mbit": 1000, "gbit": 1_000_000}[m.group(2)]
            if kbit < 8:
                raise SetupError(f"--network rate={value}: at least 8kbit")
            values["rate_kbit"] = int(kbit)
        else:
            values[f"{key}_ms"] = _ms(key, value)
    if not values:
        raise SetupError(f"--network {spec!r}: nothing to emulate (use rtt=0 to measure the proxy alone)")
    return Network(name=name, **values)


def toxiproxy_binary() -> Path:
    return repo_root() / "build" / "bin" / "toxiproxy-server"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Toxiproxy(ManagedProcess):
    """`with Toxiproxy(log=...) as tp:` runs toxiproxy-server on loopback (run/process.py: stopped on every
    path, and with the runner)."""

    def __init__(self, log: Path | None = None, start_timeout: float = 10.0):
        super().__init__(log, start_timeout)
        self.binary = toxiproxy_binary()
        if not (self.binary.is_file() and os.access(self.binary, os.X_OK)):
            hint = "`make toxiproxy`" if shutil.which("go") else "install Go, then `make toxiproxy`"
            raise SetupError(f"toxiproxy not found at {self.binary}; {hint}")
        self.api = ""

    def __enter__(self) -> Toxiproxy:
        self.start()
        return self

    def command(self) -> list[str]:
        port = _free_port()
        self.api = f"http://127.0.0.1:{port}"
        return [str(self.binary), "-host", "127.0.0.1", "-port", str(port)]

    def wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                self._call("GET", "/version")
                return
            except SetupError:
                pass
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise SetupError(f"toxiproxy exited with status {self.proc.returncode}; see its log")
            if time.monotonic() > deadline:
                raise SetupError(f"toxiproxy did not answer on {self.api} within {self.start_timeout:g}s")
            time.sleep(0.05)

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.api + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                text = r.read()
        except urllib.error.HTTPError as exc:
            raise SetupError(f"toxiproxy {method} {path}: {exc.code} {exc.read()[:200]!r}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise SetupError(f"toxiproxy {method} {path}: {exc}") from None
        try:
            return json.loads(text) if text.strip() else None
        except ValueError:  # /version answers plain text
            return text.decode("utf-8", "replace")

    def proxy(self, name: str, upstream: str) -> str:
        """A proxy on an ephemeral loopback port to upstream (host:port); returns its host:port."""
        doc = self._call(
            "POST", "/proxies", {"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": True}
        )
        return str(doc["listen"])

    def add_toxic(self, proxy: str, toxic: dict[str, Any]) -> None:
        self._call("POST", f"/proxies/{proxy}/toxics", toxic)


def through(tp: Toxiproxy, base_url: str, network: Network, name: str = "server") -> str:
    """Put a proxy with the network's toxics in front of base_url (http://host:port); returns its base URL."""
    scheme, _, hostport = base_url.partition("://")
    listen = tp.proxy(name, hostport.split("/", 1)[0])
    for toxic in network.toxics():
        tp.add_toxic(name, toxic)
    return f"{scheme}://{listen}"
