"""The driver contract's conformance suite (`clientbench check-driver`, docs/bring-your-own-client.md): every
check runs the driver like the runner does (execution/driver_process.py: its own process group, the row timeout, the
document validated) and says pass, fail or not supported, with why, in one line.

The checks: a closed keep-alive loop with a warm-up (exit 0, a valid clientbench.raw/2 document of the
workload asked for, exactly N samples per worker, every body byte of GET /bytes/100000, W connections counted
by the server, client.python for a Python driver); a new connection per request (W x N connections) recorded
as histograms, which every driver must record, of the successful requests only; usage errors (exit 2, one line
on stderr naming the flag); uploads (the answer's bytes, a wrong answer counted, a non-200 answer counted by
its status); each failure counted with its class (a 500, a stall past --timeout, a body that trickles past
--timeout, a reset mid-body, a truncated body, a refused connection, an untrusted CA); https with --ca-file;
the open loop (its uniform and its Poisson schedule to the contract's formulas, late starts as the contract
counts them, --duration). A driver that cannot upload or has no open loop says so with exit 3 and one line
`unsupported: ...` (or refuses the flag with exit 2): reported as not supported.
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
#: the Poisson check's seed; the late-start check's service time (ms) on a schedule of one request per 20 ms
POISSON_SEED, LATE_DELAY_MS = 7, 30
#: how close to a request's intended start the previous one may end for either count of late starts to pass (ns)
LATE_SLACK_NS = 100_000


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
    one = Workload(workers=1, requests=1, warmup=0, timeout_s=5)
    # a row with a fixed number of workers gets its own --workers first: the bad one comes after it
    # the bad values come after the workload's own flags (argparse keeps the last): a Workload refuses them itself
    zero_workers = (one, ["--workers", "0"])
    missing = str(s.log_dir / "no-such-ca.pem")
    cases: list[tuple[str, str, Workload, list[str], str]] = [  # (what, --url, workload, flags, flag named)
        ("--rate 0", url, one, ["--rate", "0"], "--rate"),
        ("--duration with --requests", url, one, ["--duration", "1"], "--duration"),
        ("--body-size with GET", url, one, ["--body-size", "10"], "--body-size"),
        ("an unknown flag", url, one, ["--no-such-flag"], "--no-such-flag"),
        ("--workers 0", url, *zero_workers, "--workers"),
        ("--timeout 0", url, one, ["--timeout", "0"], "--timeout"),
        ("--arrival without --rate", url, one, ["--arrival", "poisson"], "--arrival"),
        ("--seed without --rate", url, one, ["--seed", "3"], "--seed"),
        ("--url not http(s)", "ftp://127.0.0.1:1/", one, [], "--url"),
        ("--ca-file with --insecure", url, one, ["--ca-file", missing, "--insecure"], "--ca-file|--insecure"),
        ("--ca-file that does not exist", url, one, ["--ca-file", missing], "--ca-file"),
    ]
    for what, target, workload, flags, flag in cases:
        name = f"usage: {what}"
        run, lines = s.run_logged(target, workload, flags)
        if run.returncode != 2:
            got = "printed a document" if run.raw is not None else run.reason
            yield Outcome(name, FAIL, f"exit status {run.returncode}, expected 2 ({got})")
        elif len(lines) != 1:
            yield Outcome(name, FAIL, f"exit 2, but {len(lines)} lines on stderr, expected one")
        elif not any(f in lines[0] for f in flag.split("|")):  # a|b: either name will do
            named = " or ".join(flag.split("|"))
            yield Outcome(name, FAIL, f"exit 2, but the message does not name {named}: {lines[0][:160]}")
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
        for name in ("samples", f"body integrity: GET /bytes/{BODY}", "connections: keep-alive", PYTHON_CHECK):
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
    yield _python_section(run.raw["client"])


PYTHON_CHECK = "document: client.python"
#: what client.python holds (docs/raw-format.md, "The document"): the schema checks their types
PYTHON_KEYS = ("version", "free_threaded", "gil_enabled", "extensions")


def _python_section(client: dict[str, Any]) -> Outcome:
    """client.python: required of a driver whose client runs in a Python interpreter (language Python), which the
    runner's table reads (free-threaded or not, the GIL, compiled extensions or pure Python); no other needs it."""
    python = client.get("python")
    if client["language"] != "Python":
        return Outcome(PYTHON_CHECK, PASS, f"a {client['language']} driver: client.python is for Python drivers")
    if not isinstance(python, dict):
        return Outcome(PYTHON_CHECK, FAIL, "a Python driver without client.python (the interpreter it ran on)")
    missing = [k for k in PYTHON_KEYS if k not in python]
    if missing:
        return Outcome(PYTHON_CHECK, FAIL, f"client.python lacks {', '.join(missing)}")
    packages = ", ".join(python["extensions"]) or "none"
    return Outcome(PYTHON_CHECK, PASS, f"Python {python['version']}, compiled extensions of: {packages}")


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
        said = f"exit {run.returncode}: every driver records histograms ({run.reason})"  # never `unsupported`
        yield Outcome("--record histogram", FAIL, said if run.returncode in (2, 3) else "no valid document")
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


