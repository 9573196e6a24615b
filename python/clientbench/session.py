"""One benchmark session: an output folder, the server (started or `--target`), signal handling and
progress display. Used by every subcommand that sends requests (run, sweep, gil)."""

from __future__ import annotations

import datetime as dt
import os
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Sequence

from rich.console import Console

from . import __version__
from .clients import ClientSpec
from .environment import capture
from .paths import SetupError, repo_root
from .report import EXPORTERS, rich_table
from .runner import Row, RowResult, Workload, run_plan, write_atomic
from .server import Server


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


def probe_body_bytes(url: str, timeout: float) -> int | None:
    """Body length of one GET to url (the runner's own reference for the body-integrity check)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return len(r.read()) if r.status == 200 else None
    except (urllib.error.URLError, OSError, ValueError):
        return None


class Session:
    """`with Session(args, argv) as s:` starts the server (unless --target), stops it on every path,
    turns SIGTERM into an exception, and remembers whether the session was interrupted."""

    def __init__(self, args: Any, argv: Sequence[str], kind: str = ""):
        self.args = args
        self.argv = ["clientbench", *argv]
        self.out = new_results_dir(args.out, kind)
        self.console = Console(stderr=True, highlight=False)
        self.server: Server | None = None
        self.base_url: str = ""
        self.interrupted: str | None = None
        self._previous: Any = None
        self.environment = capture(self.argv)

    def __enter__(self) -> "Session":
        self._previous = signal.signal(signal.SIGTERM, _on_sigterm)
        try:
            if self.args.target:
                self.base_url = self.args.target.rstrip("/")
                if probe_body_bytes(self.base_url + "/health", 5) is None and \
                        probe_body_bytes(self.base_url + "/", 5) is None:
                    raise SetupError(f"--target {self.args.target} does not answer HTTP GET")
            else:
                self.server = Server(threads=self.args.server_threads, log=self.out / "server.log")
                with self.console.status("starting the axum server"):
                    self.base_url = self.server.start()
        except BaseException:
            self._stop()
            if self.server is None and not any(self.out.iterdir()):  # nothing measured: leave no empty folder
                self.out.rmdir()
            raise
        return self

    def _stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
            self._previous = None

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> bool:
        self._stop()
        if et is KeyboardInterrupt:
            self.interrupted = "interrupted (Ctrl-C)"
        elif et is Terminated:
            self.interrupted = "terminated (SIGTERM)"
        else:
            return False
        self.console.print(f"[red]{self.interrupted}[/]; the server was stopped, partial results are in "
                           f"{self.out}")
        return True  # swallowed: the caller writes partial results and returns exit_code

    @property
    def exit_code(self) -> int | None:
        if self.interrupted is None:
            return None
        return 130 if self.interrupted.startswith("interrupted") else 143

    def meta(self, workload: Workload, repeat: int, **extra: Any) -> dict[str, Any]:
        return {
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "clientbench_version": __version__,
            "command": self.argv,
            "workload": {"workers": workload.workers, "requests": workload.requests, "warmup": workload.warmup,
                         "timeout_s": workload.timeout_s, "path": workload.path, "repeat": repeat},
            "server": {"url": self.base_url, "started_by_clientbench": not self.args.target,
                       "threads": None if self.args.target else self.args.server_threads},
            "environment": self.environment,
            "complete": self.interrupted is None,
            "interrupted": self.interrupted,
            **extra,
        }

    def run_rows(self, specs: Sequence[ClientSpec], workload: Workload, repeat: int, out: Path,
                 rows_sink: list[Row]) -> list[Row]:
        """Run the plan with progress output; rows are appended to rows_sink as soon as they exist,
        so partial results survive an interrupt."""
        url = self.base_url + workload.path
        expected = probe_body_bytes(url, workload.timeout_s)
        total = len(specs) * repeat
        done = 0
        status = self.console.status("")
        status.start()

        def on_start(spec: ClientSpec, rep: int) -> None:
            status.update(f"[{done + 1}/{total}] {spec.name}" + (f" (repeat {rep + 1}/{repeat})" if repeat > 1 else ""))

        def on_done(result: RowResult, rep: int) -> None:
            nonlocal done
            done += 1
            s = result.stats
            figures = f"Bench {s.bench_ms:8.2f} ms  errors {s.errors}" if s else "no result"
            mark = "[red]FAILED[/]" if result.failed else "[green]ok[/]    "
            rep_txt = f" #{rep + 1}" if repeat > 1 else ""
            self.console.print(f"  {result.spec.name + rep_txt:26} {mark} {figures}"
                               + (f"  [dim]{result.reason}[/]" if result.reason else ""))

        try:
            plan_rows = run_plan(specs, url, workload, repeat=repeat, row_timeout_s=self.args.row_timeout,
                                 out_dir=out, expected_body_bytes=expected, on_start=on_start,
                                 on_done=on_done, rows=rows_sink)
        finally:
            status.stop()
        return plan_rows


def write_reports(rows: Sequence[Row], meta: dict[str, Any], out: Path) -> None:
    for name, export in EXPORTERS.items():
        write_atomic(out / name, export(rows, meta))


def print_table(rows: Sequence[Row], title: str) -> None:
    # not a terminal (CI, a pipe): don't squeeze the table into 80 columns
    Console(width=None if sys.stdout.isatty() else 220).print(rich_table(rows, title=title))
