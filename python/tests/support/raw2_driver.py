"""A driver from outside the project, written from docs/raw-format.md as it was on 2026-11-26 (commit cd41e4f, the
contract `clientbench.raw/2`) and from nothing else: the standard library's http.client, W threads, no use of
clientbench's harness. It does what that page asked, literally, and nothing the later rules added: a per-request
(socket) timeout, every upload answer compared with the /upload line, any seeded generator for Poisson arrivals,
the seed written for every open loop, only the usage errors that page listed (and argparse's, on one line).
test_check_driver.py checks that check-driver holds it to raw/2's rules and names the rules of raw/3 it does not
meet.

    python raw2_driver.py --url URL [the contract's flags]
"""

import argparse
import hashlib
import http.client
import json
import math
import platform
import random
import socket
import ssl
import sys
import sysconfig
import threading
import time
from urllib.parse import urlsplit

# -- the command line ("Command line"): what the page lists as bad usage exits 2, the rest is taken as given --


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")  # "one line on stderr naming the flag"


p = Parser(prog="raw2-driver")
p.add_argument("--url", required=True)
p.add_argument("--workers", type=int, default=10)
p.add_argument("--requests", type=int)
p.add_argument("--duration", type=float)
p.add_argument("--warmup", type=int, default=0)
p.add_argument("--timeout", type=float, default=30.0)  # "per-request timeout in seconds"
p.add_argument("--connection", choices=["keep-alive", "new"], default="keep-alive")
tls_flags = p.add_mutually_exclusive_group()  # the synopsis: [--ca-file PATH | --insecure]
tls_flags.add_argument("--ca-file")
tls_flags.add_argument("--insecure", action="store_true")
p.add_argument("--rate", type=float)
p.add_argument("--arrival", choices=["uniform", "poisson"], default="uniform")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--method", choices=["GET", "POST", "PUT"], default="GET")
p.add_argument("--body-size", type=int, default=0)
p.add_argument("--record", choices=["samples", "histogram"], default="samples")
p.add_argument("--client-scope", choices=["per-worker", "shared"], default="per-worker")
p.add_argument("--http", choices=["1.1", "2"], default="1.1")
a = p.parse_args()
if a.rate is not None and not (a.rate > 0 and math.isfinite(a.rate)):
    p.error("--rate must be a positive number")
if a.duration is not None and a.rate is None:
    p.error("--duration needs --rate")
if a.duration is not None and a.requests is not None:
    p.error("--duration and --requests exclude each other")
if a.rate is not None and a.rate / a.workers > 1_000_000:
    p.error("--rate: finer than 1 µs per worker")
if not 0 <= a.body_size <= 1 << 30:
    p.error("--body-size must be from 0 to 1 GiB")
if a.body_size > 0 and a.method == "GET":
    p.error("--body-size goes with POST or PUT")
if a.connection == "new" and a.client_scope == "shared":
    p.error("--connection new does not go with --client-scope shared")
# exit 3: what http.client cannot do at all
if a.http == "2":
    print("unsupported: HTTP/2 (http.client speaks HTTP/1.1)", file=sys.stderr)
    sys.exit(3)
if a.client_scope == "shared":
    print("unsupported: --client-scope shared (an HTTPConnection serves one request at a time)", file=sys.stderr)
    sys.exit(3)
requests = a.requests if a.requests is not None else (None if a.duration is not None else 100)

url = urlsplit(a.url)
target = (url.path or "/") + (f"?{url.query}" if url.query else "")
context = None
if url.scheme == "https":
    context = ssl.create_default_context(cafile=a.ca_file)
    if a.insecure:
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
# "Request bodies": byte i is 'a' + i mod 26; the answer is "<length> <sha256 hex>"
body = bytes(97 + i % 26 for i in range(a.body_size)) if a.method != "GET" else None
expected = f"{len(body)} {hashlib.sha256(body).hexdigest()}".encode() if body is not None else None


def connect() -> http.client.HTTPConnection:
    if context is not None:
        return http.client.HTTPSConnection(url.hostname, url.port, timeout=a.timeout, context=context)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=a.timeout)


# -- one request, and its failure's reason ("Failure reasons") -------------------------------------------------


def reason(exc: BaseException) -> str:
    if isinstance(exc, (TimeoutError, socket.timeout)):
        cls = "TimeoutError"
    elif isinstance(exc, ssl.SSLError):
        cls = "TLSError"
    elif isinstance(exc, (ConnectionError, http.client.IncompleteRead, http.client.RemoteDisconnected, OSError)):
        cls = "ConnectionError"
    elif isinstance(exc, http.client.HTTPException):
        cls = "ProtocolError"
    else:
        cls = "Error"
    return f"{cls}: {type(exc).__name__}: {exc}"[:300]


def request(conn: http.client.HTTPConnection) -> tuple[int, int, str | None]:
    """(status, body bytes, failure reason or None)."""
    conn.request(a.method, target, body=body)
    response = conn.getresponse()
    data = response.read()
    # "compares every response body with it, and counts a difference as a failure"
    if expected is not None and data != expected:
        return response.status, len(data), f"Error: upload digest mismatch: got {data[:60]!r}"
    if response.status != 200:
        return response.status, len(data), f"status {response.status}"
    return response.status, len(data), None


# -- the open loop ("Open loop"): intended starts, uniform or Poisson from a generator seeded with S + w -------


