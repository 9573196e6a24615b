"""Run drivers, one at a time, each in its own subprocess, and collect their raw documents.

The runner never trusts a driver: a non-zero exit, a timeout, or output that is not a valid
`clientbench.raw/1` document gives a failed row with the reason, and the other rows still run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Sequence

from .clients import ClientSpec
from .paths import SetupError
from .schema import InvalidResult, parse_raw
from .server import child_preexec
from .stats import Aggregate, ProcessUsage, RowStats, aggregate, row_stats


@dataclass(frozen=True)
class Workload:
    workers: int = 10
    requests: int = 100
    warmup: int = 0
    timeout_s: float = 30.0
    path: str = "/"
    connection: str = "keep-alive"  # or "new": a new connection (client) for every request

    def flags(self, url: str) -> list[str]:
        flags = ["--url", url, "--workers", str(self.workers), "--requests", str(self.requests),
                 "--warmup", str(self.warmup), "--timeout", f"{self.timeout_s:g}"]
        if self.connection != "keep-alive":
            flags += ["--connection", self.connection]
        return flags


@dataclass
class RowResult:
    """One run of one driver."""

    spec: ClientSpec
    ok: bool  # the driver ran and printed a valid document (requests may still have failed)
    reason: str | None = None
    raw: dict[str, Any] | None = None
    stats: RowStats | None = None
    returncode: int | None = None
    duration_s: float = 0.0
    command: list[str] = field(default_factory=list)
    usage: ProcessUsage | None = None
    integrity_error: str | None = None
    skipped: bool = False  # an optional client (a peer) that is not installed here
    hash_seed: int | None = None  # PYTHONHASHSEED the driver ran with

    @property
    def failed(self) -> bool:
        """A run that counts against the run: the driver failed, a request failed, or bytes are missing."""
        if self.skipped:
            return False
        return not self.ok or self.integrity_error is not None or (self.stats is not None and self.stats.errors > 0)

    def to_json(self, raw_file: str | None) -> dict[str, Any]:
        return {
            "status": "skipped" if self.skipped else "failed" if self.failed else "ok",
            "reason": self.reason,
            "returncode": self.returncode,
            "duration_s": round(self.duration_s, 3),
            "command": self.command,
            "hash_seed": self.hash_seed,
            "process": {"cpu_s": self.usage.cpu_s, "max_rss_kib": self.usage.max_rss_kib} if self.usage else None,
            "stats": self.stats.to_json() if self.stats else None,
            "raw": raw_file,
        }


@dataclass
class Row:
    """A row of the table: every repeat of one client."""

    spec: ClientSpec
    runs: list[RowResult] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return not self.skipped and (not self.runs or any(r.failed for r in self.runs))

    @property
    def skipped(self) -> bool:
        return bool(self.runs) and all(r.skipped for r in self.runs)

    @property
    def status(self) -> str:
        """ok, failed, skipped (an optional client not installed), or not run (the session was interrupted)."""
        if not self.runs:
            return "not run"
        return "skipped" if self.skipped else "failed" if self.failed else "ok"

    @property
    def reason(self) -> str | None:
        return next((r.reason for r in self.runs if r.reason), None)

    @property
    def aggregate(self) -> Aggregate | None:
        good = [r.stats for r in self.runs if r.stats is not None]
        return aggregate(good) if good else None

    @property
    def raw(self) -> dict[str, Any] | None:
        """The raw document of the last repeat that produced one."""
        return next((r.raw for r in reversed(self.runs) if r.raw is not None), None)

    def client_json(self) -> dict[str, Any]:
        base = {"language": self.spec.language, "library": self.spec.library, "library_version": None,
                "mode": self.spec.mode, "gil": self.spec.gil}
        raw = self.raw
        return {"name": self.spec.name, "label": self.spec.label, **(dict(raw["client"]) if raw else base)}

    def to_json(self) -> dict[str, Any]:
        agg = self.aggregate
        return {
            "client": self.client_json(),
            "status": self.status,
            "reason": self.reason,
            "aggregate": agg.to_json() if agg else None,
            "runs": [r.to_json(f"raw/{self.spec.name}.{i}.json" if r.raw is not None else None)
                     for i, r in enumerate(self.runs)],
        }


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
    decode = lambda chunks: b"".join(chunks).decode("utf-8", "replace")  # noqa: E731
    return decode(out), decode(err), code, usage, timed_out


def run_driver(spec: ClientSpec, url: str, workload: Workload, *, row_timeout_s: float,
               log_dir: Path | None = None, expected_body_bytes: int | None = None,
               tag: str = "", hash_seed: int | None = None) -> RowResult:
    """Run one driver once. `expected_body_bytes` (per request) enables the body-integrity check.

    `hash_seed` sets PYTHONHASHSEED for the driver: a Python process's hash seed changes its memory
    layout, and with it, measurably, its speed (aiohttp on 2 cores: 69 or 90 ms per run depending on the
    seed). The plan gives repeat i the seed i, so every run samples the same set of layouts."""
    started = time.monotonic()
    if spec.fixed_workers is not None:
        workload = dataclasses.replace(workload, workers=spec.fixed_workers)
    try:
        argv = spec.argv() + workload.flags(url)
    except SetupError as exc:
        skipped = spec.optional and spec.needs_module is not None
        return RowResult(spec, ok=False, reason=f"skipped: {exc}" if skipped else str(exc), skipped=skipped)
    result = RowResult(spec, ok=False, command=argv, hash_seed=hash_seed)
    env = None if hash_seed is None else {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            preexec_fn=_driver_preexec, env=env)
    with proc:
        out, err, code, result.usage, timed_out = _collect(proc, row_timeout_s)
    result.returncode = code
    result.duration_s = time.monotonic() - started
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / f"{spec.name}{tag}.stderr.log").write_text(err, encoding="utf-8")
    if timed_out:
        result.reason = f"timed out after {row_timeout_s:g} s"
        return result
    if code != 0:
        what = f"killed by signal {-code}" if code is not None and code < 0 else f"exited with status {code}"
        tail = _last_line(err)
        result.reason = f"driver {what}" + (f": {tail}" if tail else "")
        return result
    try:
        result.raw = parse_raw(out)
    except InvalidResult as exc:
        result.reason = str(exc)
        return result
    result.ok = True
    result.stats = row_stats(result.raw, result.usage)
    s = result.stats
    if s.errors:
        reasons = sorted({f["reason"] for w in result.raw["workers"] for f in w["failures"]})
        result.reason = f"{s.errors} of {s.requests} requests failed: " + "; ".join(reasons[:3])
    elif expected_body_bytes is not None and s.body_bytes != s.requests * expected_body_bytes:
        result.integrity_error = (f"body integrity: received {s.body_bytes} bytes, expected "
                                  f"{s.requests} x {expected_body_bytes} = {s.requests * expected_body_bytes}")
        result.reason = result.integrity_error
    return result


def _driver_preexec() -> None:
    os.setpgid(0, 0)  # own process group, so a hung driver and its children can be killed together
    child_preexec()


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def run_plan(specs: Sequence[ClientSpec], url: str, workload: Workload, *, repeat: int = 1,
             row_timeout_s: float, out_dir: Path | None, expected_body_bytes: int | None = None,
             on_start: Callable[[ClientSpec, int], None] = lambda s, i: None,
             on_done: Callable[[RowResult, int], None] = lambda r, i: None,
             rows: list[Row] | None = None) -> list[Row]:
    """Run every spec `repeat` times, interleaved round-robin (A B C A B C ...), never all repeats of one
    client in a row, so that a slow phase of the machine hits every client alike. The rows are appended
    to `rows` (if given) before the first driver starts, so an interrupted plan leaves partial rows."""
    rows = rows if rows is not None else []
    rows.extend(Row(spec) for spec in specs)
    rows = rows[-len(specs):] if specs else []
    for rep in range(repeat):
        for row in rows:
            if rep and row.skipped:  # not installed here: once is enough
                continue
            on_start(row.spec, rep)
            tag = f".{rep}"
            result = run_driver(row.spec, url, workload, row_timeout_s=row_timeout_s,
                                log_dir=out_dir / "logs" if out_dir else None,
                                expected_body_bytes=expected_body_bytes, tag=tag, hash_seed=rep)
            if out_dir is not None and result.raw is not None:
                (out_dir / "raw").mkdir(parents=True, exist_ok=True)
                write_atomic(out_dir / "raw" / f"{row.spec.name}{tag}.json", json.dumps(result.raw) + "\n")
            row.runs.append(result)
            on_done(result, rep)
    return rows
