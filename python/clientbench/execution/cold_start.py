"""One cold start of a row: a process of its own, timed from just before it is started (`clientbench cold`,
docs/cold-start.md).

A Python row runs its cold-start probe (probes/cold_start.py) under the row's interpreter: it imports the row's
library, loads the row's plugin, builds a client and makes two requests, and prints the CLOCK_MONOTONIC stamps of
each step. A row whose driver is a program (cpp-beast, rust-reqwest, a --driver) runs its driver as the contract
says, with one worker, two requests and no warm-up: its document gives the two requests' latencies, and the runner
times the process from before its start to its exit. Both stamp `spawned` with the same clock just before the
process is started (vfork and exec: subprocess's posix fast path, as hyperfine's), so each figure is a difference
of two readings of one clock.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import RunStatus
from ..registry.spec import ClientSpec, PythonDriver
from ..schema import InvalidResult, parse_raw, validate_probe_line
from ..workload import Workload
from .driver_process import check_workload

#: the probe, run as a script (probes/cold_start.py says why)
PROBE = Path(__file__).resolve().parent.parent / "probes" / "cold_start.py"
NS_PER_MS = 1e6
#: what a figure of a sample is: ms, or MiB for the peak RSS
Figures = dict[str, float | None]


def module_of(spec: ClientSpec) -> str:
    """The module whose import is a Python row's `import`: its library (`needs_module`; the row's event loop is
    imported after it, in the same figure), or for a plugin from outside the project, the plugin's own module."""
    assert isinstance(spec.command, PythonDriver)
    return spec.needs_module or spec.command.plugin.partition(":")[0]


def command(spec: ClientSpec, workload: Workload, url: str, driver_flags: Sequence[str]) -> list[str]:
    """The process of one cold start: the probe under the row's interpreter, or the row's driver (Unavailable,
    SetupError when it cannot run here)."""
    # a cold start's figures are the process's own: no phases recorded (what `--phases` costs is not the client's)
    flags = [*workload.replace(phases=False).flags(url), *driver_flags]
    base = spec.argv()  # checks the row's modules (or its executable) are installed
    if isinstance(spec.command, PythonDriver):
        library = ",".join((spec.needs_module, *spec.also_needs)) if spec.needs_module else "-"
        return [base[0], str(PROBE), library, spec.command.plugin, *spec.command.args, *flags]
    return [*base, *flags]


@dataclass
class Spawned:
    spawned_ns: int
    exited_ns: int
    stdout: str
    stderr: str
    code: int | None
    timed_out: bool

    @property
    def total_ms(self) -> float:
        return (self.exited_ns - self.spawned_ns) / NS_PER_MS


def spawn(argv: Sequence[str], env: Mapping[str, str], timeout_s: float, cpus: frozenset[int] | None) -> Spawned:
    """Start a process and wait for its exit, stamping both with CLOCK_MONOTONIC. The process gets its own process
    group (killed whole on a timeout) without a pre-exec function, which would make subprocess fork the runner
    (tens of ms here) instead of vfork; with --pin this thread's affinity is set for the child to inherit, then
    given back."""
    previous = os.sched_getaffinity(0) if cpus else None
    group: dict[str, Any] = {"process_group": 0} if sys.version_info >= (3, 11) else {"start_new_session": True}
    try:
        if cpus:
            os.sched_setaffinity(0, cpus)
        spawned = time.monotonic_ns()
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            **group,
        )
    finally:
        if previous is not None:
            os.sched_setaffinity(0, previous)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
        out, err = proc.communicate()
    except BaseException:  # Ctrl-C, SIGTERM: take the process down with us
        _kill(proc)
        proc.wait()
        raise
    exited = time.monotonic_ns()
    text = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    return Spawned(spawned, exited, *text, proc.returncode, timed_out)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


@dataclass
class Sample:
    """One cold start: its figures (None where the row has no such step), or why it failed."""

    status: RunStatus
    reason: str | None = None
    figures: Figures = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # library, library_version, mode, gil, protocol
    stderr: str = ""


