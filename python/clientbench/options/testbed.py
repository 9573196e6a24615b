"""Where the requests go and how the runner treats drivers (`Options`, with --pin's `Pinning`): resolved once from
the session's flags, which are checked together here (a combination that cannot work is one SetupError line
naming the flags), and what the workload asks of them (`check_together`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SetupError
from ..network import Network
from ..targets import MAX_HOSTS, Entry, parse
from ..workload import Workload


def _cpus(text: str, where: str) -> frozenset[int]:
    """`0`, `0-3`, `0+2+4`, `0-1+4-5`: CPU numbers joined by + and ranges with -."""
    out: set[int] = set()
    for part in text.split("+"):
        low, sep, high = part.partition("-")
        try:
            first, last = int(low), int(high) if sep else int(low)
        except ValueError:
            raise SetupError(f"--pin {where}={text}: expected CPU numbers such as 0, 0-3 or 0+2") from None
        if first < 0 or last < first:
            raise SetupError(f"--pin {where}={text}: expected CPU numbers such as 0, 0-3 or 0+2")
        out.update(range(first, last + 1))
    return frozenset(out)


@dataclass(frozen=True)
class Pinning:
    """Which CPUs the clients (every driver process) and the server (and toxiproxy) may run on (`--pin`)."""

    client: frozenset[int]
    server: frozenset[int]
    auto: bool = False  # split by --pin auto

    @classmethod
    def parse(cls, text: str, usable: frozenset[int]) -> Pinning:
        """`client=CPUS,server=CPUS`, or `auto`: the usable CPUs split in two halves, the first for the clients."""
        if text.strip() == "auto":
            cpus = sorted(usable)
            if len(cpus) < 2:
                raise SetupError(f"--pin auto needs two usable CPUs, this process has {len(cpus)}")
            half = len(cpus) // 2
            return cls(frozenset(cpus[:half]), frozenset(cpus[half:]), auto=True)
        given: dict[str, frozenset[int]] = {}
        for item in (i.strip() for i in text.split(",") if i.strip()):
            key, sep, value = item.partition("=")
            if not sep or key not in ("client", "server") or key in given:
                raise SetupError(f"--pin {text!r}: expected client=CPUS,server=CPUS (e.g. client=0,server=1) or auto")
            given[key] = _cpus(value, key)
        if set(given) != {"client", "server"}:
            raise SetupError(f"--pin {text!r}: give both client=CPUS and server=CPUS (or auto)")
        for key, wanted in given.items():
            if not wanted <= usable:
                raise SetupError(
                    f"--pin {key}: CPU(s) {', '.join(map(str, sorted(wanted - usable)))} are not usable here "
                    f"(this process may run on {', '.join(map(str, sorted(usable)))})"
                )
        return cls(given["client"], given["server"])

    def describe(self) -> str:
        return f"clients on CPU {_text(self.client)}, server on CPU {_text(self.server)}"

    def to_json(self) -> dict[str, Any]:
        return {"client": sorted(self.client), "server": sorted(self.server), "auto": self.auto}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Pinning:
        return cls(frozenset(doc["client"]), frozenset(doc["server"]), bool(doc.get("auto")))


def _text(cpus: frozenset[int]) -> str:
    return "+".join(map(str, sorted(cpus)))


@dataclass(frozen=True)
class Options:
    """Where the requests go and how the runner treats drivers."""

    target: str | None = None  # an already-running server's base URL, instead of starting server-axum
    server_threads: int | None = None
    row_timeout_s: float = 300.0
    out: Path | None = None  # the parent of the results folder (default: results/)
    network: Network | None = None  # emulated through toxiproxy; None: straight to the server (loopback)
    tls: bool = False  # start the server with HTTPS (a throw-away CA), and give the drivers that CA
    tls_version: str | None = None  # "1.2" or "1.3": the only TLS version the started server accepts
    ca_file: str | None = None  # with --target https://...: the CA to trust (default: the system's roots)
    insecure: bool = False  # with --target https://...: do not verify the certificate
    pin: Pinning | None = None  # the clients' and the server's CPUs; None: wherever the kernel puts them
    exports: tuple[str, ...] = ()  # --export: the dashboard formats written beside the results
    hosts: int = 1  # the started server's loopback origins (127.0.0.1 ... 127.0.0.N)
    targets_file: Path | None = None  # --targets: the user's file, read once here
    targets: tuple[Entry, ...] = ()

    @property
    def scheme(self) -> str:
        if self.target:
            return self.target.split("://", 1)[0].lower()
        return "https" if self.tls else "http"

    @classmethod
    def checked(
        cls,
        *,
        target: str | None = None,
        server_threads: int | None = None,
        row_timeout_s: float = 300.0,
        out: Path | None = None,
        network: Network | None = None,
        tls: bool = False,
        tls_version: str | None = None,
        ca_file: Path | None = None,
        insecure: bool = False,
        pin: Pinning | None = None,
        exports: tuple[str, ...] = (),
        hosts: int = 1,
        targets: Path | None = None,
    ) -> Options:
        """The options, their flags checked together."""
        if target and not target.lower().startswith(("http://", "https://")):
            raise SetupError(f"--target must be an http:// or https:// URL, got {target!r}")
        https_target = bool(target) and str(target).lower().startswith("https://")
        if tls and target:
            raise SetupError(
                "--tls starts the server with HTTPS; for a running server give --target https://... "
                "(and --ca-file when its certificate is not from a system root)"
            )
        if tls_version and not tls:
            raise SetupError("--tls-version goes with --tls (it restricts the started server)")
        if ca_file is not None and insecure:
            raise SetupError("--ca-file and --insecure exclude each other: verify against a CA, or not at all")
        if ca_file is not None:
            if not https_target:
                raise SetupError("--ca-file goes with --target https://... (with --tls the server's own CA is used)")
            if not ca_file.is_file():
                raise SetupError(f"--ca-file {ca_file}: no such file")
        if insecure and not (tls or https_target):
            raise SetupError("--insecure goes with --tls or --target https://...")
        if hosts > 1 and target:
            raise SetupError("--hosts serves the started server on several origins; a --target's origins are its own")
        if hosts > 1 and network is not None:
            raise SetupError("--hosts does not go with --network (the emulating proxy listens on one origin)")
        if hosts > MAX_HOSTS:
            raise SetupError(f"--hosts {hosts}: at most {MAX_HOSTS} loopback origins")
        return cls(
            target=target,
            server_threads=server_threads,
            row_timeout_s=row_timeout_s,
            out=out,
            network=network,
            tls=tls,
            tls_version=tls_version,
            ca_file=str(ca_file.resolve()) if ca_file else None,
            insecure=insecure,
            pin=pin,
            exports=exports,
            hosts=hosts,
            targets_file=targets.resolve() if targets is not None else None,
            targets=tuple(parse(targets)) if targets is not None else (),
        )


def check_together(workload: Workload, options: Options) -> None:
    """What the workload asks of where the requests go: HTTP/3 is QUIC, whose handshake is TLS 1.3."""
    if workload.http == "3" and options.scheme != "https":
        raise SetupError("--http 3 is HTTP/3 over QUIC, which needs TLS: add --tls, or give --target https://...")
    network = options.network
    if network is not None and network.loss_pct and workload.http != "3":
        raise SetupError(
            "--network loss= drops datagrams, which only QUIC carries: add --http 3 (a proxy in front of "
            "TCP cannot drop what TCP retransmits below it)"
        )
    if network is not None and network.rate_kbit and workload.http == "3":
        raise SetupError("--network rate= is not emulated over QUIC: the UDP relay delays and drops, it does not shape")
    if options.hosts > 1 and options.targets_file is None and workload.method != "GET":
        raise SetupError(f"--hosts with --method {workload.method}: give the uploads as --targets (a body file each)")
