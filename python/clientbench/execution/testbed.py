"""The testbed of a command that sends requests: an output folder, the server (started, or `--target`),
signal handling and progress display. Used by every command that sends requests (run, sweep, gil, soak)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from rich.console import Console

from .. import __version__
from ..environment.binaries import results_base
from ..environment.machine import capture, udp_counters
from ..model import DriverRun, Results, Row, RunStatus, SweepPoint, TlsSetup
from ..network import Network
from ..options import Options
from ..registry.spec import ClientSpec
from ..targets import Bodies, Entry, host_urls, resolve, write
from ..workload import Workload
from .limits import check_open_files
from .plan import run_plan
from .probe import Trust, check_target, probe_body_bytes
from .server import Server, counters, origins_used
from .sockets import ConnectionCounter, destinations
from .toxiproxy import Toxiproxy, through
from .udp_relay import UdpRelay, through_both


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that every `finally` (server stop, partial results) runs."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def new_results_dir(base: Path | None, kind: str = "") -> Path:
    base = base if base is not None else results_base()
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S") + (f"-{kind}" if kind else "")
    out = base / stamp
    n = 1
    while out.exists():
        n += 1
        out = base / f"{stamp}-{n}"
    out.mkdir(parents=True)
    return out


def link_latest(out: Path) -> None:
    latest, tmp = out.parent / "latest", out.parent / ".latest.tmp"
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        tmp.symlink_to(out.name)
        os.replace(tmp, latest)
    except OSError:
        pass


#: --targets: at most this many distinct targets get the runner's own request (the body-integrity check's
#: reference); past it the check is off
MAX_PROBES = 256


@dataclass(frozen=True)
class Endpoint:
    """Where the drivers send their requests, and what they trust there."""

    url: str  # base URL, no trailing slash
    ca_file: str | None = None  # https: the CA to trust (None: the system roots)
    insecure: bool = False  # https: no verification
    tls_version: str | None = None  # the only TLS version the server accepts (None: its defaults)
    server: Server | None = field(default=None, compare=False, repr=False)  # ours, when we started it

    @property
    def scheme(self) -> str:
        return self.url.split("://", 1)[0].lower()

    @property
    def trust(self) -> Trust:
        """What the runner's probes trust here (execution/probe.py)."""
        return Trust(self.ca_file, self.insecure)

    def driver_flags(self) -> list[str]:
        """The TLS flags every driver gets (docs/raw-format.md): the CA to trust, or --insecure."""
        if self.scheme != "https":
            return []
        if self.insecure:
            return ["--insecure"]
        return ["--ca-file", self.ca_file] if self.ca_file else []