def histogram_failures(s: Suite) -> Iterator[Outcome]:
    """A histogram holds the successful requests only: of a run whose every request fails, it is empty (the
    runner rejects a document whose histograms do not hold count - failure_count requests)."""
    name = "--record histogram: failures left out"
    run = s.run(s.bed.http.url + "/status/500", Workload(2, 3, 0, 10), ["--record", "histogram"])
    bad = _document(name, run)
    if bad is not None:
        yield bad
        return
    assert run.raw is not None
    held = [sum(c for _, c in w["histograms"]["service"]["counts"]) for w in run.raw["workers"]]
    failed = _failed_with(name, run, "status 500", 500)
    yield failed if failed.failed or any(held) else Outcome(name, PASS, f"{held}: 3 failed requests per worker")


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
        yield Outcome(UPLOAD_STATUS, refused.status, "no uploads")
        return
    yield _document(name, run) or _ok(name, run, len(answer))
    wl = Workload(workers=2, requests=2, warmup=0, timeout_s=10, method="POST", body_size=30)
    run = s.run(s.bed.http.url + "/echo", wl)  # answers the body itself, not its length and digest
    yield _document("upload: a wrong answer counted", run) or _mismatch(run)
    # the fault server reads the body and answers 404 (empty, so no digest): the status is the reason
    run = s.run(s.bed.faults.url + "/upload", wl)
    yield _document(UPLOAD_STATUS, run) or _failed_with(UPLOAD_STATUS, run, "status 404", 404)


UPLOAD_STATUS = "upload: a non-200 answer is its status"