def schedule(w: int) -> list[int]:
    """Worker w's intended starts, ns after t0, as many as it can need."""
    if a.rate is None:
        return []
    count = requests if requests is not None else int(a.duration * a.rate / a.workers) + 2
    if a.arrival == "uniform":
        return [round((w + k * a.workers) / a.rate * 1e9) for k in range(count)]
    draw, t, out = random.Random(a.seed + w), 0.0, []
    for _ in range(count):
        t += draw.expovariate(a.rate / a.workers)
        out.append(round(t * 1e9))
    return out


class Worker:
    def __init__(self) -> None:
        self.starts: list[int] = []
        self.latencies: list[int] = []
        self.intended: list[int] = []
        self.failures: list[dict[str, object]] = []
        self.failure_count = self.nbytes = self.late = self.missed = self.elapsed = 0

    def timed(self, conn: http.client.HTTPConnection, t0: int, w: int) -> http.client.HTTPConnection:
        due = schedule(w)
        begin = time.perf_counter_ns()
        k = 0
        while requests is None or k < requests:
            if a.rate is not None:
                if a.duration is not None and due[k] >= a.duration * 1e9:
                    break
                now = time.perf_counter_ns() - t0
                if now > due[k]:
                    self.late += k > 0  # the previous request had not finished by its time
                else:
                    time.sleep((due[k] - now) / 1e9)
                if a.duration is not None and time.perf_counter_ns() - t0 >= a.duration * 1e9:
                    self.missed = sum(1 for d in due[k:] if d < a.duration * 1e9)
                    break
                self.intended.append(due[k])
            start = time.perf_counter_ns()
            if a.connection == "new":
                conn.close()
                conn = connect()
            try:
                status, nbytes, failed = request(conn)
            except Exception as exc:
                status, nbytes, failed = None, 0, reason(exc)
                conn.close()
            end = time.perf_counter_ns()
            self.nbytes += nbytes
            self.starts.append(start - t0)
            self.latencies.append(end - start)
            if failed is not None:
                self.failure_count += 1
                if len(self.failures) < 1000:
                    self.failures.append({"index": k, "reason": failed, "status": status if failed[0] == "s" else None})
            k += 1
        self.elapsed = time.perf_counter_ns() - begin
        return conn

    def json(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "elapsed_ns": self.elapsed,
            "count": len(self.latencies),
            "late": self.late,
            "missed": self.missed,
            "bytes": self.nbytes,
            "failure_count": self.failure_count,
            "failures": self.failures,
        }
        if a.record == "samples":
            doc.update(start_ns=self.starts, latencies_ns=self.latencies)
            if a.rate is not None:
                doc["intended_ns"] = self.intended
            return doc
        failed = {f["index"] for f in self.failures}
        ok = [k for k in range(len(self.latencies)) if k not in failed]
        doc["histograms"] = {"service": histogram(self.latencies[k] for k in ok)}
        if a.rate is not None:
            ends = [self.starts[k] + self.latencies[k] - self.intended[k] for k in ok]
            doc["histograms"]["corrected"] = histogram(ends)
        return doc


def histogram(values: object) -> dict[str, object]:
    """HdrHistogram's buckets at 3 significant digits, each its lowest equivalent value."""
    counts: dict[int, int] = {}
    for v in values:  # type: ignore[attr-defined]
        b = max(v.bit_length() - 1 - 10, 0)
        counts[(v >> b) << b] = counts.get((v >> b) << b, 0) + 1
    return {"significant_digits": 3, "counts": [[v, c] for v, c in sorted(counts.items())]}


# -- the group: every worker makes its client and warms up, a barrier, t0, the timed loops ("The workload") -----

workers = [Worker() for _ in range(a.workers)]
ready = threading.Barrier(a.workers + 1)
go = threading.Event()
t0 = 0


def work(w: Worker, index: int) -> None:
    conn = connect()
    for _ in range(a.warmup):
        try:
            request(conn)
        except Exception:
            conn.close()
    ready.wait()
    go.wait()
    w.timed(conn, t0, index).close()


threads = [threading.Thread(target=work, args=(w, i)) for i, w in enumerate(workers)]
for t in threads:
    t.start()
ready.wait()
t0 = time.perf_counter_ns()
go.set()
for t in threads:
    t.join()
wall = time.perf_counter_ns() - t0
open_loop = a.rate is not None
print(
    json.dumps(
        {
            "schema": "clientbench.raw/2",
            "client": {
                "language": "Python",
                "library": "http.client",
                "library_version": platform.python_version(),
                "mode": "sync",
                "gil": None,
                "python": {
                    "version": platform.python_version(),
                    "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
                    "gil_enabled": True,
                    "extensions": {},
                },
            },
            "workload": {
                "url": a.url,
                "workers": a.workers,
                "requests": requests,
                "duration_s": a.duration,
                "warmup": a.warmup,
                "timeout_s": a.timeout,
                "connection": a.connection,
                "loop": "open" if open_loop else "closed",
                "rate": a.rate,
                "arrival": a.arrival if open_loop else None,
                "seed": a.seed if open_loop else None,
                "method": a.method,
                "body_size": a.body_size,
                "record": a.record,
                "client_scope": a.client_scope,
                "http": a.http,
            },
            "wall_ns": wall,
            "workers": [w.json() for w in workers],
        }
    )
)
