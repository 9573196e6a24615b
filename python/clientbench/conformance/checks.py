"""The driver contract's conformance suite (`clientbench check-driver`, docs/bring-your-own-client.md): every
check runs the driver like the runner does (execution/driver_process.py: its own process group, the row timeout, the
document validated) and says pass, fail or not supported, with why, in one line.

The checks: a closed keep-alive loop with a warm-up (exit 0, a valid clientbench.raw/2 document of the
workload asked for, exactly N samples per worker, every body byte of GET /bytes/100000, W connections counted
by the server); a new connection per request (W x N connections) recorded as histograms; usage errors (exit
2, one line on stderr naming the flag); uploads (the answer's bytes, and a wrong answer counted); each
failure counted with its class (a 500, a stall past --timeout, a reset mid-body, a truncated body, a refused
connection, an untrusted CA); https with --ca-file; the open loop. A driver that cannot upload or has no open
loop says so with exit 3 and one line `unsupported: ...` (or refuses the flag with exit 2): reported as not
supported.
"""

from __future__ import annotations

import itertools
import math
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..execution.driver_process import run_driver
from ..execution.server import Server
from ..model import DriverRun
from ..registry.spec import ClientSpec
from ..schema import RAW_SCHEMA_ID
from ..workload import Workload
from .faults import FaultServer

PASS, FAIL, SKIP = "pass", "fail", "not supported"
HELLO = 13  # the body of the server's `/`
BODY = 100_000  # the closed loop's body
#: the timeout of the stall check (s), and how long the server stalls
STALL_TIMEOUT_S, STALL_MS = 1.0, 3000
#: the open loop's --duration check
OPEN_DURATION_S = 0.5


@dataclass(frozen=True)
class Outcome:
    check: str
    status: str  # PASS, FAIL or SKIP
    why: str

    @property
    def failed(self) -> bool:
        return self.status == FAIL


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
    log_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="clientbench-check-")))
    _tags: Iterator[int] = field(default_factory=itertools.count)

    def run(
        self, url: str, workload: Workload, flags: Sequence[str] = (), expected_body_bytes: int | None = None
    ) -> DriverRun:
        return self.run_logged(url, workload, flags, expected_body_bytes)[0]

    def run_logged(
        self, url: str, workload: Workload, flags: Sequence[str] = (), expected_body_bytes: int | None = None
    ) -> tuple[DriverRun, list[str]]:
        """A run of the driver, as the runner does it, and the lines of its stderr."""
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


# -- the checks ------------------------------------------------------------------------------------------


def usage_errors(s: Suite) -> Iterator[Outcome]:
    """Bad flags: exit 2 and one line on stderr that names the flag (docs/raw-format.md, "Command line")."""
    url = s.bed.http.url + "/"
    cases = [
        ("--rate 0", ["--rate", "0"], "--rate"),
        ("--duration with --requests", ["--duration", "1"], "--duration"),
        ("--body-size with GET", ["--body-size", "10"], "--body-size"),
        ("an unknown flag", ["--no-such-flag"], "--no-such-flag"),
    ]
    for what, flags, flag in cases:
        name = f"usage: {what}"
        run, lines = s.run_logged(url, Workload(workers=1, requests=1, warmup=0, timeout_s=5), flags)
        if run.returncode != 2:
            got = "printed a document" if run.raw is not None else run.reason
            yield Outcome(name, FAIL, f"exit status {run.returncode}, expected 2 ({got})")
        elif len(lines) != 1:
            yield Outcome(name, FAIL, f"exit 2, but {len(lines)} lines on stderr, expected one")
        elif flag not in lines[0]:
            yield Outcome(name, FAIL, f"exit 2, but the message does not name {flag}: {lines[0][:160]}")
        else:
            yield Outcome(name, PASS, f"exit 2: {lines[0][:120]}")


def closed_loop(s: Suite) -> Iterator[Outcome]:
    """A closed keep-alive GET loop with a warm-up: the document, its samples, bytes and connections."""
    w, n = _workers(s.spec, 2), 5
    run, connections = s.counted(f"/bytes/{BODY}", Workload(workers=2, requests=n, warmup=2, timeout_s=10))
    yield (
        Outcome("exit status 0", PASS, "exit 0 with a document on stdout")
        if run.returncode == 0
        else Outcome("exit status 0", FAIL, run.reason or f"exit status {run.returncode}")
    )
    bad = _document("valid document", run)
    if bad is not None:
        yield bad
        for name in ("samples", f"body integrity: GET /bytes/{BODY}", "connections: keep-alive"):
            yield Outcome(name, FAIL, "no valid document")
        return
    assert run.raw is not None and run.stats is not None
    schema = run.raw["schema"]
    yield Outcome(
        "valid document",
        PASS if schema == RAW_SCHEMA_ID else FAIL,
        f"{schema}: schema, counts and the workload asked for"
        + ("" if schema == RAW_SCHEMA_ID else f" (a driver prints {RAW_SCHEMA_ID}: --rate, --method need it)"),
    )
    counts = [len(x.get("latencies_ns", [])) for x in run.raw["workers"]]
    yield Outcome(
        "samples",
        PASS if counts == [n] * w else FAIL,
        f"{w} workers x {n} samples" if counts == [n] * w else f"samples per worker {counts}, expected {[n] * w}",
    )
    yield _ok(f"body integrity: GET /bytes/{BODY}", run, BODY)
    if connections is None:
        yield Outcome("connections: keep-alive", FAIL, "the server's /stats did not answer")
    else:
        yield Outcome(
            "connections: keep-alive",
            PASS if connections == w else FAIL,
            f"the server counted {connections} connection(s) for {w} workers (warm-up included)"
            + ("" if connections == w else f", expected {w}: one per worker"),
        )


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


