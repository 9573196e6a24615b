"""The result model: what a run measured, as one versioned document (`clientbench.results/3`).

The runner produces it, the exporters, `compare`, `gil` and `sweep` consume it; `to_json`/`from_json`
round-trip it against python/clientbench/schema/results.schema.json. Figures come from `stats`, imported where they
are read or computed: the registry's rows are `Client`s, and `clientbench list` and `--help` import no numpy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import SetupError
from .network import Network
from .options import Pinning
from .workload import Workload

if TYPE_CHECKING:
    from .stats import Aggregate, ProcessUsage, RowStats, TimeSeries

SCHEMA_ID = "clientbench.results/3"
#: documents this version still reads (results/1 lacked workload.connection and client.fixed_workers/floor;
#: results/2 the open loop's and the request body's workload fields and the open-loop figures)
READS = ("clientbench.results/1", "clientbench.results/2", SCHEMA_ID)


@dataclass(frozen=True, kw_only=True)
class Client:
    """What a row measures, as the table labels it."""

    name: str
    language: str
    library: str
    mode: str  # "sync" | "async"
    gil: str | None = None  # "held" | "released" | None
    fixed_workers: int | None = None  # e.g. 1 for a serial row, whatever --workers says
    floor: bool = False  # a raw-socket floor row: the `xfloor` column divides by its Mean
    optional: bool = False  # a peer from PyPI (someone else's client): a partial crash is reported, not fatal
    interpreter: str | None = None  # a Python row under another interpreter: its label (3.13t); None: the runner's

    @property
    def label(self) -> str:
        gil = f", GIL {self.gil}" if self.gil else ""
        serial = ", W=1" if self.fixed_workers == 1 else ""
        interp = f", Python {self.interpreter}" if self.interpreter else ""
        return f"{self.language} {self.library} ({self.mode}{gil}{serial}{interp})"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "language": self.language,
            "library": self.library,
            "library_version": None,
            "mode": self.mode,
            "gil": self.gil,
            "fixed_workers": self.fixed_workers,
            "floor": self.floor,
            "optional": self.optional,
            "interpreter": self.interpreter,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Client:
        return cls(
            name=doc["name"],
            language=doc["language"],
            library=doc["library"],
            mode=doc["mode"],
            gil=doc.get("gil"),
            fixed_workers=doc.get("fixed_workers"),
            floor=bool(doc.get("floor")),
            optional=bool(doc.get("optional")),
            interpreter=doc.get("interpreter"),
        )


class RunStatus(str, Enum):
    """What one run of a driver came to (results.json: rows[].runs[].status)."""

    OK = "ok"  # a valid document, every request answered 200 with every byte of its body
    FAILED = "failed"  # a crash, hang or invalid document (no stats), a failed request, or missing bytes
    UNAVAILABLE = "unavailable"  # the row's driver or client library is not installed here: never started
    SKIPPED = "skipped"  # what results/3 documents before 0.2 called an unavailable peer (read, never written)
    UNSUPPORTED = "unsupported"  # the driver said it cannot do what was asked (exit 3, `unsupported: ...`)


@dataclass
class DriverRun:
    """One run of one driver (one repeat of a row): its status and, unless ok, the reason."""

    client: Client
    status: RunStatus
    reason: str | None = None
    raw: dict[str, Any] | None = None  # the driver's raw document (not kept by from_json)
    stats: RowStats | None = None  # from a valid document (also when requests failed)
    returncode: int | None = None
    duration_s: float = 0.0
    command: list[str] = field(default_factory=list)
    usage: ProcessUsage | None = None
    hash_seed: int | None = None  # PYTHONHASHSEED the driver ran with
    raw_file: str | None = None  # where the raw document was written, relative to the run folder
    #: counted by our server during the run (warm-up included): connections, TLS handshakes, resumed ones
    server_counts: dict[str, int] | None = None
    #: counted on the client's side (warm-up included; execution/sockets.py): {"tcp": n, "quic": m}, the TCP
    #: connections and QUIC sockets the driver opened toward the server, whichever server it was; None where unknown
    connections: dict[str, int] | None = None
    #: the kernel's UDP receive errors during the run (machine-wide: QUIC datagrams dropped for a full buffer)
    udp_errors: dict[str, int] | None = None
    #: an open-loop run with samples: its figures second by second (stats.time_series); None otherwise
    series: TimeSeries | None = None

    @property
    def connection_count(self) -> int | None:
        """The connections the run opened (TCP and QUIC): our server's count where it counted them, else the
        client side's."""
        if self.server_counts and "connections" in self.server_counts:
            return self.server_counts["connections"] + self.server_counts.get("quic_connections", 0)
        return sum(self.connections.values()) if self.connections is not None else None

    @property
    def crashed(self) -> bool:
        """Failed without a document: the driver crashed, hung or printed no valid one."""
        return self.status is RunStatus.FAILED and self.stats is None

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "reason": self.reason,
            "returncode": self.returncode,
            "duration_s": round(self.duration_s, 3),
            "command": self.command,
            "hash_seed": self.hash_seed,
            "process": {"cpu_s": self.usage.cpu_s, "max_rss_kib": self.usage.max_rss_kib} if self.usage else None,
            "stats": self.stats.to_json() if self.stats else None,
            "raw": self.raw_file,
            "server_counts": self.server_counts,
            "connections": self.connections,
            "udp_errors": self.udp_errors,
            **({"series": self.series.to_json()} if self.series is not None else {}),
        }

    @classmethod
    def from_json(cls, client: Client, doc: Mapping[str, Any]) -> DriverRun:
        from .stats import ProcessUsage, RowStats, TimeSeries  # numpy: where figures are read (see the top)

        process = doc.get("process")
        return cls(
            client,
            status=RunStatus(doc["status"]),
            reason=doc.get("reason"),
            stats=RowStats(**doc["stats"]) if doc.get("stats") else None,
            returncode=doc.get("returncode"),
            duration_s=doc.get("duration_s", 0.0),
            command=list(doc.get("command") or []),
            usage=ProcessUsage(process["cpu_s"], process["max_rss_kib"]) if process else None,
            hash_seed=doc.get("hash_seed"),
            raw_file=doc.get("raw"),
            server_counts=doc.get("server_counts"),
            connections=doc.get("connections"),
            udp_errors=doc.get("udp_errors"),
            series=TimeSeries.from_json(doc["series"]) if doc.get("series") else None,
        )


