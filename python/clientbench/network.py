"""Network conditions to emulate (`--network SPEC`): a round trip, jitter and a rate, or a preset.

The kernel here has no netem qdisc, so the runner emulates them in user space: toxiproxy (a TCP proxy,
execution/toxiproxy.py) in front of the server, with toxics in both directions. `--network SPEC` takes `rtt=`,
`jitter=`, `rate=` (comma-separated) or a preset name (PRESETS). `rtt` is the round trip: half of it is added to
each direction (toxiproxy's latency is in whole ms, so an odd rtt puts the extra ms on the response's way back).

What a TCP proxy cannot emulate: the client's TCP handshake completes with the proxy at loopback speed, so
a new connection's extra round trip is not part of the figures (a TLS handshake's round trips are, since
its messages are data to the proxy).

QUIC is UDP, which toxiproxy does not carry: over HTTPS the runner also starts the workspace's udp-relay
(execution/udp_relay.py) in front of the server's UDP port, on the proxy's port number, with the same round
trip and jitter, and `loss=` (percent of datagrams dropped each way), which only a datagram network has: a
proxy in front of TCP cannot drop what TCP retransmits below it. The relay does not shape a rate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import SetupError

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
    loss_pct: float = 0.0  # datagrams dropped each way by the UDP relay (QUIC only)
    name: str | None = None  # the preset, when one was named
    #: what emulates it (a results document read back keeps the one it recorded)
    emulator: str = f"toxiproxy {TOXIPROXY_VERSION}"

    def describe(self, quic: bool = False) -> str:
        """One line; `quic`: the traffic went through the UDP relay (HTTP/3), not toxiproxy."""
        parts = [f"rtt {self.rtt_ms} ms"]
        if self.jitter_ms:
            parts.append(f"jitter {self.jitter_ms} ms")
        if self.rate_kbit:
            parts.append(f"rate {_rate_text(self.rate_kbit)}")
        if self.loss_pct:
            parts.append(f"loss {self.loss_pct:g}% each way (QUIC)")
        text = ", ".join(parts) + (" (the UDP relay)" if quic else " (toxiproxy)")
        return f"{self.name}: {text}" if self.name else text

    def to_json(self) -> dict[str, Any]:
        return {
            "emulator": self.emulator,
            "preset": self.name,
            "rtt_ms": self.rtt_ms,
            "jitter_ms": self.jitter_ms,
            "rate_kbit": self.rate_kbit,
            "loss_pct": self.loss_pct,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Network:
        return cls(
            rtt_ms=int(doc["rtt_ms"]),
            jitter_ms=int(doc["jitter_ms"]),
            rate_kbit=doc.get("rate_kbit"),
            loss_pct=float(doc.get("loss_pct") or 0.0),
            name=doc.get("preset"),
            emulator=str(doc.get("emulator") or cls.emulator),
        )

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

    def relay_flags(self) -> list[str]:
        """The UDP relay's flags for the same network: half the round trip and the jitter each way, the loss."""
        return [
            "--delay-ms", f"{self.rtt_ms / 2:g}",
            "--jitter-ms", f"{self.jitter_ms / 2:g}",
            "--loss", f"{self.loss_pct:g}",
        ]  # fmt: skip


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
        if not sep or key not in ("rtt", "jitter", "rate", "loss"):
            raise SetupError(
                f"--network: unknown item {item!r}; expected rtt=, jitter=, rate=, loss= or a preset "
                f"({', '.join(PRESETS)})"
            )
        if key == "loss":
            try:
                pct = float(value.strip().removesuffix("%"))
            except ValueError:
                raise SetupError(f"--network loss={value}: expected a percentage such as 1% or 0.5") from None
            if not 0 <= pct < 100:
                raise SetupError(f"--network loss={value}: at least 0 and below 100 (percent)")
            values["loss_pct"] = pct
        elif key == "rate":
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
