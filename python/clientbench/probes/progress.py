"""How late a Python thread runs beside W threads that make requests through a binding, GIL held and released.

    python -m clientbench.probes.progress --url URL [--workers 10] [--seconds 0.5] [--repeat 5]
        [--binding beast --binding reqwest] [--ca-file PATH | --insecure]

A heartbeat thread (a Python loop that sleeps 1 ms and notes how late it woke) runs beside W worker threads that
make sequential GETs over a client of their own (`fetch_len`, as the driver's held and released rows do) for a given
time, once with the GIL held through each call and once with it released, then alone for as long. A thread that
wakes needs the GIL to run: beside held calls it waits until a switch interval (5 ms) takes the GIL from a worker;
beside released ones it finds the GIL free. Unlike Bench/LMean, which needs the workers' own loops to be short
against that interval, this does not hang on how fast the machine answers: a held call keeps every other thread
out for as long as it lasts. The time is counted in seconds so that it spans many switch intervals. Prints one JSON
line: per binding and case (alone, held, released) the heartbeat's median and P99 lateness (ms), its beats per
second, and the requests per second the workers made; and the interpreter.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import threading
import time
from typing import Any

from ..harness import add_tls_options, interpreter, verify

MODULES = {"beast": "beast_client", "reqwest": "reqwest_client"}


#: the heartbeat's sleep: short against the 5 ms switch interval, long against a released call's Python part
BEAT_S = 0.001


class Heartbeat:
    """A thread that sleeps BEAT_S in a loop and notes how late each wake-up ran, as a Python program's timer or
    event loop beside the calls would."""

    def __init__(self) -> None:
        self.running = True
        self.late: list[float] = []
        self.seconds = 0.0
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        late = self.late
        clock, sleep = time.perf_counter, time.sleep
        t0 = clock()
        self.started.set()
        while self.running:
            before = clock()
            sleep(BEAT_S)
            late.append(clock() - before - BEAT_S)
        self.seconds = clock() - t0

    def __enter__(self) -> Heartbeat:
        self.thread.start()
        self.started.wait()
        return self

    def __exit__(self, *_: object) -> None:
        self.running = False
        self.thread.join()

    def figures(self, requests: int = 0) -> dict[str, float]:
        ms = sorted(x * 1e3 for x in self.late)
        return {
            "late_p50_ms": round(statistics.median(ms), 3),
            "late_p99_ms": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 3),
            "beats_per_s": round(len(ms) / self.seconds, 1),
            "requests_per_s": round(requests / self.seconds, 1),
        }


def alone(seconds: float) -> dict[str, float]:
    """The heartbeat with nothing else running in this process."""
    with Heartbeat() as beat:
        time.sleep(seconds)
    return beat.figures()


def beside(mod: Any, url: str, workers: int, seconds: float, release: bool, trust: bool | str) -> dict[str, float]:
    """The heartbeat while W threads make requests for `seconds`, with the requests per second they made."""
    clients = [mod.Client(timeout=10, verify=trust) for _ in range(workers)]
    try:
        for client in clients:  # each worker's connection made before the heartbeat starts
            status, _ = client.fetch_len(url, release_gil=True)
            if status != 200:
                raise RuntimeError(f"GET {url}: status {status}")
        gate = threading.Barrier(workers + 1)
        failures: list[BaseException] = []
        made = [0] * workers
        running = [True]

        def work(i: int, client: Any) -> None:
            gate.wait()
            try:
                while running[0]:
                    client.fetch_len(url, release_gil=release)
                    made[i] += 1
            except BaseException as exc:  # the probe fails rather than report a partial figure
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(i, c)) for i, c in enumerate(clients)]
        for t in threads:
            t.start()
        with Heartbeat() as beat:
            gate.wait()
            time.sleep(seconds)
            running[0] = False
            for t in threads:
                t.join()
        if failures:
            raise RuntimeError(f"a worker failed: {failures[0]!r}")
        return beat.figures(sum(made))
    finally:
        for client in clients:
            client.close()


def measure(binding: str, url: str, workers: int, seconds: float, repeat: int, trust: bool | str) -> dict[str, Any]:
    """Per case, each figure's median over the repeats (the cases interleaved, so that a slow moment of the
    machine falls on all of them)."""
    mod = importlib.import_module(MODULES[binding])
    runs: dict[str, list[dict[str, float]]] = {"alone": [], "held": [], "released": []}
    for _ in range(repeat):
        runs["held"].append(beside(mod, url, workers, seconds, False, trust))
        runs["released"].append(beside(mod, url, workers, seconds, True, trust))
        runs["alone"].append(alone(seconds))
    return {
        case: {key: round(statistics.median(r[key] for r in done), 3) for key in done[0]} for case, done in runs.items()
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="what the workers GET, e.g. http://127.0.0.1:PORT/")
    p.add_argument("--workers", type=int, default=10, help="worker threads (default 10)")
    p.add_argument("--seconds", type=float, default=0.5, help="each measurement's length (default 0.5)")
    p.add_argument("--repeat", type=int, default=5, help="measurements of each case; the median is printed")
    p.add_argument("--binding", action="append", choices=sorted(MODULES), help="(repeatable; default: both)")
    add_tls_options(p)
    args = p.parse_args(argv)
    for flag in ("workers", "repeat"):
        if getattr(args, flag) < 1:
            p.error(f"--{flag} must be at least 1")
    if not 0 < args.seconds <= 60:
        p.error("--seconds must be above 0 and at most 60")
    trust = verify(args)
    out: dict[str, Any] = {"workers": args.workers, "seconds": args.seconds, "repeat": args.repeat}
    for binding in args.binding or sorted(MODULES):
        out[binding] = measure(binding, args.url, args.workers, args.seconds, args.repeat, trust)
    out["python"] = interpreter()
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
