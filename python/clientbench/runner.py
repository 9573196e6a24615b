"""Run drivers, one at a time, each in its own subprocess, and collect their raw documents.

The runner never trusts a driver: a non-zero exit, a timeout, or output that is not a valid
`clientbench.raw/1` document gives a failed row with the reason, and the other rows still run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .clients import ClientSpec
from .paths import SetupError
from .schema import InvalidResult, parse_raw
from .server import child_preexec
from .stats import RowStats, row_stats


@dataclass(frozen=True)
class Workload:
    workers: int = 10
    requests: int = 100
    warmup: int = 0
    timeout_s: float = 30.0
    path: str = "/"

    def flags(self, url: str) -> list[str]:
        return ["--url", url, "--workers", str(self.workers), "--requests", str(self.requests),
                "--warmup", str(self.warmup), "--timeout", f"{self.timeout_s:g}"]


@dataclass
class RowResult:
    spec: ClientSpec
    ok: bool  # the driver ran and printed a valid document (requests may still have failed)
    reason: str | None = None
    raw: dict[str, Any] | None = None
    stats: RowStats | None = None
    returncode: int | None = None
    duration_s: float = 0.0
    command: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """A row that counts against the run: the driver failed, or any request failed."""
        return not self.ok or (self.stats is not None and self.stats.errors > 0)

    def client_json(self) -> dict[str, Any]:
        client = dict(self.raw["client"]) if self.raw else {
            "language": self.spec.language, "library": self.spec.library, "library_version": None,
            "mode": self.spec.mode, "gil": self.spec.gil}
        return {"name": self.spec.name, **client}

    def to_json(self, raw_file: str | None) -> dict[str, Any]:
        return {
            "client": self.client_json(),
            "status": "ok" if not self.failed else "failed",
            "reason": self.reason,
            "returncode": self.returncode,
            "duration_s": round(self.duration_s, 3),
            "command": self.command,
            "stats": self.stats.to_json() if self.stats else None,
            "raw": raw_file,
        }


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _terminate(proc: subprocess.Popen[str]) -> None:
    """Stop a driver and everything it started (it runs in its own process group)."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_driver(spec: ClientSpec, url: str, workload: Workload, *, row_timeout_s: float,
               log_dir: Path | None = None) -> RowResult:
    started = time.monotonic()
    try:
        argv = spec.argv() + workload.flags(url)
    except SetupError as exc:
        return RowResult(spec, ok=False, reason=str(exc))
    result = RowResult(spec, ok=False, command=argv)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, preexec_fn=_driver_preexec)
    try:
        out, err = proc.communicate(timeout=row_timeout_s)
    except subprocess.TimeoutExpired:
        _terminate(proc)
        out, err = proc.communicate()
        result.reason = f"timed out after {row_timeout_s:g} s"
    except BaseException:  # Ctrl-C / SIGTERM while a driver runs: take it down with us
        _terminate(proc)
        proc.communicate()
        raise
    result.returncode = proc.returncode
    result.duration_s = time.monotonic() - started
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / f"{spec.name}.stderr.log").write_text(err or "", encoding="utf-8")
        (log_dir / f"{spec.name}.stdout.log").write_text(out or "", encoding="utf-8")
    if result.reason:
        return result
    if proc.returncode != 0:
        what = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exited with status {proc.returncode}"
        tail = _last_line(err)
        result.reason = f"driver {what}" + (f": {tail}" if tail else "")
        return result
    try:
        result.raw = parse_raw(out)
    except InvalidResult as exc:
        result.reason = str(exc)
        return result
    result.ok = True
    result.stats = row_stats(result.raw)
    if result.stats.errors:
        reasons = sorted({f["reason"] for w in result.raw["workers"] for f in w["failures"]})
        result.reason = f"{result.stats.errors} of {result.stats.requests} requests failed: " + "; ".join(reasons[:3])
    return result


def _driver_preexec() -> None:
    os.setpgid(0, 0)  # own process group, so a hung driver and its children can be killed together
    child_preexec()


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def run_rows(specs: list[ClientSpec], url: str, workload: Workload, *, row_timeout_s: float,
             out_dir: Path | None, on_start: Callable[[ClientSpec], None] = lambda s: None,
             on_done: Callable[[RowResult], None] = lambda r: None) -> list[RowResult]:
    results: list[RowResult] = []
    for spec in specs:
        on_start(spec)
        row = run_driver(spec, url, workload, row_timeout_s=row_timeout_s,
                         log_dir=out_dir / "logs" if out_dir else None)
        if out_dir is not None and row.raw is not None:
            (out_dir / "raw").mkdir(parents=True, exist_ok=True)
            write_atomic(out_dir / "raw" / f"{spec.name}.json", json.dumps(row.raw) + "\n")
        results.append(row)
        on_done(row)
    return results
