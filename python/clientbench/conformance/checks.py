"""The driver contract's conformance suite (`clientbench check-driver`, docs/bring-your-own-client.md): every
check runs the driver like the runner does (execution/driver_process.py: its own process group, the row timeout, the
document validated) and says pass, fail or not supported, with why, in one line.

The checks: a closed keep-alive loop with a warm-up (exit 0, a valid clientbench.raw/2 document of the
workload asked for, exactly N samples per worker, every body byte of GET /bytes/100000, W connections counted
by the server, client.python for a Python driver); a new connection per request (W x N connections) recorded
as histograms, which every driver must record, of the successful requests only; usage errors (exit 2, one line
on stderr naming the flag); uploads (the answer's bytes, an echo answered back, a wrong answer counted, a
non-200 answer counted by its status); streamed bodies (each direction, both through /echo, a wrong answer read
in chunks); a targets file cycled per worker; each failure counted with its class (a 500, a stall past
--timeout, a body that trickles past --timeout, a reset mid-body, a truncated body, a refused connection, an
untrusted CA); https with --ca-file; the open loop (open_loop.py); --phases accepted (raw/4) and the phases'
sums consistent. A driver that cannot upload, stream a body,
cycle targets or has no open loop says so with exit 3 and one line `unsupported: ...` (or refuses the flag with
exit 2): reported as not supported. What the checks stand on is suite.py.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .. import contract
from ..model import DriverRun
from ..registry.spec import ClientSpec
from ..schema import RAW_SCHEMA_ID
from ..targets import Bodies
from ..workload import Workload
from .open_loop import open_loop
from .suite import (
    FAIL,
    NEW,
    PASS,
    SKIP,
    Check,
    Outcome,
    Outcomes,
    Servers,
    Suite,
    _document,
    _failed_with,
    _failures,
    _ok,
    _refused,
    _workers,
    versioned,
)

__all__ = ["FAIL", "NEW", "PASS", "SKIP", "Check", "Outcome", "Outcomes", "Servers", "Suite", "check", "open_loop"]
HELLO = 13  # the body of the server's `/`
BODY = 100_000  # the closed loop's body
#: the timeout of the stall check (s), and how long the server stalls
STALL_TIMEOUT_S, STALL_MS = 1.0, 3000


# -- the checks ------------------------------------------------------------------------------------------


def usage_errors(s: Suite) -> Iterator[Outcome]:
    """Bad flags: exit 2 and one line on stderr that names the flag (docs/raw-format.md, "Bad usage"): the contract's
    cases marked for check-driver (schema/contract.json), each on a closed loop of one request whose flags it
    replaces where it gives them (each flag once, as the runner gives them)."""
    url = s.bed.http.url + "/"
    one = Workload(workers=1, requests=1, warmup=0, timeout_s=5)
    given = {"ca": s.bed.https.ca_file} if s.bed.https.ca_file else {}
    values = contract.write_files(s.log_dir, url, given)
    for case in contract.check_cases():
        name = f"usage: {case.check}"
        if any(f not in values for f in case.files):
            yield Outcome(name, FAIL, f"check-driver lacks the files {case.files}", case.since)
            continue
        target = case.url.format(**values) if case.url is not None else url
        flags = [a.format(**values) for a in case.args]
        run, lines = s.run_logged(target, one, flags, replace=True)
        if run.returncode != contract.EXIT_USAGE:
            got = "printed a document" if run.raw is not None else run.reason
            yield Outcome(name, FAIL, f"exit status {run.returncode}, expected 2 ({got})", case.since)
        elif len(lines) != 1:
            yield Outcome(name, FAIL, f"exit 2, but {len(lines)} lines on stderr, expected one", case.since)
        elif not any(f in lines[0] for f in case.flag.split("|")):  # a|b: either name will do
            named = " or ".join(case.flag.split("|"))
            yield Outcome(name, FAIL, f"exit 2, but the message does not name {named}: {lines[0][:160]}", case.since)
        else:
            yield Outcome(name, PASS, f"exit 2: {lines[0][:120]}", case.since)


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
    s.declared = contract.version_of(schema)
    if schema == RAW_SCHEMA_ID:
        yield Outcome("valid document", PASS, f"{schema}: schema, counts and the workload asked for")
    elif s.declared is not None and s.declared >= 2:
        yield Outcome(
            "valid document",
            PASS,
            f"{schema}: schema, counts and the workload asked for; checked by raw/{s.declared}'s rules (the "
            f'contract is {RAW_SCHEMA_ID}: docs/raw-format.md, "Versions", says what changed)',
        )
    else:
        yield Outcome("valid document", FAIL, f"{schema}: a driver prints {RAW_SCHEMA_ID} (--rate, --method need it)")
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
        return Outcome(PYTHON_CHECK, FAIL, "a Python driver without client.python (the interpreter it ran on)", 2)
    missing = [k for k in PYTHON_KEYS if k not in python]
    if missing:
        return Outcome(PYTHON_CHECK, FAIL, f"client.python lacks {', '.join(missing)}", 2)
    packages = ", ".join(python["extensions"]) or "none"
    return Outcome(PYTHON_CHECK, PASS, f"Python {python['version']}, compiled extensions of: {packages}")


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
        refused = run.returncode in (2, 3)
        yield Outcome("--record histogram", FAIL, said if refused else "no valid document", 3 if refused else 2)
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
        2,
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
    if any(held) and not failed.failed:
        failed = Outcome(name, FAIL, f"histograms of {held} requests: they hold the successful requests only", 2)
    yield failed if failed.failed else Outcome(name, PASS, f"{held}: 3 failed requests per worker")


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
        for other in (ECHO_CHECK, "upload: a wrong answer counted", UPLOAD_STATUS):
            yield Outcome(other, refused.status, "no uploads")
        return
    yield _at(_document(name, run) or _ok(name, run, len(answer)), 2)
    # /echo answers the body itself: right too; of 67 bytes, the length of its /upload line, whichever it equals
    wl = Workload(workers=2, requests=2, warmup=0, timeout_s=10, method="POST", body_size=ECHOED)
    run = s.run(s.bed.http.url + "/echo", wl)
    yield _at(_document(ECHO_CHECK, run) or _ok(ECHO_CHECK, run, ECHOED), 3)
    run = s.run(s.bed.faults.url + "/wrong", wl)  # neither the /upload line nor the body
    yield _document("upload: a wrong answer counted", run) or _mismatch(run)
    # the fault server reads the body and answers 404 (empty, so no digest): the status is the reason
    run = s.run(s.bed.faults.url + "/upload", wl)
    yield _at(_document(UPLOAD_STATUS, run) or _failed_with(UPLOAD_STATUS, run, "status 404", 404), 3)


UPLOAD_STATUS = "upload: a non-200 answer is its status"
ECHO_CHECK = "upload: POST /echo, the body answered back"
#: the echo check's body: as long as its /upload line ("67 " and 64 hex digits)
ECHOED = 67
#: the streamed checks' body and chunk: a MiB in 16 KiB chunks
STREAMED, CHUNK = 1 << 20, 16 << 10


def streamed(s: Suite) -> Iterator[Outcome]:
    """--upload stream and --download stream (docs/raw-format.md, "Streamed bodies"): each direction alone, both
    ways through /echo, and a wrong answer read in chunks still counted. A client without a streamed form of a
    direction says so (exit 3): not supported."""
    from ..harness.options import upload_answer, upload_body

    url = s.bed.http.url
    up = Workload(2, 2, 0, 10, method="POST", body_size=STREAMED, upload="stream", chunk_size=CHUNK)
    down = Workload(2, 2, 0, 10, download="stream", chunk_size=CHUNK)
    cases = [
        (
            f"stream: --upload stream, {STREAMED} bytes to /upload",
            url + "/upload",
            up,
            len(upload_answer(upload_body(STREAMED))),
        ),
        (f"stream: --download stream, GET /bytes/{STREAMED}", f"{url}/bytes/{STREAMED}", down, STREAMED),
        (f"stream: both ways, POST /echo {STREAMED} bytes", url + "/echo", up.replace(download="stream"), STREAMED),
    ]
    for name, target, wl, body in cases:
        run, lines = s.run_logged(target, wl)
        yield _at(_refused(name, run, lines, 3) or _document(name, run) or _ok(name, run, body), 3)
    name = "stream: a wrong answer read in chunks counted"
    wl = Workload(2, 2, 0, 10, method="POST", body_size=30, download="stream", chunk_size=4)
    run, lines = s.run_logged(s.bed.faults.url + "/wrong", wl)
    refused = _refused(name, run, lines, 3)
    yield _at(refused or _document(name, run) or _mismatch(run, name), 3)


TARGETS_CHECK = "targets: each worker cycles through the file"


def targets(s: Suite) -> Iterator[Outcome]:
    """--targets (docs/raw-format.md, "Targets"): three targets of distinct sizes, a GET twice and an upload, cycled
    from (w + k) mod T: every byte received is what the cycle makes (the runner's own request to each target)."""
    from ..harness.options import upload_answer

    url = s.bed.http.url
    body = s.log_dir / "target-body.bin"
    body.write_bytes(b"seven b")
    listed = s.log_dir / "targets.txt"
    listed.write_text(f"GET {url}/bytes/10\n# a comment\n\nGET {url}/bytes/2000\nPOST {url}/upload @{body}\n")
    bodies = Bodies(sent=(0, 0, 7), received=(10, 2000, len(upload_answer(b"seven b"))))
    wl = Workload(2, 5, 1, 10, targets=str(listed))
    run, lines = s.run_logged(f"{url}/bytes/10", wl, expected_body_bytes=bodies)
    refused = _refused(TARGETS_CHECK, run, lines, 3)
    if refused is not None or (refused := _document(TARGETS_CHECK, run)) is not None:
        yield _at(refused, 3)
        return
    assert run.stats is not None
    if run.reason:
        yield Outcome(TARGETS_CHECK, FAIL, run.reason[:200], 3)
    else:
        yield Outcome(TARGETS_CHECK, PASS, f"{run.stats.requests} requests, {run.stats.body_bytes} body bytes", 3)


def _mismatch(run: DriverRun, name: str = "upload: a wrong answer counted") -> Outcome:
    """Every request a digest mismatch, whose `status` is null (only a `status <code>` failure has one)."""
    outcome = _at(_failed_with(name, run, "Error: upload digest mismatch:"), 2)
    if not outcome.failed and any(f.get("status") is not None for f in _failures(run)):
        return Outcome(name, FAIL, "a digest mismatch has a status; only a `status <code>` failure has one", 3)
    return outcome


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
        # raw/2 had a timeout per request, which a library's per-read timeout met; raw/3's bounds the whole request
        yield _at(bad or _failed_with(name, run, prefix, status), 3 if "trickling" in name else 1)


PHASES_CHECK = "phases: --phases accepted, its sums consistent"


def phases(s: Suite) -> Iterator[Outcome]:
    """`--phases` (raw/4) is accepted; where the client records phases, every worker sums them over at most its
    successful requests, and no phase (nor all of them) takes longer than the requests did."""
    wl = Workload(workers=2, requests=4, warmup=1, timeout_s=10, phases=True)
    run = s.run(s.bed.http.url + "/", wl, [] if s.spec.phases else ["--phases"])
    bad = _document(PHASES_CHECK, run)
    if bad is not None:
        yield _at(bad, 4)
        return
    assert run.raw is not None
    keys = run.raw["client"].get("phases")
    if not keys:
        yield Outcome(PHASES_CHECK, PASS, "accepted; the client records no phase (the table shows -)", 4)
        return
    problems = []
    for i, w in enumerate(run.raw["workers"]):
        ph = w["phases"]
        # each phase lies within its request's time: a millisecond over all of them for clocks read apart
        slack = 1_000_000
        if sum(ph["sum_ns"].values()) > ph["latency_ns"] + slack:
            problems.append(f"worker {i}'s phases add up to {sum(ph['sum_ns'].values())} ns, over its "
                            f"requests' {ph['latency_ns']} ns")  # fmt: skip
        if ph["count"] == 0 and w["count"] > w["failure_count"]:
            problems.append(f"worker {i} recorded the phases of none of its successful requests")
    yield Outcome(
        PHASES_CHECK, FAIL if problems else PASS, "; ".join(problems) or f"{', '.join(keys)} summed per worker", 4
    )


def https(s: Suite) -> Iterator[Outcome]:
    ca = s.bed.https.ca_file
    assert ca is not None
    run = s.run(s.bed.https.url + "/", Workload(2, 3, 1, 10), ["--ca-file", ca])
    name = "https: --ca-file"
    yield _document(name, run) or _ok(name, run, HELLO)


#: the checks that count the server's connections: one at a time, on a server of their own
COUNTED: tuple[Check, ...] = (closed_loop, new_connections)
OTHERS: tuple[Check, ...] = (
    usage_errors, uploads, streamed, targets, faults, https, open_loop, histogram_failures, phases
)  # fmt: skip
CHECKS = (*COUNTED, *OTHERS)


def _all(check: Check, suite: Suite) -> list[Outcome]:
    return list(check(suite))


def check(
    spec: ClientSpec, bed: Servers, on_outcome: Callable[[Outcome], None] = lambda o: None, jobs: int = 1
) -> Outcomes:
    """Every check of one driver, with up to `jobs` driver runs at a time; `on_outcome` sees each outcome in
    the order of CHECKS. A driver whose documents declare an older version of the contract (clientbench.raw/2) is
    held to that version's rules: a check of a rule that came later, which it does not meet, is NEW, not FAIL."""
    with tempfile.TemporaryDirectory(prefix="clientbench-check-") as log_dir:
        return _check(Suite(spec, bed, Path(log_dir)), on_outcome, jobs)


def _check(suite: Suite, on_outcome: Callable[[Outcome], None], jobs: int) -> Outcomes:
    def counted() -> list[list[Outcome]]:
        return [_all(c, suite) for c in COUNTED]

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        first = pool.submit(counted)
        rest = [pool.submit(_all, c, suite) for c in OTHERS]
        out = Outcomes()

        def take(group: list[Outcome]) -> None:
            for outcome in group:
                outcome = versioned(outcome, suite.declared)  # the closed loop's document said it
                on_outcome(outcome)
                out.append(outcome)

        for group in first.result():
            take(group)
        out.declared = suite.declared
        for future in rest:
            take(future.result())
    return out


def _at(outcome: Outcome, since: int) -> Outcome:
    """The outcome of a check of a rule of the contract's version `since`."""
    return dataclasses.replace(outcome, since=since)
