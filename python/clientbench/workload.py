"""The workload: every knob a row is run with, its defaults and the limits the drivers keep (the command line
resolves it once: options/workload.py).

Every command takes a `Workload`; drivers get it as flags (docs/raw-format.md), results.json records it.
A workload with a `rate` is an open loop (docs/open-loop.md): the drivers send on a schedule of `rate`
requests/s for `duration_s` seconds (or `requests` per worker) instead of one request after the other.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import contract

#: the driver contract's values and limits, declared once (schema/contract.json, docs/raw-format.md)
CONNECTIONS = contract.flag("--connection").choices
#: per-worker: every worker makes its own client; shared: one client serves all W workers (docs/raw-format.md)
CLIENT_SCOPES = contract.flag("--client-scope").choices
HTTP_VERSIONS = contract.flag("--http").choices
#: how a request body is sent and a response body read: whole (one buffer) or streamed in --chunk-size chunks
TRANSFERS = contract.flag("--upload").choices
#: the chunk a streamed body is sent or read in (docs/raw-format.md, "Streamed bodies")
DEFAULT_CHUNK_SIZE: int = contract.flag("--chunk-size").default
MAX_CHUNK_SIZE = int(contract.flag("--chunk-size").maximum or 0)
ARRIVALS = contract.flag("--arrival").choices
METHODS = contract.flag("--method").choices
#: the largest request body the drivers accept (docs/raw-format.md)
MAX_BODY_SIZE = int(contract.flag("--body-size").maximum or 0)
#: the finest schedule the drivers keep: one request per µs per worker (docs/raw-format.md)
MAX_RATE_PER_WORKER = int(contract.flag("--rate").per_worker_max or 0)
#: above this many timed requests in a row the drivers record histograms instead of per-request samples,
#: so that a long open-loop run keeps its raw output and the runner's memory bounded (docs/open-loop.md)
HISTOGRAM_ABOVE = 200_000
#: the longest --timeout the drivers take (docs/raw-format.md: a day)
MAX_TIMEOUT_S = float(contract.flag("--timeout").maximum or 0)
#: our server's endpoint that answers a request body with its length and digest (docs/raw-format.md)
UPLOAD_PATH = "/upload"


class WorkloadError(ValueError):
    """A workload that cannot run: the message names the command-line flag at fault."""


def number(value: float) -> str:
    """A number as a flag value: whole numbers without a decimal point, others exactly (no exponent)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True)