class Testbed:
    """`with Testbed(options, argv) as t:` starts the server (unless --target), stops it and everything else
    it started (more servers, toxiproxy) on every path, turns SIGTERM into an exception, and remembers
    whether the command was interrupted."""

    def __init__(self, options: Options, argv: Sequence[str], kind: str = "", http: Sequence[str] = ("1.1",)):
        self.options = options
        self.http = tuple(http)  # the HTTP versions the command asks for: a --target must answer in each
        self.argv = ["clientbench", *argv]
        self.out = new_results_dir(options.out, kind)
        self.console = Console(stderr=True, highlight=False)
        self.servers: list[Server] = []
        self.server_endpoint = Endpoint("")  # the server itself
        self.endpoint = Endpoint("")  # where the drivers go by default (a proxy, with --network)
        self.toxiproxy: Toxiproxy | None = None
        self.relays: list[UdpRelay] = []
        self._proxies = 0
        self.interrupted: str | None = None
        self._previous: Any = None
        self.environment = capture(self.argv)

    @property
    def base_url(self) -> str:
        return self.endpoint.url

    @property
    def server(self) -> Server | None:
        return self.servers[0] if self.servers else None

    def __enter__(self) -> Testbed:
        self._previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            if self.options.target:
                self.server_endpoint = Endpoint(
                    self.options.target.rstrip("/"), self.options.ca_file, self.options.insecure
                )
                check_target(self.options.target, self.http, self.server_endpoint.trust)
            else:
                tls = self.options.tls
                self.server_endpoint = self.start_server(tls, self.options.tls_version if tls else None)
                if self.options.insecure:
                    self.server_endpoint = dataclasses.replace(self.server_endpoint, insecure=True)
            self.endpoint = self.server_endpoint
            if self.options.network is not None:
                self.endpoint = self.via(self.options.network)
        except BaseException:
            self._stop()
            if not any(self.out.iterdir()):  # nothing measured: leave no empty folder
                self.out.rmdir()
            raise
        return self

    def _targets(self, workload: Workload, endpoint: Endpoint, out: Path) -> tuple[Workload, str, Bodies, list[str]]:
        """--targets / --hosts: the drivers' targets file for this endpoint (targets.txt in `out`, one per endpoint
        of a sweep), the URL the drivers are given (the first target's), what each target moves, and every URL."""
        options = self.options
        entries = options.targets or (Entry("GET", workload.path, None, 0),)
        source = options.targets_file or Path(f"--hosts {options.hosts}")
        bases = host_urls(endpoint.url, options.hosts) if endpoint.server is not None else [endpoint.url]
        targets = resolve(entries, bases, source)
        name = "targets.txt" if not (out / "targets.txt").exists() else f"targets-{len(list(out.glob('targets*')))}.txt"
        path = write(targets, out / name)
        trust, timeout = endpoint.trust, workload.timeout_s
        # the runner's own request to each distinct target: how many bytes its answer has (a target whose answer
        # varies, or too many of them to ask, turns the body-integrity check off)
        distinct = {(t.method, t.url, t.body) for t in targets}
        answers = {
            key: probe_body_bytes(key[1], timeout, trust, key[0], body_file=key[2], http=workload.http)
            for key in (distinct if len(distinct) <= MAX_PROBES else ())
        }
        received = [answers.get((t.method, t.url, t.body)) for t in targets]
        sizes = tuple(t.body_size for t in targets)
        known = tuple(r for r in received if r is not None) if None not in received else None
        return workload.replace(targets=str(path)), targets[0].url, Bodies(sizes, known), [t.url for t in targets]

    def start_server(self, tls: bool = False, tls_version: str | None = None) -> Endpoint:
        """Start a server (the first one, or one more, e.g. per TLS version of a sweep); stopped with us."""
        n = len(self.servers)
        suffix = f"-{n + 1}" if n else ""
        server = Server(
            threads=self.options.server_threads,
            log=self.out / f"server{suffix}.log",
            tls=tls,
            tls_dir=self.out / f"tls{suffix}" if tls else None,
            tls_version=tls_version,
            cpus=self.options.pin.server if self.options.pin else None,
            hosts=self.options.hosts,
        )
        self.servers.append(server)
        with self.console.status("starting the axum server" + (" (HTTPS)" if tls else "")):
            url = server.start()
        return Endpoint(url, server.ca_file, tls_version=tls_version, server=server)

    def via(self, network: Network, endpoint: Endpoint | None = None) -> Endpoint:
        """A new proxy to the server (or `endpoint`) with this network's toxics (toxiproxy starts once)."""
        target = endpoint or self.server_endpoint
        if self.toxiproxy is None:
            cpus = self.options.pin.server if self.options.pin else None  # the network's side, with the server
            self.toxiproxy = Toxiproxy(log=self.out / "toxiproxy.log", cpus=cpus)
            self.toxiproxy.start()
        self._proxies += 1
        name = f"server{self._proxies}"
        if target.scheme != "https":
            url = through(self.toxiproxy, target.url, network, name=name)
        else:  # QUIC too: the UDP relay on the proxy's port number
            cpus = self.options.pin.server if self.options.pin else None
            log = self.out / f"udp-relay{self._proxies}.log"
            url, relay = through_both(self.toxiproxy, target.url, network, name, log, cpus)
            self.relays.append(relay)
        return dataclasses.replace(target, url=url)

    def _stop(self) -> None:
        while self.relays:
            self.relays.pop().stop()
        if self.toxiproxy is not None:
            self.toxiproxy.stop()
            self.toxiproxy = None
        while self.servers:
            self.servers.pop().stop()
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
            self._previous = None

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> bool:
        self._stop()
        if et is KeyboardInterrupt:
            self.interrupted = "interrupted (Ctrl-C)"
        elif et is Terminated:
            self.interrupted = "terminated (SIGTERM)"
        else:
            return False
        self.console.print(f"[red]{self.interrupted}[/]; the server was stopped, partial results are in {self.out}")
        return True  # swallowed: the caller writes partial results and returns exit_code

    def describe(self, workload: Workload) -> str:
        """A table title: the workload, and the network when one is emulated."""
        net = f"; network {self.options.network.describe(quic=workload.http == '3')}" if self.options.network else ""
        pin = f"; {self.options.pin.describe()}" if self.options.pin else ""
        return workload.describe() + net + pin

    @property
    def exit_code(self) -> int | None:
        if self.interrupted is None:
            return None
        return 130 if self.interrupted.startswith("interrupted") else 143

    def results(
        self,
        workload: Workload,
        rows: Sequence[Row],
        network: Network | None = None,
        endpoint: Endpoint | None = None,
        *,
        phase: str | None = None,
        sweep: SweepPoint | None = None,
    ) -> Results:
        """The results document of these rows, as measured on this testbed (through `network` to `endpoint`,
        by default the testbed's own)."""
        network = network or self.options.network
        endpoint = endpoint or self.endpoint
        tls = None
        if endpoint.scheme == "https":
            versions = None if self.options.target else (endpoint.tls_version or "1.2,1.3")
            tls = TlsSetup(endpoint.ca_file, not endpoint.insecure, versions)
        return Results(
            workload=workload,
            rows=list(rows),
            created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            version=__version__,
            command=self.argv,
            server={
                "url": endpoint.url,
                "started_by_clientbench": not self.options.target,
                "threads": None if self.options.target else self.options.server_threads,
            },
            environment=self.environment,
            interrupted=self.interrupted,
            scheme=endpoint.scheme,
            # QUIC went through the UDP relay, not toxiproxy (which relays TCP only)
            network=(
                dataclasses.replace(network, emulator="clientbench udp-relay")
                if network is not None and workload.http == "3" and endpoint.scheme == "https"
                else network
            ),
            tls=tls,
            phase=phase,
            sweep=sweep,
            pin=self.options.pin,
        )

    def run_rows(
        self,
        specs: Sequence[ClientSpec],
        workload: Workload,
        out: Path,
        rows_sink: list[Row],
        endpoint: Endpoint | None = None,
    ) -> list[Row]:
        """Run the plan with progress output; rows are appended to rows_sink as soon as they exist,
        so partial results survive an interrupt."""
        endpoint = endpoint or self.endpoint
        check_open_files(workload.workers, local_server=endpoint.server is not None)
        url = endpoint.url + workload.path
        expected: int | Bodies | None
        urls = [url]
        if self.options.targets or self.options.hosts > 1:
            workload, url, expected, urls = self._targets(workload, endpoint, out)
        else:
            expected = probe_body_bytes(
                url, workload.timeout_s, endpoint.trust, workload.method, workload.body_size, http=workload.http
            )
        repeat = workload.repeat
        total = len(specs) * repeat
        done = 0
        status = self.console.status("")
        status.start()

        server = endpoint.server
        before: list[dict[str, Any] | None] = [None]
        udp_before: list[dict[str, int] | None] = [None]
        # the connections each driver opens, counted on this side (any server): after the runner's own /stats
        # request before the driver, and before the one after it
        counter = ConnectionCounter(
            destinations(urls), http3=workload.http == "3", per_client=workload.connection == "keep-alive"
        )

        def on_start(spec: ClientSpec, rep: int) -> None:
            status.update(f"[{done + 1}/{total}] {spec.name}" + (f" (repeat {rep + 1}/{repeat})" if repeat > 1 else ""))
            before[0] = server.stats_document() if server is not None else None
            udp_before[0] = udp_counters()
            counter.start()

        def on_done(result: DriverRun, rep: int) -> None:
            nonlocal done
            done += 1
            opened = counter.stop()
            result.connections = opened if result.stats is not None else None
            after_doc = server.stats_document() if server is not None and before[0] is not None else None
            if server is not None and after_doc is not None and before[0] is not None:
                after, was = counters(after_doc), counters(before[0])
                # what the driver's process opened (warm-up included), less the runner's own /stats request
                own = {"connections": 1, "tls_handshakes": 1 if endpoint.scheme == "https" else 0, "tls_resumed": 0}
                result.server_counts = {k: after[k] - was[k] - own.get(k, 0) for k in after if k in was}
                if "origin_requests" in after_doc:  # `origins` only grows: the authorities the row's requests went to
                    result.server_counts["origins"] = origins_used(before[0], after_doc, server.own_authority)
            udp_after = udp_counters()
            if udp_after is not None and udp_before[0] is not None:
                result.udp_errors = {k: v - udp_before[0].get(k, 0) for k, v in udp_after.items()}
            s = result.stats
            figures = f"Bench {s.bench_ms:8.2f} ms  errors {s.errors}" if s else "no result"
            mark = (
                "[red]FAILED[/]"
                if result.status is RunStatus.FAILED
                else "[yellow]unsupported[/]"
                if result.status is RunStatus.UNSUPPORTED
                else "[green]ok[/]    "
            )
            rep_txt = f" #{rep + 1}" if repeat > 1 else ""
            self.console.print(
                f"  {result.client.name + rep_txt:26} {mark} {figures}"
                + (f"  [dim]{result.reason}[/]" if result.reason else "")
            )

        try:
            plan_rows = run_plan(
                specs,
                url,
                workload,
                row_timeout_s=self.options.row_timeout_s,
                out_dir=out,
                expected_body_bytes=expected,
                driver_flags=endpoint.driver_flags(),
                on_start=on_start,
                on_done=on_done,
                rows=rows_sink,
                cpus=self.options.pin.client if self.options.pin else None,
                on_spawn=counter.watch,
            )
        finally:
            counter.stop()
            status.stop()
        return plan_rows
