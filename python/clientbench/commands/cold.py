"""`clientbench cold`: what a cold start costs each row: a new process per sample, from its start to the library
imported, the client built, a first and a second request, and its peak RSS (docs/cold-start.md).

Each selected row runs once untimed (so that the OS's file cache holds its files, as it does for a program run
twice), a Python row once more under `python -X importtime` (the check of its import figure, and the heaviest parts
of its import for the reading), then N samples, the rows in turns so that a slow spell of the machine falls on all
of them. execution/cold_start.py runs one sample; metrics.py names the figures; stats.py gives each figure's
median and spread; cold.json (schema/cold.schema.json), cold.md, cold.csv and report.html are written as every
command writes its own."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import arguments
from ..errors import SetupError
from ..model import RunStatus
from ..options import Options
from ..options.rows import select
from ..options.values import positive, request_path, seconds
from ..workload import HTTP_VERSIONS, Workload, WorkloadError

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from ..execution.cold_start import ImportTime, Sample
    from ..registry.spec import ClientSpec
    from . import Command


@dataclass(frozen=True)
class ColdSettings:
    """`clientbench cold`'s own options (the testbed's are `Options`)."""

    samples: int = 10
    http: str = "1.1"
    path: str = "/"
    timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise SetupError(f"-n must be at least 1, got {self.samples}")

    def workload(self) -> Workload:
        """The contract's flags of one cold start: one worker, two requests, no warm-up."""
        try:
            return Workload(workers=1, requests=2, warmup=0, timeout_s=self.timeout_s, path=self.path, http=self.http)
        except WorkloadError as exc:
            raise SetupError(str(exc)) from None


@dataclass
class ColdRow:
    """One row's cold starts."""

    spec: ClientSpec
    status: RunStatus = RunStatus.OK
    reason: str | None = None
    argv: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    importtime: ImportTime | None = None

    @property
    def python(self) -> bool:
        return self.spec.is_python

    def stop(self, status: RunStatus, reason: str | None) -> None:
        self.status, self.reason = status, reason

    def to_json(self) -> dict[str, Any]:
        from ..execution.cold_start import module_of
        from ..metrics import of_source
        from ..stats import spread

        fields = [m.field for m in of_source("cold")]  # every figure of a cold start, the registry's

        ok = [s for s in self.samples if s.status is RunStatus.OK]
        failed = [s for s in self.samples if s.status is not RunStatus.OK]
        status, reason = self.status, self.reason
        if status is RunStatus.OK and failed:
            status = RunStatus.FAILED
            reason = f"{len(failed)} of {len(self.samples)} samples failed: {failed[0].reason}"
        info = ok[-1].info if ok else {}
        figures: dict[str, Any] = {}
        for name in fields:
            values = [v for s in ok if (v := s.figures.get(name)) is not None]
            figures[name] = spread(values).to_json() if values else None
        client = self.spec.client
        return {
            "name": self.spec.name,
            "label": self.spec.label,
            "language": client.language,
            "library": info.get("library") or client.library,
            "library_version": info.get("library_version"),
            "mode": info.get("mode") or client.mode,
            "gil": info.get("gil", client.gil),
            "kind": "python" if self.python else "program",
            "module": module_of(self.spec) if self.python else None,
            "status": status.value,
            "reason": reason,
            "command": self.argv or None,
            "protocol": info.get("protocol"),
            "errors": len(failed),
            "figures": figures if ok else {},
            "samples": [
                {"status": s.status.value, "reason": s.reason, "figures": {k: s.figures.get(k) for k in fields}}
                for s in self.samples
            ],
            "importtime": self.importtime.to_json() if self.importtime else None,
        }


def _prepare(row: ColdRow, workload: Workload, url: str, driver_flags: Sequence[str]) -> None:
    from ..environment.binaries import Unavailable
    from ..execution.cold_start import command

    try:
        row.argv = command(row.spec, workload, url, driver_flags)
    except Unavailable as exc:
        row.stop(RunStatus.UNAVAILABLE, f"unavailable: {exc}")
    except SetupError as exc:
        row.stop(RunStatus.FAILED, str(exc))


def add_parser(sub: Subparsers, command: Command) -> None:
    cold = sub.add_parser(
        command.name,
        help=command.help,
        description="Run each selected row N times, each in a new process, and report per row the medians and "
        "spreads of: process start to its library imported, the client's construction, the first request (its "
        "connection, TLS with --tls, the exchange), a second request on the same client, and the peak RSS; the "
        "native rows from exec to their first answer. Writes cold.md, cold.csv and cold.json (docs/cold-start.md).",
    )
    cold.add_argument("-n", "--samples", type=positive, default=10, help="cold starts per row (default 10)")
    cold.add_argument(
        "--http",
        choices=HTTP_VERSIONS,
        default="1.1",
        help="1.1 (default), 2 (ALPN h2 over https, prior knowledge over http) or 3 (QUIC: needs --tls); a row "
        "without it is unsupported",
    )
    cold.add_argument("--path", type=request_path, default="/", help="request path on the server (default '/')")
    cold.add_argument(
        "--timeout", type=seconds, default=30.0, metavar="SECONDS", help="bounds each request (default 30)"
    )
    arguments.add_selection_options(cold)
    arguments.add_session_options(cold)
    arguments.add_export_option(cold)


