"""The workload: every knob a row is run with, its defaults, and how the command line resolves it (once).

Every command takes a `Workload`; drivers get it as flags (docs/raw-format.md), results.json records it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CONNECTIONS = ("keep-alive", "new")


@dataclass(frozen=True)
class Workload:
    workers: int = 10
    requests: int = 100
    warmup: int = 10
    timeout_s: float = 30.0
    path: str = "/"
    connection: str = "keep-alive"  # or "new": a new connection (client) for every request
    repeat: int = 10  # runs of every row, interleaved round-robin; the table shows medians

    def __post_init__(self) -> None:
        if self.connection not in CONNECTIONS:
            raise ValueError(f"connection must be one of {', '.join(CONNECTIONS)}, got {self.connection!r}")

    def flags(self, url: str) -> list[str]:
        """The driver contract's flags for one run (repeat is the runner's business, not the driver's)."""
        flags = [
            "--url",
            url,
            "--workers",
            str(self.workers),
            "--requests",
            str(self.requests),
            "--warmup",
            str(self.warmup),
            "--timeout",
            f"{self.timeout_s:g}",
        ]
        if self.connection != "keep-alive":
            flags += ["--connection", self.connection]
        return flags

    def replace(self, **changes: Any) -> Workload:
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        """One line for table titles: what every row did."""
        conn = "" if self.connection == "keep-alive" else ", a new connection per request"
        return (
            f"{self.workers} workers x {self.requests} requests, GET {self.path}{conn}, "
            f"median of {self.repeat} run(s), warmup {self.warmup}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "requests": self.requests,
            "warmup": self.warmup,
            "timeout_s": self.timeout_s,
            "path": self.path,
            "connection": self.connection,
            "repeat": self.repeat,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Workload:
        return cls(
            workers=doc["workers"],
            requests=doc["requests"],
            warmup=doc["warmup"],
            timeout_s=doc["timeout_s"],
            path=doc["path"],
            connection=doc.get("connection", "keep-alive"),  # results/1 did not record it
            repeat=doc["repeat"],
        )


#: The reference's workload (10 workers x 100 requests) with warm-up and 10 interleaved repeats.
#: N stays at 100 on purpose: Bench/LMean shows GIL serialization only while one worker's N requests fit in
#: one GIL switch interval (5 ms; ~3 ms for Beast with the GIL held). With N = 500 the interpreter's forced
#: switches interleave the held workers, LMean grows towards Bench, and Bench/LMean fell from ~10 to 1.4.
DEFAULT = Workload()
#: `--reference`: the reference write-up's method, 10 workers x 100 requests, one run, no warm-up.
REFERENCE = Workload(requests=100, repeat=1, warmup=0)


def resolve(options: Mapping[str, Any], *, reference: bool = False) -> Workload:
    """The workload from command-line values: a value given (not None) wins, else --reference's method
    (when asked for), else the defaults."""
    base = REFERENCE if reference else DEFAULT
    given = {f.name: options[f.name] for f in dataclasses.fields(Workload) if options.get(f.name) is not None}
    return dataclasses.replace(base, **given)