def sample(
    spec: ClientSpec,
    argv: Sequence[str],
    *,
    expected_bytes: int | None,
    timeout_s: float,
    hash_seed: int,
    cpus: frozenset[int] | None = None,
    interpreter_options: Sequence[str] = (),
    workload: Workload,
) -> Sample:
    """Run one cold start of the row and read its figures. `interpreter_options` go before the probe (e.g.
    `-X importtime`)."""
    python = isinstance(spec.command, PythonDriver)
    env = {**os.environ, **spec.env(), "PYTHONHASHSEED": str(hash_seed)}
    if interpreter_options:
        argv = [argv[0], *interpreter_options, *argv[1:]]
    run = spawn(argv, env, timeout_s, cpus)
    if run.timed_out:
        return Sample(RunStatus.FAILED, f"timed out after {timeout_s:g} s", stderr=run.stderr)
    said = _last_line(run.stderr)
    if run.code == 3 and said.startswith("unsupported: "):
        return Sample(RunStatus.UNSUPPORTED, said, stderr=run.stderr)
    if run.code != 0:
        what = f"killed by signal {-run.code}" if run.code is not None and run.code < 0 else f"exit status {run.code}"
        return Sample(RunStatus.FAILED, f"{what}" + (f": {said}" if said else ""), stderr=run.stderr)
    try:
        got = python_figures(run) if python else native_figures(run, workload, expected_bytes)
    except InvalidResult as exc:
        return Sample(RunStatus.FAILED, str(exc), stderr=run.stderr)
    figures, info, answers = got
    reason = _failure(answers, expected_bytes)
    asked = f"HTTP/{workload.http}" if workload.http != "1.1" else None
    if reason is None and asked is not None and info.get("protocol") != asked:
        reason = f"asked {asked}, the responses came over {info.get('protocol') or 'a protocol not reported'}"
    status = RunStatus.OK if reason is None else RunStatus.FAILED
    return Sample(status, reason, figures, info, run.stderr)


def _failure(answers: Sequence[Mapping[str, Any]], expected_bytes: int | None) -> str | None:
    """Why a sample's requests failed (the first reason), or None: each answered 200 with the whole body."""
    for i, a in enumerate(answers):
        which = ("first", "second")[i] if i < 2 else "third"
        if a.get("error"):
            return f"the {which} request failed: {a['error']}"
        if a.get("status") != 200:
            return f"the {which} request: status {a.get('status')}"
        if expected_bytes is not None and a.get("bytes") != expected_bytes:
            return f"the {which} request: {a.get('bytes')} body bytes, expected {expected_bytes}"
    return None


def python_figures(run: Spawned) -> tuple[Figures, dict[str, Any], list[dict[str, Any]]]:
    """A probe's line: the figures from its stamps (docs/cold-start.md says what each spans)."""
    line = _probe_line(run.stdout)
    s = {k: int(v) for k, v in line["stamps_ns"].items()}

    def ms(a: int, b: int) -> float:
        return (b - a) / NS_PER_MS

    imported = ms(run.spawned_ns, s["imported"])
    construct, first = ms(s["construct0"], s["constructed"]), ms(s["first0"], s["first"])
    figures: Figures = {
        "start_ms": ms(run.spawned_ns, s["start"]),
        "import_ms": imported,
        "library_ms": ms(s["import0"], s["imported"]),
        "harness_ms": ms(s["imported"], s["loaded"]),
        "construct_ms": construct,
        "first_ms": first,
        "second_ms": ms(s["second0"], s["second"]),
        # the steps a script would take, without the probe's loading of clientbench between them
        "answer_ms": imported + construct + first,
        "total_ms": run.total_ms,
        "rss_mib": line["peak_rss_kib"] / 1024 if line.get("peak_rss_kib") is not None else None,
    }
    info = {k: line.get(k) for k in ("library", "library_version", "mode", "gil", "protocol", "python", "module")}
    return figures, info, list(line["requests"])


def _probe_line(stdout: str) -> dict[str, Any]:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        raise InvalidResult("the probe printed nothing on stdout")
    import json

    try:
        line = json.loads(lines[-1])
    except ValueError as exc:
        raise InvalidResult(f"the probe's line is not JSON: {exc}") from None
    validate_probe_line(line)
    return dict(line)


