"""A driver that sends no request, for the runner's tests: run as a script (`python fake_driver.py FLAGS`).

By default it takes the contract's flags (docs/raw-format.md) and answers every request itself (status 200,
13 bytes) through the real harness, so its document is valid. `--crash-on-repeat I` (repeatable) makes it
exit with status 3 and `boom` on stderr instead, when it runs as repeat I: the runner gives repeat i the
PYTHONHASHSEED i. `--crash-always` crashes every time.

With `--synthetic` it runs nothing at all: it computes the `clientbench.raw/4` document of W simulated
workers whose every request takes `--service-us` (times a lognormal factor with `--spread`; and
`--stall-ms` every `--stall-every`-th request of a worker), on the open loop's schedule when given `--rate`
(docs/raw-format.md: a request starts at its intended time, or late, when the previous one ends), and
prints it with samples or, with `--record histogram`, HdrHistogram buckets. A worker keeps up while
R/W <= 1e6/service-us: the runner's open-loop figures (late starts, saturation, the corrected latency) can
be checked against that.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
from clientbench.harness import schedule

#: the body length of every synthetic answer (our server's `/`)
BODY = 13


def spec(name: str, *flags: str, optional: bool = False) -> Any:
    """A client row (run.clients.ClientSpec) whose driver is this script with `flags`."""
    return code_spec(name, None, *flags, optional=optional)


def code_spec(name: str, code: str | None, *flags: str, optional: bool = False) -> Any:
    """A client row whose driver is `python -c code` (this script when code is None)."""
    from clientbench.model import Client
    from clientbench.registry.spec import ClientSpec

    program = [str(Path(__file__))] if code is None else ["-c", code]
    client = Client(name=name, language="Python", library="fake", mode="sync", optional=optional)
    return ClientSpec(client, lambda: [sys.executable, *program, *flags])


def lowest_equivalent(values: np.ndarray) -> np.ndarray:
    """HdrHistogram's bucket (its lowest equivalent value) of each value at 3 significant digits, unit 1 ns:
    v itself below 2,048, else floor(v / 2^b) * 2^b with b = floor(log2 v) - 10 (docs/raw-format.md)."""
    v = np.asarray(values, dtype=np.int64)
    _, exponent = np.frexp(v.astype(np.float64))  # v = m * 2^e, 0.5 <= m < 1: floor(log2 v) = e - 1
    shift = np.maximum(exponent.astype(np.int64) - 1 - 10, 0)
    return (v >> shift) << shift


def histogram(values: np.ndarray) -> dict[str, Any]:
    buckets, counts = np.unique(lowest_equivalent(values), return_counts=True)
    return {"significant_digits": 3, "counts": [[int(b), int(c)] for b, c in zip(buckets, counts, strict=True)]}


def intended_ns(args: argparse.Namespace, w: int) -> np.ndarray:
    """I(w, k) of worker w as every harness computes it (clientbench.harness.schedule, docs/raw-format.md), every k
    of the schedule (--requests, or before --duration)."""
    times = schedule.intended_ns(w, args.workers, args.rate, args.arrival, args.seed)
    if args.duration is None:
        return np.fromiter(itertools.islice(times, args.requests), dtype=np.int64)
    end = args.duration * 1e9
    return np.fromiter(itertools.takewhile(lambda t: t < end, times), dtype=np.int64)


def simulate(args: argparse.Namespace, w: int) -> dict[str, Any]:
    """One worker: start_k = max(I_k, end_(k-1)), end_k = start_k + service_k, computed without a loop:
    end_k - C_k = max over j <= k of (I_j - C_(j-1)), where C is the cumulative service time."""
    open_loop = args.rate is not None
    intended = intended_ns(args, w) if open_loop else np.zeros(args.requests, dtype=np.int64)
    service = np.full(intended.size, int(args.service_us * 1000), dtype=np.int64)
    if args.spread:  # a long tail, as real service times have: lognormal around service-us
        rng = np.random.default_rng(1000 + w)
        service = (service * rng.lognormal(0.0, args.spread, size=service.size)).astype(np.int64) + 1
    if args.stall_every:
        service[args.stall_every - 1 :: args.stall_every] = int(args.stall_ms * 1e6)
    done_before = np.concatenate([[0], np.cumsum(service)[:-1]])  # C_(k-1)
    end = np.maximum.accumulate(intended - done_before) + done_before + service
    start = end - service
    missed = 0
    if open_loop and args.duration is not None:
        sent = int(np.searchsorted(start, int(args.duration * 1e9)))  # start is non-decreasing
        missed = intended.size - sent
        intended, service, start, end = intended[:sent], service[:sent], start[:sent], end[:sent]
    doc: dict[str, Any] = {
        "elapsed_ns": int(end[-1]) if end.size else 0,
        "count": int(end.size),
        "late": int((start > intended).sum()) if open_loop else 0,
        "missed": missed,
        "bytes": BODY * int(end.size),
        "failure_count": 0,
        "failures": [],
    }
    if args.record == "samples":
        doc.update(start_ns=start.tolist(), latencies_ns=service.tolist())
        if open_loop:
            doc["intended_ns"] = intended.tolist()
    else:
        doc["histograms"] = {"service": histogram(service)}
        if open_loop:
            doc["histograms"]["corrected"] = histogram(end - intended)
    return doc


def synthetic_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    p.add_argument("--synthetic", action="store_true")
    p.add_argument("--url", required=True)
    p.add_argument("--workers", type=int, default=10)
    p.add_argument("--requests", type=int, default=None)
    p.add_argument("--duration", type=float, default=None)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--connection", default="keep-alive")
    p.add_argument("--rate", type=float, default=None)
    p.add_argument("--arrival", default="uniform")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--method", default="GET")
    p.add_argument("--body-size", type=int, default=0)
    p.add_argument("--record", default="samples")
    p.add_argument("--phases", action="store_true", help="accepted (raw/4): a simulated client records no phase")
    p.add_argument("--service-us", type=float, default=100.0)
    p.add_argument("--stall-every", type=int, default=0)
    p.add_argument("--stall-ms", type=float, default=0.0)
    p.add_argument("--spread", type=float, default=0.0, help="sigma of a lognormal factor on every service time")
    return p


def synthetic_doc(*flags: str) -> dict[str, Any]:
    """The document `fake_driver.py --synthetic FLAGS` prints (flags as on its command line, --url optional)."""
    argv = list(flags) if "--url" in flags else ["--url", "http://127.0.0.1:1/", *flags]
    return document(synthetic_parser().parse_args(argv))


def document(args: argparse.Namespace) -> dict[str, Any]:
    if args.requests is None and args.duration is None:
        args.requests = 100
    workers = [simulate(args, w) for w in range(args.workers)]
    open_loop = args.rate is not None
    doc = {
        "schema": "clientbench.raw/4",
        "client": {"language": "Python", "library": "fake", "library_version": "0", "mode": "sync", "gil": None},
        "workload": {
            "url": args.url,
            "workers": args.workers,
            "requests": args.requests if args.duration is None else None,
            "duration_s": args.duration,
            "warmup": args.warmup,
            "timeout_s": args.timeout,
            "connection": args.connection,
            "loop": "open" if open_loop else "closed",
            "rate": args.rate,
            "arrival": args.arrival if open_loop else None,
            "seed": args.seed if open_loop and args.arrival == "poisson" else None,
            "method": args.method,
            "body_size": args.body_size,
            "record": args.record,
        },
        "wall_ns": max(w["elapsed_ns"] for w in workers),
        "workers": workers,
        "cpu_ns": 10_000 * sum(w["count"] for w in workers),
    }
    return doc


def synthetic(argv: list[str]) -> int:
    doc = document(synthetic_parser().parse_args(argv))
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


def main() -> int:
    if "--synthetic" in sys.argv:
        return synthetic(sys.argv[1:])
    from clientbench import harness

    p = harness.parser(__doc__ or "")
    p.add_argument("--crash-on-repeat", type=int, action="append", default=[])
    p.add_argument("--crash-always", action="store_true")
    args = p.parse_args()
    repeat = int(os.environ.get("PYTHONHASHSEED", "-1"))
    if args.crash_always or repeat in args.crash_on_repeat:
        print(f"boom (repeat {repeat})", file=sys.stderr)
        return 3
    info = {"language": "Python", "library": "fake", "library_version": "0", "gil": None}
    harness.run(args, info, harness.SyncDriver(lambda a: object(), lambda client, url: (200, 13)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
