"""`clientbench profile`: where each row spends its time, as a flame graph (docs/profile.md).

Each selected row's driver, the process `run` starts, runs a bounded number of requests under a sampling profiler:

- py-spy for the Python rows: `record --native`, the Python frames with the C, C++ and Rust frames of extensions
  and bindings beneath them, following subprocesses; its speedscope file is kept (profile/<row>.speedscope.json).
- perf for the native rows and any other program (`--driver`): `record -e cpu-clock --call-graph dwarf` (the
  release builds keep no frame pointers; DWARF unwinding needs none), its `perf script` folded by
  inferno-collapse-perf.

Either way the samples become folded stacks (profile/<row>.folded), which inferno-flamegraph draws
(profile/<row>.svg, the harness's frames in blue) and analysis/profile.py reads: the top frames by self time, and
how much of the time was the harness's own. profile.md and report.html show them; profile.json lists the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .. import arguments
from ..analysis.profile import (
    HARNESS,
    ProfileError,
    Summary,
    harness_frames,
    palette_map,
    perf_script_line,
    read_folded,
    speedscope_folded,
    summarize,
    write_folded,
)
from ..environment.binaries import checkout
from ..errors import SetupError
from ..files import write_atomic
from ..options import Options, ProfileSettings
from ..options.rows import select
from ..options.settings import DEFAULT_HZ, MAX_HZ, PROFILERS, rate_hz
from ..options.values import positive, request_path

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from ..registry.spec import ClientSpec
    from . import Command

#: inferno, the flame graphs' folder and renderer (`make inferno` builds this version; the Makefile reads it here)
INFERNO_VERSION = "0.12.8"
#: how long the folding and drawing of one row may take
POST_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Tool:
    what: str  # what it does here
    get: str  # how to get it


TOOLS = {
    "py-spy": Tool("it samples the Python rows", "pip install py-spy (in a checkout: make venv)"),
    "perf": Tool("it samples the native rows", "apt-get install linux-perf (Debian; elsewhere the perf package)"),
    "inferno-collapse-perf": Tool(
        "it folds perf's stacks", f"make inferno, or cargo install inferno --version {INFERNO_VERSION} --locked"
    ),
    "inferno-flamegraph": Tool(
        "it draws the flame graphs", f"make inferno, or cargo install inferno --version {INFERNO_VERSION} --locked"
    ),
}


def find_tool(name: str) -> str:
    """A tool's path: on PATH, then where this project puts it (py-spy beside the runner's interpreter, inferno in a
    checkout's build/bin); SetupError naming it and how to get it."""
    extra: list[str] = []
    if name == "py-spy":
        extra = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    elif name.startswith("inferno-") and (root := checkout()) is not None:
        extra = [str(root / "build" / "bin")]
    for folder in [*os.environ.get("PATH", "").split(os.pathsep), *extra]:
        candidate = Path(folder) / name
        if folder and candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    tool = TOOLS[name]
    raise SetupError(f"{name} is not installed ({tool.what}): {tool.get}")


def check_perf(perf: str) -> None:
    """perf can sample here: one `perf record -e cpu-clock` of a process that does nothing; SetupError with perf's
    own words when it cannot (no perf_event_open in a container, kernel.perf_event_paranoid 3, ...)."""
    with tempfile.TemporaryDirectory(prefix="clientbench-perf-") as tmp:
        argv = [perf, "record", "-e", "cpu-clock", "-o", f"{tmp}/probe.data", "--", sys.executable, "-c", ""]
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise SetupError("perf cannot sample here: `perf record -e cpu-clock` did not finish in 120 s") from None
        except OSError as exc:
            raise SetupError(f"perf cannot sample here: cannot start {perf}: {exc.strerror or exc}") from None
    if r.returncode != 0:
        raise SetupError(perf_failure(r.stderr, r.returncode, _paranoid()))


def _paranoid() -> str | None:
    try:
        return Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip()
    except OSError:
        return None


def perf_failure(stderr: str, returncode: int, paranoid: str | None) -> str:
    """Why perf could not record, in one line: its first words that say something (it opens with `Error:` and
    goes on for a page), and the setting that most often decides it."""
    said = [s for line in stderr.splitlines() if (s := line.strip()) and s != "Error:" and not s.startswith("[ perf")]
    why = said[0].removeprefix("Error: ") if said else f"it exited with status {returncode}"
    setting = f"; kernel.perf_event_paranoid is {paranoid}" if paranoid is not None else ""
    return f"perf cannot sample here: {why} (perf record -e cpu-clock failed{setting})"