class Workload:
    workers: int = 10
    requests: int = 100  # per worker; not used with duration_s (an open loop that lasts a time instead)
    warmup: int = 10
    timeout_s: float = 30.0
    path: str = "/"
    connection: str = "keep-alive"  # or "new": a new connection (client) for every request
    repeat: int = 10  # runs of every row, interleaved round-robin; the table shows medians
    rate: float | None = None  # open loop: requests/s over all workers; None: a closed loop
    duration_s: float | None = None  # open loop: the schedule lasts this long (instead of `requests`)
    arrival: str = "uniform"  # open loop: "uniform" or "poisson" intervals
    seed: int = 1  # open loop, poisson: worker w's generator is seeded with seed + w
    method: str = "GET"
    body_size: int = 0  # POST/PUT: bytes of the request body
    client_scope: str = "per-worker"  # or "shared": one client object for all workers, with its own pool
    http: str = "1.1"  # "2": HTTP/2 (ALPN h2 over https, prior knowledge over http); "3": HTTP/3 (QUIC, https only)
    upload: str = "whole"  # or "stream": the body handed to the client as chunks of chunk_size, made as sent
    download: str = "whole"  # or "stream": the response read in chunks of at most chunk_size, each counted
    chunk_size: int = DEFAULT_CHUNK_SIZE
    #: the drivers' targets file (targets.py writes it): each request's method, URL and body, cycled per worker
    targets: str | None = None
    #: `--phases`: the drivers that can record each request's phases (connect, TLS, send, wait, receive) do (the
    #: commands' workloads record them by default: DEFAULT and the others below)
    phases: bool = False

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise WorkloadError(f"--workers must be at least 1, got {self.workers}")
        if not (math.isfinite(self.timeout_s) and 0 < self.timeout_s <= MAX_TIMEOUT_S):
            raise WorkloadError(f"--timeout must be within 0 and {MAX_TIMEOUT_S:g} s (a day), got {self.timeout_s:g}")
        if self.connection not in CONNECTIONS:
            raise WorkloadError(f"connection must be one of {', '.join(CONNECTIONS)}, got {self.connection!r}")
        if self.client_scope not in CLIENT_SCOPES:
            raise WorkloadError(f"--client-scope must be one of {', '.join(CLIENT_SCOPES)}, got {self.client_scope!r}")
        if self.http not in HTTP_VERSIONS:
            raise WorkloadError(f"--http must be one of {', '.join(HTTP_VERSIONS)}, got {self.http!r}")
        if self.client_scope == "shared" and self.connection == "new":
            raise WorkloadError(
                "--connection new does not go with --client-scope shared (a shared client is made once)"
            )
        if self.arrival not in ARRIVALS:
            raise WorkloadError(f"--arrival must be one of {', '.join(ARRIVALS)}, got {self.arrival!r}")
        if self.method not in METHODS:
            raise WorkloadError(f"--method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not 0 <= self.body_size <= MAX_BODY_SIZE:
            raise WorkloadError(f"--body-size must be within 0 and {MAX_BODY_SIZE} (1 GiB), got {self.body_size}")
        if self.body_size and self.method == "GET":
            raise WorkloadError(f"--body-size {self.body_size} goes with --method POST or PUT (a GET sends no body)")
        self._check_bodies()
        if self.rate is not None:
            if not (math.isfinite(self.rate) and self.rate > 0):
                raise WorkloadError(f"--rate must be a positive number of requests/s, got {self.rate:g}")
            if self.rate / self.workers > MAX_RATE_PER_WORKER:
                raise WorkloadError(
                    f"--rate {self.rate:g} over {self.workers} worker(s) schedules {self.rate / self.workers:g} "
                    f"requests/s per worker, finer than the drivers keep (1 µs per request): at most "
                    f"{MAX_RATE_PER_WORKER * self.workers:,} requests/s with {self.workers} worker(s)"
                )
        if self.duration_s is not None and not (math.isfinite(self.duration_s) and self.duration_s > 0):
            raise WorkloadError(f"--duration must be a positive number of seconds, got {self.duration_s:g}")

    def _check_bodies(self) -> None:
        for flag, value in (("--upload", self.upload), ("--download", self.download)):
            if value not in TRANSFERS:
                raise WorkloadError(f"{flag} must be one of {', '.join(TRANSFERS)}, got {value!r}")
        if not 1 <= self.chunk_size <= MAX_CHUNK_SIZE:
            raise WorkloadError(f"--chunk-size must be within 1 and {MAX_CHUNK_SIZE} (16 MiB), got {self.chunk_size}")
        if self.chunk_size != DEFAULT_CHUNK_SIZE and not self.streamed:
            raise WorkloadError("--chunk-size goes with --upload stream or --download stream (a whole body has none)")
        if self.upload == "stream" and self.method == "GET" and self.targets is None:
            raise WorkloadError("--upload stream goes with --method POST or PUT, or --targets (a GET sends no body)")
        if self.targets is not None and (self.method != "GET" or self.body_size):
            raise WorkloadError("--targets gives every request its method and body: not with --method or --body-size")

    @property
    def streamed(self) -> bool:
        """A body of either direction goes in chunks."""
        return "stream" in (self.upload, self.download)

    @property
    def open(self) -> bool:
        """An open loop: requests are sent on a schedule of `rate` requests/s."""
        return self.rate is not None

    @property
    def schedule_s(self) -> float | None:
        """How long an open loop's schedule lasts (None for a closed loop)."""
        if self.rate is None:
            return None
        return self.duration_s if self.duration_s is not None else self.requests * self.workers / self.rate

    def expected_requests(self) -> float:
        """The timed requests a run of this workload should send, over all workers."""
        if self.rate is not None and self.duration_s is not None:
            return self.rate * self.duration_s
        return float(self.workers * self.requests)

    @property
    def record(self) -> str:
        """What the drivers record: per-request samples, or histograms when there would be too many."""
        return "histogram" if self.expected_requests() > HISTOGRAM_ABOVE else "samples"

    def flags(self, url: str) -> list[str]:
        """The driver contract's flags for one run (repeat is the runner's business, not the driver's).
        Flags at the contract's defaults are left out, so a closed GET loop has the flags it always had."""
        if self.duration_s is not None and self.rate is None:
            raise WorkloadError("--duration goes with --rate (an open loop)")
        flags = ["--url", url, "--workers", str(self.workers)]
        if self.duration_s is not None:
            flags += ["--duration", number(self.duration_s)]
        else:
            flags += ["--requests", str(self.requests)]
        flags += ["--warmup", str(self.warmup), "--timeout", f"{self.timeout_s:g}"]
        if self.connection != "keep-alive":
            flags += ["--connection", self.connection]
        if self.rate is not None:
            flags += ["--rate", number(self.rate), "--arrival", self.arrival, "--seed", str(self.seed)]
        if self.method != "GET":
            flags += ["--method", self.method, "--body-size", str(self.body_size)]
        if self.record != "samples":
            flags += ["--record", self.record]
        if self.client_scope != "per-worker":
            flags += ["--client-scope", self.client_scope]
        if self.http != "1.1":
            flags += ["--http", self.http]
        if self.upload != "whole":
            flags += ["--upload", self.upload]
        if self.download != "whole":
            flags += ["--download", self.download]
        if self.streamed:
            flags += ["--chunk-size", str(self.chunk_size)]
        if self.targets is not None:
            flags += ["--targets", self.targets]
        if self.phases:
            flags += ["--phases"]
        return flags

    def replace(self, **changes: Any) -> Workload:
        return dataclasses.replace(self, **changes)

    def request(self) -> str:
        """The request every worker sends, e.g. `GET /` or `POST /upload with a 1024-byte body`."""
        if self.targets is not None:
            return "the targets file's requests"
        body = f" with a {self.body_size}-byte body" if self.method != "GET" else ""
        return f"{self.method} {self.path}{body}"

    def describe(self) -> str:
        """One line for table titles: what every row did."""
        conn = "" if self.connection == "keep-alive" else ", a new client per request"
        conn += ", one shared client" if self.client_scope == "shared" else ""
        conn += f", HTTP/{self.http}" if self.http != "1.1" else ""
        streamed = [f"{d} streamed" for d, v in (("upload", self.upload), ("download", self.download)) if v == "stream"]
        conn += f", {' and '.join(streamed)} in {self.chunk_size}-byte chunks" if streamed else ""
        if self.rate is None:
            return (
                f"{self.workers} workers x {self.requests} requests, {self.request()}{conn}, "
                f"median of {self.repeat} run(s), warmup {self.warmup}"
            )
        length = f"for {number(self.duration_s)} s" if self.duration_s is not None else f"x {self.requests} requests"
        return (
            f"open loop: {number(self.rate)} requests/s ({self.arrival}) over {self.workers} workers {length}, "
            f"{self.request()}{conn}, median of {self.repeat} run(s), warmup {self.warmup}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "requests": None if self.duration_s is not None else self.requests,
            "warmup": self.warmup,
            "timeout_s": self.timeout_s,
            "path": self.path,
            "connection": self.connection,
            "repeat": self.repeat,
            "loop": "open" if self.open else "closed",
            "rate": self.rate,
            "duration_s": self.duration_s,
            "arrival": self.arrival if self.open else None,
            "seed": self.seed if self.open else None,
            "method": self.method,
            "body_size": self.body_size,
            "client_scope": self.client_scope,
            "http": self.http,
            "upload": self.upload,
            "download": self.download,
            "chunk_size": self.chunk_size,
            "targets": self.targets,
            "phases": self.phases,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Workload:
        # results/1 did not record the connection, results/2 none of the open loop's or the body's knobs
        return cls(
            workers=doc["workers"],
            requests=doc["requests"] if doc["requests"] is not None else cls.requests,
            warmup=doc["warmup"],
            timeout_s=doc["timeout_s"],
            path=doc["path"],
            connection=doc.get("connection", "keep-alive"),
            repeat=doc["repeat"],
            rate=doc.get("rate"),
            duration_s=doc.get("duration_s"),
            arrival=doc.get("arrival") or cls.arrival,
            seed=int(doc.get("seed") or 0) if doc.get("seed") is not None else cls.seed,
            method=doc.get("method", "GET"),
            body_size=doc.get("body_size", 0),
            client_scope=doc.get("client_scope", "per-worker"),
            http=doc.get("http", "1.1"),
            upload=doc.get("upload", "whole"),
            download=doc.get("download", "whole"),
            chunk_size=doc.get("chunk_size", DEFAULT_CHUNK_SIZE),
            targets=doc.get("targets"),
            phases=doc.get("phases", False),
        )


#: The reference's workload (10 workers x 100 requests) with warm-up and 10 interleaved repeats.
#: N stays at 100 on purpose: Bench/LMean shows GIL serialization only while one worker's N requests fit in
#: one GIL switch interval (5 ms; ~3 ms for Beast with the GIL held). With N = 500 the interpreter's forced
#: switches interleave the held workers, LMean grows towards Bench, and Bench/LMean fell from ~10 to 1.4.
DEFAULT = Workload(phases=True)
#: `--reference`: the reference write-up's method, 10 workers x 100 requests, one run, no warm-up.
REFERENCE = Workload(requests=100, repeat=1, warmup=0, phases=True)
#: An open loop (`--rate`) without --duration or --requests: a 10 s schedule, 3 repeats (each already holds
#: thousands of requests).
OPEN = Workload(duration_s=10.0, repeat=3, phases=True)
#: `sweep rate`: many points, so each is shorter and runs once unless asked otherwise.
SWEEP_RATE = Workload(duration_s=5.0, repeat=1, phases=True)
