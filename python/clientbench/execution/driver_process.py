"""One driver process: run it with the workload's flags, time it out, and validate what it printed.

The runner never trusts a driver: a non-zero exit, a timeout, or output that is not a valid raw document
(`clientbench.raw/2`, or raw/1) gives a failed row with the reason, and the other rows still run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..environment.binaries import Unavailable
from ..errors import SetupError
from ..model import DriverRun, RunStatus
from ..registry.spec import ClientSpec
from ..schema import InvalidResult, parse_raw
from ..stats import ProcessUsage, count, row_stats, time_series
from ..targets import Bodies
from ..workload import Workload, WorkloadError
from .children import child_preexec, pinned
from .limits import MAX_THREADS


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """Stop a driver and everything it started (it runs in its own process group)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return
            except ChildProcessError:  # already reaped (by the waiter thread)
                return
            time.sleep(0.02)


def _reader(stream: IO[bytes], sink: list[bytes]) -> threading.Thread:
    t = threading.Thread(target=lambda: sink.append(stream.read()), daemon=True)
    t.start()
    return t


def _collect(proc: subprocess.Popen[bytes], timeout_s: float) -> tuple[str, str, int | None, ProcessUsage | None, bool]:
    """Read a driver's stdout/stderr and reap it with wait4, so its CPU time and peak RSS are its own.

    The runner blocks (a waiter thread in wait4, the main thread in join) rather than polling: nothing of
    ours wakes up while a driver measures. Returns (stdout, stderr, exit code or -signal, usage, timed_out)."""
    assert proc.stdout and proc.stderr
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [_reader(proc.stdout, out), _reader(proc.stderr, err)]
    reaped: list[tuple[int, int, Any]] = []
    waiter = threading.Thread(target=lambda: reaped.append(os.wait4(proc.pid, 0)), daemon=True)
    waiter.start()
    timed_out = False
    try:
        waiter.join(timeout_s)
        if waiter.is_alive():
            timed_out = True
            _terminate(proc)
            waiter.join()
    except BaseException:  # Ctrl-C / SIGTERM while a driver runs: take it down with us
        _terminate(proc)
        waiter.join(5)
        raise
    for t in readers:
        t.join(timeout=5)
    _, status, rusage = reaped[0]
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # reaped here: keep Popen from waiting again
    usage = ProcessUsage(rusage.ru_utime + rusage.ru_stime, int(rusage.ru_maxrss))
    return _decode(out), _decode(err), code, usage, timed_out


def _decode(chunks: list[bytes]) -> str:
    return b"".join(chunks).decode("utf-8", "replace")


def row_timeout(workload: Workload, row_timeout_s: float) -> float:
    """The time a driver gets: the row timeout (its start-up, warm-up and a closed loop), and for an open loop
    its schedule plus one request's timeout on top (a driver stops by itself then: docs/raw-format.md)."""
    schedule = workload.schedule_s
    return row_timeout_s if schedule is None else row_timeout_s + schedule + workload.timeout_s


def compact(doc: dict[str, Any]) -> None:
    """Per-request arrays as numpy arrays (8 bytes a value instead of a Python int and a list slot): the
    runner keeps every repeat's document for its plots."""
    for w in doc["workers"]:
        for key in ("start_ns", "latencies_ns", "intended_ns"):
            if key in w:
                w[key] = np.asarray(w[key], dtype=np.int64)