def _stem(name: str, taken: set[str]) -> str:
    """A row's file name in profile/ (a --driver row's name may hold any character)."""
    stem = re.sub(r"[^A-Za-z0-9._@+-]", "_", name) or "row"
    out, n = stem, 1
    while out in taken:
        n += 1
        out = f"{stem}-{n}"
    taken.add(out)
    return out


@dataclass
class RowProfile:
    spec: ClientSpec
    tool: str
    rate_hz: int
    stem: str
    status: str = "skipped"  # until it was profiled: ok | failed | unavailable
    reason: str | None = "not profiled: the command was interrupted"
    files: dict[str, str] = field(default_factory=dict)  # svg, folded, speedscope: relative to the folder
    summary: Summary | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.spec.name,
            "label": self.spec.label,
            "status": self.status,
            "reason": self.reason,
            "tool": self.tool,
            "rate_hz": self.rate_hz,
            "unit": "samples" if self.tool == "py-spy" else "ns",
            "files": self.files,
        }


# -- running the tools -----------------------------------------------------------------------------------------


def _last_line(data: bytes) -> str:
    lines = [ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _tool(
    argv: Sequence[str], what: str, *, stdout: IO[bytes] | int = subprocess.PIPE, cwd: str | None = None
) -> bytes:
    """Run a post-processing tool to its end (killed when it runs past POST_TIMEOUT_S or we are interrupted: as
    subprocess.run does); its stdout, or ProfileError with its last word."""
    try:
        r = subprocess.run(
            list(argv), stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=cwd, timeout=POST_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise ProfileError(f"{what} did not finish in {POST_TIMEOUT_S:g} s") from None
    except OSError as exc:
        raise ProfileError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
    if r.returncode != 0:
        raise ProfileError(f"{what} exited with status {r.returncode}: {_last_line(r.stderr) or 'no message'}")
    return r.stdout or b""


def _profiler_error(log: Path) -> str | None:
    """The first `Error: ...` line of a failed run's stderr: py-spy and perf say what went wrong so (py-spy then
    prints a backtrace, whose last line run_driver would quote)."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return next((s.removeprefix("Error: ") for s in lines if s.startswith("Error: ") and s[7:].strip()), None)


def py_spy_prefix(py_spy: str, speedscope: Path, hz: int) -> list[str]:
    """The driver under py-spy. py-spy prints its own lines on stdout, where the driver's document goes: the outer
    shell keeps stdout as fd 3 and gives py-spy stderr, the inner one gives the driver fd 3 back (exec: the same
    process, so py-spy samples the driver itself)."""
    record = [py_spy, "record", "--native", "--subprocesses", "--function", "--rate", str(hz)]
    record += ["--format", "speedscope", "--output", str(speedscope)]
    inner = ["/bin/sh", "-c", 'exec "$@" 1>&3 3>&-', "sh"]
    return ["/bin/sh", "-c", 'exec 3>&1 1>&2; exec "$@"', "sh", *record, "--", *inner]


def perf_prefix(perf: str, data: Path, hz: int) -> list[str]:
    # --no-buildid-cache: no copy of every binary under ~/.debug; the data is read at once, by the same binaries
    return [perf, "record", "-e", "cpu-clock", "-F", str(hz), "--call-graph", "dwarf", "--no-buildid-cache"] + [
        "-o",
        str(data),
        "--",
    ]


def fold_perf(perf: str, collapse: str, data: Path) -> dict[str, int]:
    """perf's samples as folded stacks: `perf script`, its anonymous namespaces renamed (perf_script_line), then
    inferno-collapse-perf --all (kernel frames marked `_[k]`). --no-inline: our release builds carry no debug
    information to name inlined frames by, and looking for it is most of perf script's time."""
    script, tidy = data.with_suffix(".script"), data.with_suffix(".folded-input")
    try:
        with script.open("wb") as out:
            _tool([perf, "script", "--no-inline", "-i", str(data)], "perf script", stdout=out)
        with script.open(encoding="utf-8", errors="replace") as src, tidy.open("w", encoding="utf-8") as dst:
            for line in src:
                dst.write(perf_script_line(line))
        return read_folded(_tool([collapse, "--all", str(tidy)], "inferno-collapse-perf").decode("utf-8", "replace"))
    finally:
        script.unlink(missing_ok=True)
        tidy.unlink(missing_ok=True)


def flame_graph(inferno: str, folded: Path, stacks: dict[str, int], *, title: str, subtitle: str, unit: str) -> str:
    """The SVG of folded stacks, the harness's frames in blue: inferno's consistent palette (--cp) reads them from
    palette.map in its working folder (and writes the other frames' colours back: a scratch folder)."""
    with tempfile.TemporaryDirectory(prefix="clientbench-flame-") as tmp:
        Path(tmp, "palette.map").write_text(palette_map(harness_frames(stacks)), encoding="utf-8")
        # a fixed width: a fluid one ("100%") is read by the SVG's script at load, and an iframe not yet laid out
        # (a busy machine) gave it 0: negative frame widths, a console error and no graph
        argv = [inferno, "--cp", "--deterministic", "--width", "1200", "--title", title, "--subtitle", subtitle,
                "--countname", unit]  # fmt: skip
        return _tool([*argv, str(folded.resolve())], "inferno-flamegraph", cwd=tmp).decode("utf-8", "replace")


def profile_row(
    row: RowProfile,
    tools: dict[str, str],
    settings: ProfileSettings,
    options: Options,
    *,
    url: str,
    out: Path,
    expected_body_bytes: int | None,
    driver_flags: Sequence[str],
) -> None:
    """Run one row's driver under its profiler, then fold, summarize and draw what it sampled; the row says how
    it went."""
    from ..execution.driver_process import run_driver
    from ..model import RunStatus
    from ..workload import Workload

    row.reason = "the command was interrupted while it was profiled"
    folder = out / "profile"
    folder.mkdir(parents=True, exist_ok=True)
    (out / "raw").mkdir(parents=True, exist_ok=True)
    speedscope = folder / f"{row.stem}.speedscope.json"
    data = out / "raw" / f"{row.stem}.perf.data"
    if row.tool == "py-spy":
        prefix = py_spy_prefix(tools["py-spy"], speedscope, row.rate_hz)
    else:
        prefix = perf_prefix(tools["perf"], data, row.rate_hz)
    workload = Workload(workers=settings.workers, requests=settings.requests, warmup=0, path=settings.path, repeat=1)
    try:
        result = run_driver(
            row.spec.wrapped(prefix),
            url,
            workload,
            row_timeout_s=options.row_timeout_s,
            log_dir=out / "logs",
            expected_body_bytes=expected_body_bytes,
            tag=".profile",
            driver_flags=driver_flags,
            cpus=options.pin.client if options.pin else None,
        )
        if result.status is RunStatus.UNAVAILABLE:
            row.status, row.reason = "unavailable", result.reason
            return
        if result.status is not RunStatus.OK:
            log = f"logs/{row.spec.name}.profile.stderr.log"
            said = _profiler_error(out / log)  # the profiler's own error, when it failed rather than the driver
            row.status, row.reason = "failed", f"{f'{row.tool}: {said}' if said else result.reason} (its log: {log})"
            return
        if row.tool == "py-spy":
            stacks = speedscope_folded(json.loads(speedscope.read_text(encoding="utf-8")))
        else:
            stacks = fold_perf(tools["perf"], tools["inferno-collapse-perf"], data)
        row.summary = summary = summarize(stacks)
        folded = folder / f"{row.stem}.folded"
        write_atomic(folded, write_folded(stacks))
        unit = "samples" if row.tool == "py-spy" else "ns"
        share = 100 * summary.shares[HARNESS]
        subtitle = f"{row.tool} at {row.rate_hz} Hz; the harness's frames in blue, its own share {share:.1f}%"
        svg = flame_graph(
            tools["inferno-flamegraph"], folded, stacks, title=row.spec.label, subtitle=subtitle, unit=unit
        )
        write_atomic(folder / f"{row.stem}.svg", svg)
        row.files = {"svg": f"profile/{row.stem}.svg", "folded": f"profile/{row.stem}.folded"}
        if row.tool == "py-spy":
            row.files["speedscope"] = f"profile/{row.stem}.speedscope.json"
        row.status, row.reason = "ok", None
    except (ProfileError, OSError, ValueError) as exc:  # ValueError: a speedscope file that is not JSON
        row.status, row.reason = "failed", str(exc)
    finally:
        data.unlink(missing_ok=True)  # perf's samples are in the folded stacks now (DWARF copies are large)
        if row.status != "ok":  # no file of a row that has no profile
            for suffix in (".speedscope.json", ".folded", ".svg"):
                (folder / f"{row.stem}{suffix}").unlink(missing_ok=True)


# -- the command ------------------------------------------------------------------------------------------------


def profile(settings: ProfileSettings, specs: Sequence[ClientSpec], options: Options, argv: Sequence[str]) -> int:
    from rich.markup import escape

    from ..execution.probe import probe_body_bytes
    from ..execution.testbed import Testbed, link_latest
    from ..report import Report
    from ..report import profile as profile_document
    from ..report.export import export
    from ..report.parts import profile_part
    from ..schema import PROFILE_ID
    from .output import header

    taken: set[str] = set()
    rows = [
        RowProfile(spec, tool, settings.rate(tool), _stem(spec.name, taken))
        for spec in specs
        for tool in (settings.tool(spec.is_python),)
    ]
    # before the server starts: a missing or unusable tool is one line
    needed = [t for t in ("py-spy", "perf") if any(r.tool == t for r in rows)]
    needed += ["inferno-collapse-perf"] if "perf" in needed else []
    tools = {name: find_tool(name) for name in [*needed, "inferno-flamegraph"]}
    if "perf" in tools:
        check_perf(tools["perf"])
    testbed = Testbed(options, argv, kind="profile")
    with testbed:
        endpoint = testbed.endpoint
        url = endpoint.url + settings.path
        expected = probe_body_bytes(url, 30, endpoint.trust)
        testbed.console.print(
            f"[bold]clientbench profile[/]: {len(rows)} clients x {settings.requests} requests x {settings.workers} "
            f"worker(s) under py-spy or perf -> {url}"
        )
        for i, row in enumerate(rows, 1):
            with testbed.console.status(f"[{i}/{len(rows)}] {row.spec.name}: {row.tool} at {row.rate_hz} Hz"):
                profile_row(
                    row,
                    tools,
                    settings,
                    options,
                    url=url,
                    out=testbed.out,
                    expected_body_bytes=expected,
                    driver_flags=endpoint.driver_flags(),
                )
            mark = {"ok": "[green]ok[/]", "unavailable": "[dim]unavailable[/]"}.get(row.status, "[red]FAILED[/]")
            said = f"  [dim]{escape(row.reason)}[/]" if row.reason else ""
            testbed.console.print(f"  {escape(row.spec.name):26} {mark}{said}")
    document = {
        **header(testbed, PROFILE_ID),
        "server": testbed.endpoint.url or None,
        "path": settings.path,
        "requests": settings.requests,
        "workers": settings.workers,
        "interrupted": testbed.interrupted,
        "rows": [r.to_json() for r in rows],
    }
    summaries = {r.spec.name: r.summary for r in rows if r.summary is not None and r.status == "ok"}
    flames = {r.files["svg"]: (testbed.out / r.files["svg"]).read_bytes() for r in rows if "svg" in r.files}
    report = profile_document.document(document, summaries)
    report.parts = [profile_part(testbed.out, testbed.out.name, document, report, flames)]
    export(report, testbed.out, ("json", "markdown", "html"))
    export(Report("profile", [profile_document.overview(document, summaries)]), None, ("terminal",))
    link_latest(testbed.out)
    testbed.console.print(f"results: {testbed.out}")
    if testbed.exit_code is not None:
        return testbed.exit_code
    return 1 if any(r.status == "failed" for r in rows) else 0


def add_parser(sub: Subparsers, command: Command) -> None:
    p = sub.add_parser(
        command.name,
        help=command.help,
        description="Run each selected row's driver for a bounded number of requests under a sampling profiler "
        "(py-spy --native for Python rows, perf with DWARF call graphs for native rows and other programs) and "
        "draw a flame graph of it with inferno, clientbench's harness in blue. Writes profile/<row>.svg and "
        ".folded (and py-spy's .speedscope.json), profile.md with each row's top frames by self time and the "
        "harness's share, and report.html (docs/profile.md).",
    )
    p.add_argument(
        "-n", "--requests", type=positive, default=ProfileSettings.requests, help="requests per worker (default 10000)"
    )
    p.add_argument("-w", "--workers", type=positive, default=ProfileSettings.workers, help="workers (default 1)")
    p.add_argument("--path", type=request_path, default="/", help="request path on the server (default '/')")
    p.add_argument(
        "--rate-hz",
        dest="rate_hz",
        type=rate_hz,
        default=None,
        metavar="HZ",
        help=f"samples per second (default {DEFAULT_HZ['py-spy']} for py-spy, {DEFAULT_HZ['perf']} for perf; "
        f"at most {MAX_HZ})",
    )
    p.add_argument(
        "--profiler",
        choices=PROFILERS,
        default="auto",
        help="auto: py-spy for Python rows, perf for the others (default); or one of them for every row",
    )
    arguments.add_selection_options(p)
    arguments.add_session_options(p)


@dataclass(frozen=True)
class ProfileOptions:
    settings: ProfileSettings
    specs: tuple[ClientSpec, ...]
    options: Options
    argv: tuple[str, ...]


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> ProfileOptions:
    settings = ProfileSettings(args.requests, args.workers, args.path, args.rate_hz, args.profiler)
    specs = select(arguments.rows(args))
    return ProfileOptions(settings, tuple(specs), arguments.testbed(args), tuple(argv))


def run(o: ProfileOptions) -> int:
    return profile(o.settings, o.specs, o.options, o.argv)