@dataclass(frozen=True)
class ColdOptions:
    specs: tuple[ClientSpec, ...]
    settings: ColdSettings
    options: Options
    argv: tuple[str, ...]


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> ColdOptions:
    from ..options import check_together

    settings = ColdSettings(samples=args.samples, http=args.http, path=args.path, timeout_s=args.timeout)
    options = arguments.testbed(args)
    check_together(settings.workload(), options)
    return ColdOptions(tuple(select(arguments.rows(args))), settings, options, tuple(argv))


def run(o: ColdOptions) -> int:
    return cold(o.specs, o.settings, o.options, o.argv)


def cold(specs: Sequence[ClientSpec], settings: ColdSettings, options: Options, argv: Sequence[str]) -> int:
    from ..execution.cold_start import importtime, sample
    from ..execution.probe import probe_body_bytes
    from ..execution.testbed import Testbed, link_latest
    from ..report.cold import document as cold_document
    from ..report.cold import terminal
    from ..report.export import export
    from ..report.parts import cold_part
    from ..schema import COLD_ID
    from .output import header

    workload = settings.workload()
    rows = [ColdRow(spec) for spec in specs]
    testbed = Testbed(options, argv, kind="cold", http=(settings.http,))
    cpus = options.pin.client if options.pin else None
    with testbed:
        endpoint = testbed.endpoint
        url = endpoint.url + settings.path
        expected = probe_body_bytes(url, settings.timeout_s, endpoint.trust, http=settings.http)
        testbed.console.print(
            f"[bold]clientbench cold[/]: {len(rows)} clients x {settings.samples} cold starts -> {url}"
            + ("" if settings.http == "1.1" else f" (HTTP/{settings.http})")
        )
        timeout = min(options.row_timeout_s, 2 * settings.timeout_s + 60)

        def once(row: ColdRow, seed: int, options_: Sequence[str] = ()) -> Sample:
            got = sample(
                row.spec,
                row.argv,
                expected_bytes=expected,
                timeout_s=timeout,
                hash_seed=seed,
                cpus=cpus,
                interpreter_options=options_,
                workload=workload,
            )
            if got.status is RunStatus.FAILED and got.stderr:  # what it said, for whoever reads the reason
                logs = testbed.out / "logs"
                logs.mkdir(exist_ok=True)
                (logs / f"{row.spec.name}.{seed}.stderr.log").write_text(got.stderr, encoding="utf-8")
            return got

        for row in rows:
            _prepare(row, workload, url, endpoint.driver_flags())
            if row.status is not RunStatus.OK:
                continue
            with testbed.console.status(f"{row.spec.name}: a first, untimed run"):
                first = once(row, 0)
                if first.status is not RunStatus.OK:
                    row.stop(first.status, first.reason)
                    continue
                if row.python:  # the same probe under -X importtime: what it says of the library's import
                    timed = once(row, 0, ("-X", "importtime"))
                    if timed.status is RunStatus.OK:
                        row.importtime = importtime(
                            timed.stderr, str(timed.info.get("module")), timed.figures.get("library_ms")
                        )
        live = [r for r in rows if r.status is RunStatus.OK]
        for i in range(settings.samples):
            for j, row in enumerate(live):
                with testbed.console.status(f"[{i + 1}/{settings.samples}] {row.spec.name} ({j + 1}/{len(live)})"):
                    row.samples.append(once(row, i + 1))
        for row in rows:
            failed = row.status is RunStatus.FAILED or any(x.status is not RunStatus.OK for x in row.samples)
            mark = (
                "[red]FAILED[/]"
                if failed
                else "[green]ok[/]"
                if row.status is RunStatus.OK
                else f"[dim]{row.status.value}[/]"
            )
            testbed.console.print(f"  {row.spec.name:26} {mark}" + (f"  [dim]{row.reason}[/]" if row.reason else ""))
    doc: dict[str, Any] = {
        **header(testbed, COLD_ID),
        "server": testbed.endpoint.url or None,
        "url": (testbed.endpoint.url + settings.path) if testbed.endpoint.url else None,
        "scheme": options.scheme,
        "http": settings.http,
        "path": settings.path,
        "samples": settings.samples,
        "timeout_s": settings.timeout_s,
        "interrupted": testbed.interrupted,
        "rows": [r.to_json() for r in rows],
    }
    report = cold_document(doc)
    report.parts = [cold_part(testbed.out, testbed.out.name, doc, report)]
    export(report, testbed.out, ("json", "markdown", "csv", *options.exports, "html"))
    export(terminal(doc), None, ("terminal",))
    link_latest(testbed.out)
    testbed.console.print(f"results: {testbed.out}")
    if testbed.exit_code is not None:
        return testbed.exit_code
    return 1 if any(r["status"] == "failed" for r in doc["rows"]) else 0