def run_driver(
    spec: ClientSpec,
    url: str,
    workload: Workload,
    *,
    row_timeout_s: float,
    log_dir: Path | None = None,
    expected_body_bytes: int | Bodies | None = None,
    tag: str = "",
    hash_seed: int | None = None,
    driver_flags: Sequence[str] = (),
    cpus: frozenset[int] | None = None,
    on_spawn: Callable[[int], None] | None = None,
    replace_flags: bool = False,
) -> DriverRun:
    """Run one driver once (on `cpus` with --pin). `expected_body_bytes` (per request, or per target of
    --targets) enables the body-integrity check; `on_spawn` gets the driver's process id once it runs. With
    `replace_flags`, a flag of `driver_flags` takes the place of the workload's own (the runner gives a driver each
    flag once: docs/raw-format.md).

    `hash_seed` sets PYTHONHASHSEED for the driver: a Python process's hash seed changes its memory
    layout, and with it, measurably, its speed (aiohttp on 2 cores: 69 or 90 ms per run depending on the
    seed). The plan gives repeat i the seed i, so every run samples the same set of layouts."""
    started = time.monotonic()
    if spec.client.mode == "sync" and spec.client.fixed_workers is None and workload.workers > MAX_THREADS:
        reason = f"unsupported: {workload.workers} workers: a sync row runs a thread per worker, at most {MAX_THREADS}"
        return DriverRun(spec.client, RunStatus.UNSUPPORTED, reason=reason)
    try:
        if spec.client.fixed_workers is not None:
            workload = workload.replace(workers=spec.client.fixed_workers)
        if workload.phases and not spec.phases:
            workload = workload.replace(phases=False)
        flags = workload.flags(url)
        if replace_flags:
            flags = _without(flags, {f for f in driver_flags if f.startswith("--")})
        argv = spec.argv() + flags + list(driver_flags)
    except WorkloadError as exc:  # e.g. a rate too fine for a row's fixed single worker
        return DriverRun(spec.client, RunStatus.FAILED, reason=f"cannot run this workload: {exc}")
    except Unavailable as exc:  # not installed here: the reason says how to get it
        return DriverRun(spec.client, RunStatus.UNAVAILABLE, reason=f"unavailable: {exc}")
    except SetupError as exc:
        return DriverRun(spec.client, RunStatus.FAILED, reason=str(exc))
    timeout_s = row_timeout(workload, row_timeout_s)
    result = DriverRun(spec.client, RunStatus.FAILED, command=argv, hash_seed=hash_seed)
    extra_env = spec.env()
    if hash_seed is not None:
        extra_env["PYTHONHASHSEED"] = str(hash_seed)
    env = {**os.environ, **extra_env} if extra_env else None
    try:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            preexec_fn=pinned(_driver_preexec, cpus),
            env=env,
        )
    except OSError as exc:  # e.g. a script without its #! line, a file that is not a program
        result.reason = f"cannot start the driver {argv[0]}: {exc.strerror or exc}"
        return result
    if on_spawn is not None:
        on_spawn(proc.pid)
    with proc:
        out, err, code, result.usage, timed_out = _collect(proc, timeout_s)
    result.returncode = code
    result.duration_s = time.monotonic() - started
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / f"{spec.name}{tag}.stderr.log").write_text(err, encoding="utf-8")
    if timed_out:
        result.reason = f"timed out after {timeout_s:g} s"
        return result
    if code == 3 and (said := _last_line(err)).startswith("unsupported: "):
        # the client cannot do this at all (docs/raw-format.md, "Exit status"): shown as such, never run otherwise
        result.status, result.reason = RunStatus.UNSUPPORTED, said
        return result
    if code != 0:
        what = f"killed by signal {-code}" if code is not None and code < 0 else f"exited with status {code}"
        tail = _last_line(err)
        result.reason = f"driver {what}" + (f": {tail}" if tail else "")
        return result
    try:
        result.raw = parse_raw(out)
        check_workload(result.raw["workload"], workload)
    except InvalidResult as exc:
        result.raw, result.reason = None, str(exc)
        return result
    result.client = spec.labelled(result.raw["client"])
    counts = [count(w) for w in result.raw["workers"]]
    bodies = expected_body_bytes if isinstance(expected_body_bytes, Bodies) else None
    expected_total: int | None = None
    if bodies is not None:
        expected_total = bodies.received_total(counts)
    elif isinstance(expected_body_bytes, int):
        expected_total = sum(counts) * expected_body_bytes
    try:
        result.stats = s = row_stats(result.raw, result.usage, bodies.sent_total(counts) if bodies else None)
        result.series = time_series(result.raw)
    except ValueError as exc:  # e.g. a histogram bucket beyond what a histogram holds
        result.raw, result.reason = None, f"invalid driver output: {exc}"
        return result
    if s.errors:
        reasons = sorted({f["reason"] for w in result.raw["workers"] for f in w["failures"]})
        result.reason = f"{s.errors} of {s.requests} requests failed: " + "; ".join(reasons[:3])
    elif expected_total is not None and s.body_bytes != expected_total:
        per = f"{s.requests} x {expected_body_bytes} = " if isinstance(expected_body_bytes, int) else ""
        result.reason = f"body integrity: received {s.body_bytes} bytes, expected {per}{expected_total}"
    else:
        result.status = RunStatus.OK
    return result


def _without(flags: list[str], names: set[str]) -> list[str]:
    """The workload's flags without those named (each with its value: every workload flag has one)."""
    out: list[str] = []
    for name, value in zip(flags[::2], flags[1::2], strict=True):
        if name not in names:
            out += [name, value]
    return out


def check_workload(got: dict[str, Any], workload: Workload) -> None:
    """InvalidResult when the document says it ran another workload than the one asked for (fewer requests,
    other workers, a closed loop for an open one, ...): its figures would answer another question."""
    asked: dict[str, Any] = {
        "workers": workload.workers,
        "requests": None if workload.duration_s is not None else workload.requests,
        "duration_s": workload.duration_s,
        "warmup": workload.warmup,
        "connection": workload.connection,
        "loop": "open" if workload.rate is not None else "closed",
        "rate": workload.rate,
        "method": workload.method,
        "body_size": workload.body_size,
        "client_scope": workload.client_scope,
        "http": workload.http,
        "upload": workload.upload,
        "download": workload.download,
    }
    wrong = [f"{k} {got[k]!r} (asked {v!r})" for k, v in asked.items() if k in got and got[k] != v]
    if wrong:
        raise InvalidResult(f"driver ran another workload than asked: {', '.join(wrong)}")


def _driver_preexec() -> None:
    os.setpgid(0, 0)  # own process group, so a hung driver and its children can be killed together
    child_preexec()