def new_connections(s: Suite) -> Iterator[Outcome]:
    """A new connection for every timed request (no warm-up: no connection before the gate), recorded as
    histograms."""
    w, n = _workers(s.spec, 2), 4
    wl = Workload(workers=2, requests=n, warmup=0, timeout_s=10, connection="new")
    run, connections = s.counted("/", wl, ["--record", "histogram"])
    name = "connections: --connection new"
    bad = _document(name, run)
    if bad is not None:
        yield bad
        yield Outcome("--record histogram", FAIL, "no valid document")
        return
    if connections is None:
        yield Outcome(name, FAIL, "the server's /stats did not answer")
    elif connections != w * n:
        yield Outcome(name, FAIL, f"the server counted {connections} connections, expected {w} x {n} = {w * n}")
    else:
        ok = _ok(name, run, HELLO)
        yield ok if ok.failed else Outcome(name, PASS, f"{connections} connections for {w} x {n} requests")
    assert run.raw is not None
    held = [sum(c for _, c in x.get("histograms", {}).get("service", {}).get("counts", [])) for x in run.raw["workers"]]
    yield Outcome(
        "--record histogram",
        PASS if held == [n] * w else FAIL,
        f"service-time histograms of {held} requests" + ("" if held == [n] * w else f", expected {[n] * w}"),
    )


def uploads(s: Suite) -> Iterator[Outcome]:
    from ..harness.options import upload_answer, upload_body

    size = 70_000
    answer = upload_answer(upload_body(size))
    wl = Workload(workers=2, requests=3, warmup=0, timeout_s=10, method="PUT", body_size=size)
    run, lines = s.run_logged(s.bed.http.url + "/upload", wl)
    name = f"upload: PUT /upload, {size} bytes"
    refused = _refused(name, run, lines)
    if refused is not None:
        yield refused
        yield Outcome("upload: a wrong answer counted", refused.status, "no uploads")
        return
    yield _document(name, run) or _ok(name, run, len(answer))
    wl = Workload(workers=2, requests=2, warmup=0, timeout_s=10, method="POST", body_size=30)
    run = s.run(s.bed.http.url + "/echo", wl)  # answers the body itself, not its length and digest
    yield _document("upload: a wrong answer counted", run) or _failed_with(
        "upload: a wrong answer counted", run, "Error: upload digest mismatch:"
    )


def _refused(name: str, run: DriverRun, lines: list[str]) -> Outcome | None:
    """What the driver cannot do (docs/raw-format.md, "Exit status"): exit 3 with one line `unsupported: ...`
    is not supported; so is a usage error (exit 2, a driver that does not know the flag), said as such; None
    when the driver ran."""
    said = lines[-1][:160] if lines else "nothing on stderr"
    if run.returncode == 3:
        if len(lines) == 1 and lines[0].startswith("unsupported: "):
            return Outcome(name, SKIP, lines[0][:160])
        return Outcome(name, FAIL, f"exit 3 without one line 'unsupported: ...' on stderr: {said}")
    if run.returncode == 2:
        return Outcome(name, SKIP, f"refused as bad usage (exit 2; the contract's way is exit 3): {said}")
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


def faults(s: Suite) -> Iterator[Outcome]:
    """Each fault a counted failure with its class (docs/raw-format.md, "Failure reasons"), exit 0."""
    bed = s.bed
    cases: list[tuple[str, str, Workload, list[str], str, int | None]] = [
        ("fault: status 500", bed.http.url + "/status/500", Workload(2, 2, 0, 10), [], "status 500", 500),
        (
            f"fault: stall past --timeout {STALL_TIMEOUT_S:g}",
            f"{bed.http.url}/delay/{STALL_MS}",
            Workload(2, 1, 0, STALL_TIMEOUT_S),
            [],
            "TimeoutError",
            None,
        ),
        ("fault: reset mid-body", bed.faults.url + "/reset", Workload(2, 2, 0, 10), [], "ConnectionError", None),
        ("fault: truncated body", bed.faults.url + "/truncated", Workload(2, 2, 0, 10), [], "ConnectionError", None),
        ("fault: connection refused", bed.closed_port_url, Workload(2, 2, 0, 10), [], "ConnectionError", None),
        ("fault: untrusted CA", bed.https.url + "/", Workload(2, 2, 0, 10), [], "TLSError", None),
    ]
    for name, url, wl, flags, prefix, status in cases:
        run = s.run(url, wl, flags)
        bad = _document(name, run)
        if bad is None and run.returncode != 0:
            bad = Outcome(name, FAIL, f"exit status {run.returncode}: failed requests are data, exit 0")
        yield bad or _failed_with(name, run, prefix, status)


