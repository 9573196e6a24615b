"""The testbed of a command that sends requests: an output folder, the server (started, or `--target`),
signal handling and progress display. Used by every command that sends requests (run, sweep, gil, soak)."""

from __future__ import annotations

import datetime as dt
import os
import signal
import ssl
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from rich.console import Console

from .. import __version__
from ..errors import SetupError
from ..model import DriverRun, Results, Row
from ..workload import Workload
from .clients import ClientSpec
from .driver import run_plan
from .environment import capture
from .network import Network, Toxiproxy, through
from .paths import repo_root
from .server import Server, https_context


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that every `finally` (server stop, partial results) runs."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def new_results_dir(base: Path | None, kind: str = "") -> Path:
    base = base if base is not None else repo_root() / "results"
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


def probe_body_bytes(url: str, timeout: float, context: ssl.SSLContext | None = None) -> int | None:
    """Body length of one GET to url (the runner's own reference for the body-integrity check)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=context) as r:
            return len(r.read()) if r.status == 200 else None
    except (urllib.error.URLError, OSError, ValueError):
        return None


@dataclass(frozen=True)
class Options:
    """Where the requests go and how the runner treats drivers: resolved once from the command line."""

    target: str | None = None  # an already-running server's base URL, instead of starting server-axum
    server_threads: int | None = None
    row_timeout_s: float = 300.0
    out: Path | None = None  # the parent of the results folder (default: results/)
    network: Network | None = None  # emulated through toxiproxy; None: straight to the server (loopback)
    tls: bool = False  # start the server with HTTPS (a throw-away CA), and give the drivers that CA
    tls_version: str | None = None  # "1.2" or "1.3": the only TLS version the started server accepts
    ca_file: str | None = None  # with --target https://...: the CA to trust (default: the system's roots)
    insecure: bool = False  # with --target https://...: do not verify the certificate

    @property
    def scheme(self) -> str:
        if self.target:
            return self.target.split("://", 1)[0].lower()
        return "https" if self.tls else "http"


class Testbed:
    """`with Testbed(options, argv) as t:` starts the server (unless --target), stops it on every path,
    turns SIGTERM into an exception, and remembers whether the command was interrupted."""

    def __init__(self, options: Options, argv: Sequence[str], kind: str = ""):
        self.options = options
        self.argv = ["clientbench", *argv]
        self.out = new_results_dir(options.out, kind)
        self.console = Console(stderr=True, highlight=False)
        self.server: Server | None = None
        self.base_url: str = ""  # where the drivers send their requests (the proxy's, with a network)
        self.server_url: str = ""  # the server itself
        self.toxiproxy: Toxiproxy | None = None
        self.ca_file: str | None = options.ca_file  # what the drivers trust (the started server's CA with --tls)
        self._proxies = 0
        self.interrupted: str | None = None
        self._previous: Any = None
        self.environment = capture(self.argv)

    def __enter__(self) -> Testbed:
        self._previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            if self.options.target:
                self.base_url = self.options.target.rstrip("/")
                ctx = self.context()
                if (
                    probe_body_bytes(self.base_url + "/health", 5, ctx) is None
                    and probe_body_bytes(self.base_url + "/", 5, ctx) is None
                ):
                    raise SetupError(f"--target {self.options.target} does not answer HTTP GET")
            else:
                self.server = Server(
                    threads=self.options.server_threads,
                    log=self.out / "server.log",
                    tls=self.options.tls,
                    tls_dir=self.out / "tls" if self.options.tls else None,
                    tls_version=self.options.tls_version,
                )
                with self.console.status("starting the axum server"):
                    self.base_url = self.server.start()
                self.ca_file = self.server.ca_file
            self.server_url = self.base_url
            if self.options.network is not None:
                self.base_url = self.via(self.options.network)
        except BaseException:
            self._stop()
            if self.server is None and not any(self.out.iterdir()):  # nothing measured: leave no empty folder
                self.out.rmdir()
            raise
        return self

    def context(self) -> ssl.SSLContext | None:
        """The runner's own TLS settings for its probes (None for plain HTTP)."""
        if self.options.scheme != "https":
            return None
        return https_context(self.ca_file, self.options.insecure)

    def driver_flags(self) -> list[str]:
        """The TLS flags every driver gets (docs/raw-format.md): the CA to trust, or --insecure."""
        if self.options.scheme != "https":
            return []
        if self.options.insecure:
            return ["--insecure"]
        return ["--ca-file", self.ca_file] if self.ca_file else []

    def via(self, network: Network) -> str:
        """The base URL of a new proxy to the server with this network's toxics (toxiproxy starts once)."""
        if self.toxiproxy is None:
            self.toxiproxy = Toxiproxy(log=self.out / "toxiproxy.log")
            self.toxiproxy.start()
        self._proxies += 1
        return through(self.toxiproxy, self.server_url, network, name=f"server{self._proxies}")

    def _stop(self) -> None:
        if self.toxiproxy is not None:
            self.toxiproxy.stop()
            self.toxiproxy = None
        if self.server is not None:
            self.server.stop()
            self.server = None
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
        net = f"; network {self.options.network.describe()}" if self.options.network else ""
        return workload.describe() + net

    @property
    def exit_code(self) -> int | None:
        if self.interrupted is None:
            return None
        return 130 if self.interrupted.startswith("interrupted") else 143

    def results(self, workload: Workload, rows: Sequence[Row], network: Network | None = None, **extra: Any) -> Results:
        """The results document of these rows, as measured on this testbed (through `network`, default the
        testbed's own)."""
        network = network or self.options.network
        tls = None
        if self.options.scheme == "https":
            tls = {
                "ca_file": self.ca_file,
                "verify": not self.options.insecure,
                "server_versions": self.options.tls_version or "1.2,1.3" if self.server else None,
            }
        extra = {"network": network.to_json() if network else None, "scheme": self.options.scheme, "tls": tls, **extra}
        return Results(
            workload=workload,
            rows=list(rows),
            created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            version=__version__,
            command=self.argv,
            server={
                "url": self.base_url,
                "started_by_clientbench": not self.options.target,
                "threads": None if self.options.target else self.options.server_threads,
            },
            environment=self.environment,
            interrupted=self.interrupted,
            extra=extra,
        )

    def run_rows(
        self,
        specs: Sequence[ClientSpec],
        workload: Workload,
        out: Path,
        rows_sink: list[Row],
        base_url: str | None = None,
    ) -> list[Row]:
        """Run the plan with progress output; rows are appended to rows_sink as soon as they exist,
        so partial results survive an interrupt."""
        url = (base_url or self.base_url) + workload.path
        expected = probe_body_bytes(url, workload.timeout_s, self.context())
        repeat = workload.repeat
        total = len(specs) * repeat
        done = 0
        status = self.console.status("")
        status.start()

        def on_start(spec: ClientSpec, rep: int) -> None:
            status.update(f"[{done + 1}/{total}] {spec.name}" + (f" (repeat {rep + 1}/{repeat})" if repeat > 1 else ""))

        def on_done(result: DriverRun, rep: int) -> None:
            nonlocal done
            done += 1
            s = result.stats
            figures = f"Bench {s.bench_ms:8.2f} ms  errors {s.errors}" if s else "no result"
            mark = "[red]FAILED[/]" if result.failed else "[green]ok[/]    "
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
                driver_flags=self.driver_flags(),
                on_start=on_start,
                on_done=on_done,
                rows=rows_sink,
            )
        finally:
            status.stop()
        return plan_rows
