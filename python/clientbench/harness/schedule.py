"""The open loop (docs/raw-format.md, "Open loop"): each worker's schedule of intended start times, and the
loop that keeps to it, charging a late start from the intended time and counting what `--duration` leaves
unsent. The schedule is a pure function; the loops take their clock and sleep as arguments, so a test can
drive them with a fake clock."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Protocol

NS = 1_000_000_000


def intended_ns(worker: int, workers: int, rate: float, arrival: str, seed: int) -> Iterator[int]:
    """I(w, k) for k = 0, 1, 2, ..., in ns after t0, without end.

    uniform: (w + k·W) / R, so each worker every W/R s and the W phases spread evenly; poisson: sums of
    exponential intervals of mean W/R drawn from `random.Random(seed + w)` (the W streams together are a
    Poisson stream of rate R)."""
    if arrival == "uniform":
        for k in itertools.count():
            yield round((worker + k * workers) / rate * NS)
    elif arrival == "poisson":
        draw = random.Random(seed + worker).expovariate
        per_worker = rate / workers
        t = 0.0
        while True:
            t += draw(per_worker)
            yield round(t * NS)
    else:
        raise ValueError(f"unknown arrival {arrival!r}")


class Recorder(Protocol):
    """What the loops write to (the harness's Worker)."""

    late: int
    loop_start: int
    loop_end: int

    def record_open(
        self,
        index: int,
        intended: int,
        start: int,
        end: int,
        status: int | None,
        nbytes: int,
        error: BaseException | None,
    ) -> None: ...

    def stop(self, first_missed: int, rest: Iterator[int]) -> None: ...


def open_loop(
    w: Recorder,
    send: Callable[[], tuple[int, int]],
    schedule: Iterator[int],
    t0: int,
    requests: int | None,
    duration_ns: int | None,
    clock: Callable[[], int] = time.perf_counter_ns,
    sleep: Callable[[float], object] = time.sleep,
) -> None:
    """One worker of a sync driver: request k starts at t0 + I(w, k), or as soon as request k-1 has returned
    when that is later (a late start). `send()` does one request and returns (status, body bytes); it
    raises on failure. Stops after `requests` requests, or at the first request of the schedule (I < D)
    that cannot start before D = `duration_ns` (it and the rest are missed: `w.stop`)."""
    now = w.loop_start = clock()
    for k, due_rel in enumerate(schedule):
        if k == requests or (duration_ns is not None and due_rel >= duration_ns):
            break
        due = t0 + due_rel
        late = False
        if now < due:
            while now < due:
                sleep((due - now) / NS)
                now = clock()
        else:  # late: the previous request was still running at this one's intended start
            late = k > 0 and now > due
        if duration_ns is not None and now - t0 >= duration_ns:
            w.stop(due_rel, schedule)
            break
        if late:
            w.late += 1
        try:
            status, nbytes = send()
        except Exception as exc:
            end = clock()
            w.record_open(k, due_rel, now, end, None, getattr(exc, "nbytes", 0), exc)
        else:
            end = clock()
            w.record_open(k, due_rel, now, end, status, nbytes, None)
        now = end
    w.loop_end = clock()


async def open_loop_async(
    w: Recorder,
    send: Callable[[], Awaitable[tuple[int, int]]],
    schedule: Iterator[int],
    t0: int,
    requests: int | None,
    duration_ns: int | None,
    clock: Callable[[], int] = time.perf_counter_ns,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> None:
    """open_loop() for a task of an async driver: it waits on its event loop's timer."""
    now = w.loop_start = clock()
    for k, due_rel in enumerate(schedule):
        if k == requests or (duration_ns is not None and due_rel >= duration_ns):
            break
        due = t0 + due_rel
        late = False
        if now < due:
            while now < due:
                await sleep((due - now) / NS)
                now = clock()
        else:  # late: the previous request was still running at this one's intended start
            late = k > 0 and now > due
        if duration_ns is not None and now - t0 >= duration_ns:
            w.stop(due_rel, schedule)
            break
        if late:
            w.late += 1
        try:
            status, nbytes = await send()
        except Exception as exc:
            end = clock()
            w.record_open(k, due_rel, now, end, None, getattr(exc, "nbytes", 0), exc)
        else:
            end = clock()
            w.record_open(k, due_rel, now, end, status, nbytes, None)
        now = end
    w.loop_end = clock()


def count_missed(first_missed: int, rest: Iterator[int], duration_ns: int) -> int:
    """The requests of a schedule not sent: the first one that could not start before D, and every later
    one with I < D."""
    if first_missed >= duration_ns:
        return 0
    return 1 + sum(1 for _ in itertools.takewhile(lambda t: t < duration_ns, rest))