def https(s: Suite) -> Iterator[Outcome]:
    ca = s.bed.https.ca_file
    assert ca is not None
    run = s.run(s.bed.https.url + "/", Workload(2, 3, 1, 10), ["--ca-file", ca])
    name = "https: --ca-file"
    yield _document(name, run) or _ok(name, run, HELLO)


def open_loop(s: Suite) -> Iterator[Outcome]:
    """--rate R --requests N: every worker on its schedule; --rate with --duration D: it stops by itself."""
    w, n, rate = _workers(s.spec, 2), 4, 200.0
    name = f"open loop: --rate {rate:g} --requests {n}"
    run, lines = s.run_logged(s.bed.http.url + "/", Workload(2, n, 0, 10, rate=rate))
    refused = _refused(name, run, lines)
    if refused is not None:
        yield refused
        yield Outcome(f"open loop: --duration {OPEN_DURATION_S:g}", refused.status, "no open loop")
        return
    bad = _document(name, run)
    if bad is None:
        assert run.raw is not None
        yield _on_schedule(name, run.raw, w, rate) or _ok(name, run, HELLO)
    else:
        yield bad
    duration = OPEN_DURATION_S
    name = f"open loop: --duration {duration:g}"
    run = s.run(s.bed.http.url + "/", Workload(2, 1, 0, 5, rate=40.0, duration_s=duration))
    bad = _document(name, run)
    if bad is not None:
        yield bad
        return
    assert run.raw is not None
    wrong = []
    for i, worker in enumerate(run.raw["workers"]):
        due = sum(1 for k in range(1000) if (i + k * w) / 40.0 < duration)
        if worker["count"] + worker["missed"] != due:
            wrong.append(f"worker {i} sent {worker['count']} and missed {worker['missed']} of {due} due")
    if wrong:
        yield Outcome(name, FAIL, "; ".join(wrong[:2]))
    elif run.raw["wall_ns"] > (duration + 5) * 1e9:
        yield Outcome(name, FAIL, f"ran {run.raw['wall_ns'] / 1e9:.2f} s: past D plus one timeout")
    else:
        yield _ok(name, run, HELLO)


def _on_schedule(name: str, raw: dict[str, Any], w: int, rate: float) -> Outcome | None:
    wl = raw["workload"]
    if wl.get("loop") != "open" or wl.get("rate") != rate:
        return Outcome(
            name, FAIL, f"asked --rate {rate:g}, the document says loop {wl.get('loop')}, rate {wl.get('rate')}"
        )
    for i, worker in enumerate(raw["workers"]):
        intended = worker.get("intended_ns", [])
        due = [(i + k * w) / rate * 1e9 for k in range(len(intended))]
        if any(not math.isclose(a, b, abs_tol=1000) for a, b in zip(intended, due, strict=True)):
            return Outcome(name, FAIL, f"worker {i}'s intended starts {intended[:3]} are not (w + k W) / R")
        if any(st < it for st, it in zip(worker.get("start_ns", []), intended, strict=False)):
            return Outcome(name, FAIL, f"worker {i} started a request before its intended time")
    return None


#: the checks that count the server's connections: one at a time, on a server of their own
COUNTED: tuple[Check, ...] = (closed_loop, new_connections)
OTHERS: tuple[Check, ...] = (usage_errors, uploads, faults, https, open_loop)
CHECKS = (*COUNTED, *OTHERS)


def _all(check: Check, suite: Suite) -> list[Outcome]:
    return list(check(suite))


def check(
    spec: ClientSpec, bed: Servers, on_outcome: Callable[[Outcome], None] = lambda o: None, jobs: int = 1
) -> list[Outcome]:
    """Every check of one driver, with up to `jobs` driver runs at a time; `on_outcome` sees each outcome in
    the order of CHECKS."""
    suite = Suite(spec, bed)

    def counted() -> list[list[Outcome]]:
        return [_all(c, suite) for c in COUNTED]

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        first = pool.submit(counted)
        rest = [pool.submit(_all, c, suite) for c in OTHERS]
        out: list[Outcome] = []

        def take(group: list[Outcome]) -> None:
            for outcome in group:
                on_outcome(outcome)
                out.append(outcome)

        for group in first.result():
            take(group)
        for future in rest:
            take(future.result())
    return out