@dataclass
class Row:
    """A row of the table: every repeat of one client."""

    client: Client
    runs: list[DriverRun] = field(default_factory=list)
    info: dict[str, Any] | None = None  # the client section the driver reported (versions, notes)

    @property
    def crashes(self) -> list[DriverRun]:
        """Repeats whose driver crashed, hung or printed no valid document."""
        return [r for r in self.runs if r.crashed]

    @property
    def good_runs(self) -> list[DriverRun]:
        return [r for r in self.runs if r.status is RunStatus.OK]

    @property
    def tolerated(self) -> bool:
        """A peer (someone else's client) that crashed in some repeats and ran cleanly in all the others:
        the row keeps the median of its good repeats and says how often it crashed."""
        return (
            self.client.optional
            and bool(self.crashes)
            and bool(self.good_runs)
            and len(self.crashes) + len(self.good_runs) == len(self.runs)
        )

    @property
    def failed(self) -> bool:
        failures = any(r.status is RunStatus.FAILED for r in self.runs)
        return not self.unavailable and not self.unsupported and (not self.runs or failures) and not self.tolerated

    @property
    def counts_against_run(self) -> bool:
        """Policy for the exit status: one of our rows (native, bindings, the reference set) failed, or
        any row has no good repeat at all. A peer's partial failure is reported, not fatal."""
        return self.failed and (not self.client.optional or not self.good_runs)

    @property
    def unavailable(self) -> bool:
        """Not installed here (its reason says how to get it): shown, not failed, not run again."""
        gone = (RunStatus.UNAVAILABLE, RunStatus.SKIPPED)
        return bool(self.runs) and all(r.status in gone for r in self.runs)

    @property
    def unsupported(self) -> bool:
        """The client cannot do what the workload asks (e.g. HTTP/2, a shared client): shown, not failed."""
        return bool(self.runs) and all(r.status is RunStatus.UNSUPPORTED for r in self.runs)

    @property
    def status(self) -> str:
        """ok, crashed (a peer that crashed in some repeats: see `tolerated`), failed, unavailable (not installed
        here), unsupported (the client cannot do what was asked), or not run (the command was interrupted first)."""
        if not self.runs:
            return "not run"
        if self.unavailable:
            return "unavailable"
        if self.unsupported:
            return "unsupported"
        return "crashed" if self.tolerated else "failed" if self.failed else "ok"

    @property
    def reason(self) -> str | None:
        if self.tolerated:
            return f"crashed {len(self.crashes)}/{len(self.runs)}: {self.crashes[0].reason}"
        return next((r.reason for r in self.runs if r.reason), None)

    @property
    def aggregate(self) -> Aggregate | None:
        from .stats import aggregate  # numpy: where figures are computed (see the top)

        good = [r.stats for r in self.runs if r.stats is not None]
        return aggregate(good) if good else None

    @property
    def raw(self) -> dict[str, Any] | None:
        """The raw document of the last repeat that produced one."""
        return next((r.raw for r in reversed(self.runs) if r.raw is not None), None)

    def add(self, run: DriverRun) -> None:
        self.runs.append(run)
        if run.raw is not None:
            self.info = dict(run.raw["client"])

    def to_json(self) -> dict[str, Any]:
        agg = self.aggregate
        client = self.client.to_json()
        if self.info:
            client.update(self.info)
        return {
            "client": client,
            "status": self.status,
            "reason": self.reason,
            "aggregate": agg.to_json() if agg else None,
            "runs": [r.to_json() for r in self.runs],
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Row:
        client = Client.from_json(doc["client"])
        row = cls(
            client,
            info={
                k: v
                for k, v in doc["client"].items()
                if k not in ("name", "label", "fixed_workers", "floor", "optional", "interpreter")
            },
        )
        row.runs = [DriverRun.from_json(client, r) for r in doc["runs"]]
        return row


@dataclass(frozen=True)
class SweepPoint:
    """The point of a sweep a results document measured (`sweep.dimension` = `sweep.value`)."""

    dimension: str
    value: Any  # a number, or a name such as "keep-alive" or "1.3"

    def to_json(self) -> dict[str, Any]:
        return {"dimension": self.dimension, "value": self.value}


@dataclass(frozen=True)
class TlsSetup:
    """An https run's TLS: the CA the drivers trusted, whether they verified, the versions our server accepted."""

    ca_file: str | None
    verify: bool
    server_versions: str | None  # e.g. "1.2,1.3"; None: not our server (--target)

    def to_json(self) -> dict[str, Any]:
        return {"ca_file": self.ca_file, "verify": self.verify, "server_versions": self.server_versions}


@dataclass
class Results:
    """The whole results document of one run (or of one sweep point, or one GIL phase)."""

    workload: Workload
    rows: list[Row]
    created: str
    command: list[str]
    server: dict[str, Any]
    environment: dict[str, Any]
    interrupted: str | None = None
    version: str = ""
    #: where the requests went: the scheme (None in documents that did not record it, with network and tls),
    #: the emulated network (None: loopback), and over https the TLS set-up
    scheme: str | None = None
    network: Network | None = None
    tls: TlsSetup | None = None
    phase: str | None = None  # one phase of a report, e.g. the GIL report's "serial"
    sweep: SweepPoint | None = None  # one point of a sweep
    pin: Pinning | None = None  # --pin: the clients' and the server's CPUs

    @property
    def complete(self) -> bool:
        return self.interrupted is None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "schema": SCHEMA_ID,
            "created": self.created,
            "clientbench_version": self.version,
            "command": self.command,
            "workload": self.workload.to_json(),
            "server": self.server,
            "environment": self.environment,
            "complete": self.complete,
            "interrupted": self.interrupted,
        }
        if self.scheme is not None:
            doc["network"] = self.network.to_json() if self.network else None
            doc["scheme"] = self.scheme
            doc["tls"] = self.tls.to_json() if self.tls else None
        if self.phase is not None:
            doc["phase"] = self.phase
        if self.sweep is not None:
            doc["sweep"] = self.sweep.to_json()
        if self.pin is not None:
            doc["pin"] = self.pin.to_json()
        doc["rows"] = [r.to_json() for r in self.rows]
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Results:
        tls, sweep = doc.get("tls"), doc.get("sweep")
        return cls(
            workload=Workload.from_json(doc["workload"]),
            rows=[Row.from_json(r) for r in doc["rows"]],
            created=doc["created"],
            command=list(doc["command"]),
            server=dict(doc["server"]),
            environment=dict(doc["environment"]),
            interrupted=doc.get("interrupted"),
            version=doc.get("clientbench_version", ""),
            scheme=doc.get("scheme"),
            network=Network.from_json(doc["network"]) if doc.get("network") else None,
            tls=TlsSetup(tls.get("ca_file"), bool(tls.get("verify")), tls.get("server_versions")) if tls else None,
            phase=doc.get("phase"),
            sweep=SweepPoint(sweep["dimension"], sweep["value"]) if sweep else None,
            pin=Pinning.from_json(doc["pin"]) if doc.get("pin") else None,
        )

    @classmethod
    def load(cls, path: Path) -> Results:
        """A results folder or results.json file; SetupError with one line when it is not one."""
        import json

        file = path / "results.json" if path.is_dir() else path
        try:
            doc = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SetupError(f"no results at {file}") from None
        except (OSError, ValueError) as exc:
            raise SetupError(f"cannot read {file}: {exc}") from None
        if not isinstance(doc, dict) or doc.get("schema") not in READS:
            raise SetupError(f"{file} is not a clientbench results.json")
        try:
            return cls.from_json(doc)
        except (KeyError, TypeError, ValueError) as exc:
            raise SetupError(f"{file} is not a valid clientbench results.json: {exc!r}") from None