def _mismatch(run: DriverRun) -> Outcome:
    """Every request a digest mismatch, whose `status` is null (only a `status <code>` failure has one)."""
    name = "upload: a wrong answer counted"
    outcome = _failed_with(name, run, "Error: upload digest mismatch:")
    if not outcome.failed and any(f.get("status") is not None for f in _failures(run)):
        return Outcome(name, FAIL, "a digest mismatch has a status; only a `status <code>` failure has one")
    return outcome


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
        (
            f"fault: a body trickling past --timeout {STALL_TIMEOUT_S:g}",  # it bounds the whole request, not a read
            f"{bed.http.url}/drip?bytes=10&duration_ms={STALL_MS}",
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
    """--rate R --requests N: every worker on its schedule, uniform and Poisson, late starts counted as the
    contract says; --rate with --duration D: it stops by itself."""
    w, n, rate = _workers(s.spec, 2), 4, 200.0
    name = f"open loop: --rate {rate:g} --requests {n}"
    uniform = Workload(workers=2, requests=n, warmup=0, timeout_s=10, rate=rate)
    run, lines = s.run_logged(s.bed.http.url + "/", uniform)
    refused = _refused(name, run, lines)
    poisson_name = f"open loop: --arrival poisson --seed {POISSON_SEED}"
    names = (poisson_name, LATE_CHECK, f"open loop: --duration {OPEN_DURATION_S:g}")
    if refused is not None:
        yield refused
        yield from (Outcome(other, refused.status, "no open loop") for other in names)
        return
    yield _document(name, run) or _on_schedule(name, run, w, uniform) or _ok(name, run, HELLO)
    on_time = run
    poisson = uniform.replace(arrival="poisson", seed=POISSON_SEED)
    run = s.run(s.bed.http.url + "/", poisson)
    yield _document(poisson_name, run) or _on_schedule(poisson_name, run, w, poisson) or _ok(poisson_name, run, HELLO)
    # a request of each worker every 20 ms, each taking 30: all but a worker's first start late; and none of
    # the uniform run's, whose requests end long before the next is due (its wake-ups come after I, not late)
    delayed = s.run(f"{s.bed.http.url}/delay/{LATE_DELAY_MS}", uniform.replace(rate=100.0))
    yield _document(LATE_CHECK, on_time) or _document(LATE_CHECK, delayed) or _late_starts(on_time, delayed)
    yield _duration(s, w)


LATE_CHECK = "open loop: late starts"


def _duration(s: Suite, w: int) -> Outcome:
    duration = OPEN_DURATION_S
    name = f"open loop: --duration {duration:g}"
    run = s.run(s.bed.http.url + "/", Workload(2, 1, 0, 5, rate=40.0, duration_s=duration))
    bad = _document(name, run)
    if bad is not None:
        return bad
    assert run.raw is not None
    wrong = []
    for i, worker in enumerate(run.raw["workers"]):
        due = sum(1 for k in range(1000) if (i + k * w) / 40.0 < duration)
        if worker["count"] + worker["missed"] != due:
            wrong.append(f"worker {i} sent {worker['count']} and missed {worker['missed']} of {due} due")
    if wrong:
        return Outcome(name, FAIL, "; ".join(wrong[:2]))
    if run.raw["wall_ns"] > (duration + 5) * 1e9:
        return Outcome(name, FAIL, f"ran {run.raw['wall_ns'] / 1e9:.2f} s: past D plus one timeout")
    return _ok(name, run, HELLO)


def _on_schedule(name: str, run: DriverRun, w: int, asked: Workload) -> Outcome | None:
    """The document says the open loop asked for (its seed only for Poisson arrivals, the one schedule that draws
    from it); every worker's intended starts are the contract's (to the µs), none started early."""
    from ..harness.schedule import intended_ns

    assert run.raw is not None and asked.rate is not None
    wl, rate = run.raw["workload"], asked.rate
    seed = asked.seed if asked.arrival == "poisson" else None
    said = (wl.get("loop"), wl.get("rate"), wl.get("arrival"), wl.get("seed"))
    if said != ("open", rate, asked.arrival, seed):
        return Outcome(
            name,
            FAIL,
            f"loop, rate, arrival, seed: the document says {said}, expected {('open', rate, asked.arrival, seed)}",
        )
    for i, worker in enumerate(run.raw["workers"]):
        intended = worker.get("intended_ns", [])
        due = intended_ns(i, w, rate, asked.arrival, asked.seed)
        if any(not math.isclose(a, b, abs_tol=1000) for a, b in zip(intended, due, strict=False)):
            return Outcome(
                name,
                FAIL,
                f"worker {i}'s intended starts {intended[:3]} are not the contract's {asked.arrival} schedule",
            )
        if any(st < it for st, it in zip(worker.get("start_ns", []), intended, strict=False)):
            return Outcome(name, FAIL, f"worker {i} started a request before its intended time")
    return None


def _late_starts(*runs: DriverRun) -> Outcome:
    """`late` counts the requests k >= 1 whose previous one ended (start + service time) after I(w, k); requests
    that end within LATE_SLACK_NS of it may count either way."""
    counted = []
    for run in runs:
        outcome = _late_of(run)
        if outcome is not None:
            return outcome
        assert run.raw is not None
        counted.append([w["late"] for w in run.raw["workers"]])
    return Outcome(LATE_CHECK, PASS, f"late starts per worker {' and '.join(map(str, counted))}, as the samples say")


def _late_of(run: DriverRun) -> Outcome | None:
    assert run.raw is not None
    for i, w in enumerate(run.raw["workers"]):
        ends = [st + lat for st, lat in zip(w["start_ns"], w["latencies_ns"], strict=True)]
        gaps = [end - due for end, due in zip(ends, w["intended_ns"][1:], strict=False)]
        surely, maybe = sum(g > LATE_SLACK_NS for g in gaps), sum(g > -LATE_SLACK_NS for g in gaps)
        if not surely <= w["late"] <= maybe:
            return Outcome(
                LATE_CHECK,
                FAIL,
                f"worker {i} counts {w['late']} late starts, its samples {surely}: late "
                "is a request whose previous one ended after its intended start",
            )
    if run.stats is not None and run.stats.errors:
        reasons = sorted({f["reason"] for f in _failures(run)})
        return Outcome(LATE_CHECK, FAIL, f"{run.stats.errors} requests failed: {reasons[0][:160]}")
    return None


#: the checks that count the server's connections: one at a time, on a server of their own
COUNTED: tuple[Check, ...] = (closed_loop, new_connections)
OTHERS: tuple[Check, ...] = (usage_errors, uploads, faults, https, open_loop, histogram_failures)
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
