"""What every check of the conformance suite (checks.py) stands on: an outcome, the servers the checks send
requests to, a driver run as the runner does it, and the verdicts shared by the checks."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..execution.driver_process import run_driver
from ..execution.server import Server
from ..model import DriverRun
from ..registry.spec import ClientSpec
from ..targets import Bodies
from ..workload import Workload
from .faults import FaultServer

PASS, FAIL, SKIP = "pass", "fail", "not supported"
#: a check of a rule newer than the contract version the driver's document declares, which it does not meet: told,
#: not failed (docs/raw-format.md, "Versions")
NEW = "new"


@dataclass(frozen=True)
class Outcome:
    check: str
    status: str  # PASS, FAIL, SKIP or NEW
    why: str
    #: the contract version whose rule the check holds the driver to (a failure: the rule it broke)
    since: int = 1

    @property
    def failed(self) -> bool:
        return self.status == FAIL


class Outcomes(list[Outcome]):
    """A driver's outcomes, and the contract version its document declared (None: it printed none)."""

    declared: int | None = None


def versioned(outcome: Outcome, declared: int | None) -> Outcome:
    """The outcome under the rules of the version the driver declares: a check of a rule that came later, which it
    does not meet, is NEW (said so, not failed)."""
    if declared is None or outcome.status == PASS or outcome.since <= declared:
        return outcome
    return Outcome(outcome.check, NEW, f"new in raw/{outcome.since}: {outcome.why}", outcome.since)


@dataclass
class Servers:
    """What the checks send requests to: the axum server, another one that only the checks that count
    connections use (one at a time), the same over https with a throw-away CA, and the fault server."""

    http: Server
    counting: Server
    https: Server
    faults: FaultServer
    closed_port_url: str
    row_timeout_s: float = 60.0


@dataclass
class Suite:
    spec: ClientSpec
    bed: Servers
    log_dir: Path  # the drivers' stderr and the files the checks write; its owner removes it
    _tags: Iterator[int] = field(default_factory=itertools.count)
    #: the contract version the driver's first document declared (closed_loop sets it)
    declared: int | None = None

    def run(
        self, url: str, workload: Workload, flags: Sequence[str] = (), expected_body_bytes: int | Bodies | None = None
    ) -> DriverRun:
        return self.run_logged(url, workload, flags, expected_body_bytes)[0]

    def run_logged(
        self,
        url: str,
        workload: Workload,
        flags: Sequence[str] = (),
        expected_body_bytes: int | Bodies | None = None,
        replace: bool = False,
    ) -> tuple[DriverRun, list[str]]:
        """A run of the driver, as the runner does it, and the lines of its stderr (`replace`: a flag of `flags`
        takes the place of the workload's)."""
        tag = f".{next(self._tags)}"
        run = run_driver(
            self.spec,
            url,
            workload,
            row_timeout_s=self.bed.row_timeout_s,
            log_dir=self.log_dir,
            tag=tag,
            expected_body_bytes=expected_body_bytes,
            driver_flags=flags,
            replace_flags=replace,
        )
        path = self.log_dir / f"{self.spec.name}{tag}.stderr.log"
        err = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        return run, [ln for ln in err.splitlines() if ln.strip()]

    def counted(self, path: str, workload: Workload, flags: Sequence[str] = ()) -> tuple[DriverRun, int | None]:
        """A run against the counting server, and the connections it opened (None: the server did not say)."""
        server = self.bed.counting
        before = server.stats()
        run = self.run(server.url + path, workload, flags)
        after = server.stats()
        if before is None or after is None:
            return run, None
        return run, after["connections"] - before["connections"] - 1  # less the /stats request's own


Check = Callable[[Suite], Iterator[Outcome]]


def _workers(spec: ClientSpec, workers: int) -> int:
    return spec.client.fixed_workers or workers


def _document(name: str, run: DriverRun) -> Outcome | None:
    """A failed outcome when the run gave no valid document, else None."""
    if run.raw is not None and run.stats is not None:
        return None
    if run.returncode not in (0, None):
        return Outcome(name, FAIL, f"no document: {run.reason}")
    return Outcome(name, FAIL, run.reason or "no valid document")


def _failures(run: DriverRun) -> list[dict[str, Any]]:
    assert run.raw is not None
    return [f for w in run.raw["workers"] for f in w["failures"]]


def _ok(name: str, run: DriverRun, body: int) -> Outcome:
    """Every request succeeded and every body byte was counted."""
    assert run.stats is not None
    s = run.stats
    if s.errors:
        reasons = sorted({f["reason"] for f in _failures(run)})
        return Outcome(name, FAIL, f"{s.errors} of {s.requests} requests failed: {'; '.join(reasons[:2])[:200]}")
    if s.body_bytes != s.requests * body:
        return Outcome(name, FAIL, f"received {s.body_bytes} body bytes, expected {s.requests} x {body}")
    return Outcome(name, PASS, f"{s.requests} requests, {s.body_bytes} body bytes")


def _refused(name: str, run: DriverRun, lines: list[str], since: int = 2) -> Outcome | None:
    """What the driver cannot do (docs/raw-format.md, "Exit status"): exit 3 with one line `unsupported: ...`
    is not supported; so is a usage error (exit 2, a driver that does not know the flag), said as such; None
    when the driver ran. `since`: the version of the flags asked for."""
    said = lines[-1][:160] if lines else "nothing on stderr"
    if run.returncode == 3:
        if len(lines) == 1 and lines[0].startswith("unsupported: "):
            return Outcome(name, SKIP, lines[0][:160], since)
        return Outcome(name, FAIL, f"exit 3 without one line 'unsupported: ...' on stderr: {said}", since)
    if run.returncode == 2:
        return Outcome(name, SKIP, f"refused as bad usage (exit 2; the contract's way is exit 3): {said}", since)
    return None


def _failed_with(name: str, run: DriverRun, prefix: str, status: int | None = None) -> Outcome:
    """Every timed request failed, each listed with the reason `prefix` (with `status`), of the class `prefix`,
    or starting with `prefix` (one with a colon)."""
    assert run.stats is not None
    s, failures = run.stats, _failures(run)
    if s.errors != s.requests:
        return Outcome(name, FAIL, f"{s.errors} of {s.requests} requests counted as failed, expected all")
    if len(failures) != s.requests:
        return Outcome(name, FAIL, f"{len(failures)} failures listed, {s.requests} counted")
    if status is not None:
        wrong = [f["reason"] for f in failures if f["reason"] != prefix]
    elif ":" in prefix:  # the start of the message
        wrong = [f["reason"] for f in failures if not f["reason"].startswith(prefix)]
    else:  # `<Class>: <message>` (or the bare class)
        wrong = [f["reason"] for f in failures if f["reason"].split(":", 1)[0] != prefix]
    if wrong:
        return Outcome(name, FAIL, f"reason {wrong[0][:160]!r}, expected {prefix!r}")
    if status is not None and any(f.get("status") != status for f in failures):
        return Outcome(name, FAIL, f"a failure's status is not {status}")
    return Outcome(name, PASS, f"{s.requests} failures: {failures[0]['reason'][:100]}")
