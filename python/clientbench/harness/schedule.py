"""The open loop (docs/raw-format.md, "Open loop"): each worker's schedule of intended start times, and the
loop that keeps to it, charging a late start from the intended time and counting what `--duration` leaves
unsent. The schedule is a pure function; the loop is one generator (`_paced`) that says when to wait and when to
send, driven by a sync and an async form that differ only in how they sleep and call. Both take their clock and
sleep as arguments, so a test can drive them with a fake clock."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import time
from collections.abc import Awaitable, Callable, Generator, Iterator
from typing import Protocol

NS = 1_000_000_000
_MASK = (1 << 64) - 1
#: SplitMix64's constants (Steele, Lea and Flood, 2014; Vigna's reference C code)
_GAMMA, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def round_half_away(x: float) -> int:
    """x rounded to the nearest whole number, halves away from zero: C's round(), which every harness uses
    (Python's round() rounds halves to even, which would move some intended times by 1 ns)."""
    n = math.floor(x)
    frac = x - n  # exact for a binary64 x
    if x >= 0:
        return n + 1 if frac >= 0.5 else n
    return n + 1 if frac > 0.5 else n


def splitmix64(state: int) -> Iterator[int]:
    """SplitMix64 from `state` (mod 2^64): the 64-bit outputs, without end."""
    state &= _MASK
    while True:
        state = (state + _GAMMA) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * _MIX1) & _MASK
        z = ((z ^ (z >> 27)) * _MIX2) & _MASK
        yield z ^ (z >> 31)


def poisson_intervals_ns(seed: int, worker: int, workers: int, rate: float) -> Iterator[int]:
    """Worker w's exponential intervals, in whole ns: u = ((x >> 11) + 1) / 2^53 in (0, 1] from SplitMix64
    seeded with S + w, then round(-ln(u) * m) with m = W * 1e9 / R (the mean, ns)."""
    mean_ns = workers * 1e9 / rate
    for x in splitmix64(seed + worker):
        u = ((x >> 11) + 1) * (1.0 / (1 << 53))
        yield round_half_away(-math.log(u) * mean_ns)


def intended_ns(worker: int, workers: int, rate: float, arrival: str, seed: int) -> Iterator[int]:
    """I(w, k) for k = 0, 1, 2, ..., in ns after t0, without end.

    uniform: round((w + k·W) / R · 1e9), so each worker every W/R s and the W phases spread evenly (worker 0
    at 0); poisson: the running sum of poisson_intervals_ns (so I(w, 0) is the first interval, not 0): the W
    streams together are a Poisson stream of rate R, and a seed gives the same times in every language."""
    if arrival == "uniform":
        for k in itertools.count():
            yield round_half_away((worker + k * workers) / rate * NS)
    elif arrival == "poisson":
        yield from itertools.accumulate(poisson_intervals_ns(seed, worker, workers, rate))
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


#: what a request returned: (status, body bytes, None), or (None, bytes received, the exception)
Reply = tuple[int | None, int, BaseException | None]


def _paced(
    w: Recorder,
    schedule: Iterator[int],
    t0: int,
    requests: int | None,
    duration_ns: int | None,
    clock: Callable[[], int],
) -> Generator[float | None, Reply | None, None]:
    """The loop itself: yields a number of seconds to sleep, or None to have one request sent (it is then sent
    the request's Reply). Request k starts at t0 + I(w, k), or at once when request k-1 ended after that (a
    late start, still charged from I(w, k)). Stops after `requests` requests, or at the first request of the
    schedule (I < D) that cannot start before D = `duration_ns` (it and the rest are missed: `w.stop`)."""
    now = w.loop_start = clock()
    for k, due_rel in enumerate(schedule):
        if k == requests or (duration_ns is not None and due_rel >= duration_ns):
            break
        due = t0 + due_rel
        late = k > 0 and now > due  # `now` is request k-1's end: it was still running at I(w, k)
        while now < due:
            yield (due - now) / NS
            now = clock()
        if duration_ns is not None and now - t0 >= duration_ns:
            w.stop(due_rel, schedule)
            break
        if late:
            w.late += 1
        reply = yield None
        assert reply is not None
        end = clock()
        status, nbytes, error = reply
        w.record_open(k, due_rel, now, end, status, nbytes, error)
        now = end
    w.loop_end = clock()


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
    """One worker of a sync driver on its schedule (_paced). `send()` does one request and returns (status,
    body bytes); it raises on failure."""
    steps = _paced(w, schedule, t0, requests, duration_ns, clock)
    with contextlib.suppress(StopIteration):  # the loop is over
        step = next(steps)
        while True:
            if step is None:
                try:
                    status, nbytes = send()
                    reply: Reply = (status, nbytes, None)
                except Exception as exc:
                    reply = (None, getattr(exc, "nbytes", 0), exc)
                step = steps.send(reply)
            else:
                sleep(step)
                step = steps.send(None)


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
    """open_loop() for a task of an async driver: it awaits its requests and its event loop's timer."""
    steps = _paced(w, schedule, t0, requests, duration_ns, clock)
    with contextlib.suppress(StopIteration):
        step = next(steps)
        while True:
            if step is None:
                try:
                    status, nbytes = await send()
                    reply: Reply = (status, nbytes, None)
                except Exception as exc:
                    reply = (None, getattr(exc, "nbytes", 0), exc)
                step = steps.send(reply)
            else:
                await sleep(step)
                step = steps.send(None)


def count_missed(first_missed: int, rest: Iterator[int], duration_ns: int) -> int:
    """The requests of a schedule not sent: the first one that could not start before D, and every later
    one with I < D."""
    if first_missed >= duration_ns:
        return 0
    return 1 + sum(1 for _ in itertools.takewhile(lambda t: t < duration_ns, rest))