def native_figures(
    run: Spawned, workload: Workload, expected_bytes: int | None
) -> tuple[Figures, dict[str, Any], list[dict[str, Any]]]:
    """A driver's document of one worker and two requests: the requests' latencies from the driver's own clock,
    and the time to the first answer from the runner's stamps: the process's whole life less what followed the
    first answer in the driver's timed section (so an upper bound, by what the driver does after its last request:
    its document and its exit)."""
    doc = parse_raw(run.stdout)
    check_workload(doc["workload"], workload)
    (worker,) = doc["workers"]
    failures = {int(f["index"]): str(f["reason"]) for f in worker["failures"]}
    latencies = [int(v) for v in worker.get("latencies_ns") or []]
    starts = [int(v) for v in worker.get("start_ns") or []]
    answers: list[dict[str, Any]] = []
    for i in range(2):
        if i in failures:
            answers.append({"error": failures[i]})
        elif i >= len(latencies):
            answers.append({"error": "the driver recorded no latency for it"})
        else:  # the driver counts any other status as a failure; the bytes are the worker's total
            answers.append({"status": 200, "bytes": expected_bytes})
    if not failures and expected_bytes is not None and int(worker["bytes"]) != 2 * expected_bytes:
        answers.append({"error": f"body integrity: {worker['bytes']} bytes in two answers of {expected_bytes}"})
    figures: Figures = {
        k: None for k in ("start_ms", "import_ms", "library_ms", "harness_ms", "construct_ms", "rss_mib")
    }
    if len(latencies) == 2 and len(starts) == 2:
        first_end = starts[0] + latencies[0]  # ns after the driver's t0
        after_first = (int(doc["wall_ns"]) - first_end) / NS_PER_MS
        figures.update(
            first_ms=latencies[0] / NS_PER_MS,
            second_ms=latencies[1] / NS_PER_MS,
            answer_ms=run.total_ms - after_first,
        )
    figures["total_ms"] = run.total_ms
    if isinstance(doc.get("peak_rss_kib"), int):
        figures["rss_mib"] = doc["peak_rss_kib"] / 1024
    client = doc["client"]
    info = {
        "library": client["library"],
        "library_version": client["library_version"],
        "mode": client["mode"],
        "gil": client["gil"],
        "protocol": client.get("protocol"),
    }
    return figures, info, answers


# -- python -X importtime ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportTime:
    """What `python -X importtime` reported for the library's import in the probe: the cumulative time of the
    modules imported at the top level between the probe's two marks (the library's top module, and its parents
    for a dotted name), and the heaviest modules that top module imported itself."""

    module: str
    import_ms: float
    probe_ms: float | None  # the probe's own figure (library_ms) in the same process
    top: tuple[tuple[str, float], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "module": self.module,
            "import_ms": self.import_ms,
            "probe_ms": self.probe_ms,
            "top": [{"module": m, "cumulative_ms": v} for m, v in self.top],
        }


#: the probe's marks on stderr around the library's import, under -X importtime
MARKS = ("cold_start: import begins", "cold_start: import ends")


def importtime(stderr: str, module: str, probe_ms: float | None, top: int = 3) -> ImportTime | None:
    """The library's import as -X importtime reported it (None when the marks or the module are not there)."""
    lines = stderr.splitlines()
    try:
        begin = lines.index(MARKS[0])
        end = lines.index(MARKS[1], begin)
    except ValueError:
        return None
    entries: list[tuple[int, str, float]] = []  # depth, module, cumulative ms
    for line in lines[begin + 1 : end]:
        if not line.startswith("import time:"):
            continue
        parts = line.split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2][1:]  # one space after the bar, then two per level
        depth = (len(name) - len(name.lstrip(" "))) // 2
        entries.append((depth, name.strip(), int(parts[1]) / 1000))
    total = sum(ms for depth, _, ms in entries if depth == 0)
    if not entries or total <= 0:
        return None
    children: list[tuple[str, float]] = []
    for i, (depth, name, _) in enumerate(entries):
        if depth == 0 and name == module:
            j = i - 1  # a module's own imports are printed before it, one level deeper
            while j >= 0 and entries[j][0] >= 1:
                if entries[j][0] == 1:
                    children.append((entries[j][1], entries[j][2]))
                j -= 1
    heaviest = tuple(sorted(children, key=lambda c: -c[1])[:top])
    return ImportTime(module, total, probe_ms, heaviest)
