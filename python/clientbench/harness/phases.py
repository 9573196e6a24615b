"""The phases of a request (`--phases`, docs/raw-format.md, "Phases"): where a plugin's library lets it see them,
it records how long each took with `sdk.phase(key, ns)` while the harness runs its request; the harness adds them up
per worker over the successful requests, with their latencies, and writes the sums (the runner makes means and the
client's own time of them)."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

#: the phases, in the order a request goes through them; a key is one of them, or consecutive ones joined by "+"
#: where a library cannot tell them apart (connect+tls, send+wait)
NAMES = ("dns", "connect", "tls", "send", "wait", "receive")


#: the Python harness records the phases of one request in this many of each worker's (the first, then every 8th):
#: asking a library for its phases costs a Python row thousands of instructions (a trace callback, a dict of
#: timings), which the other requests do not pay; the means over 1 in 8 requests are the phases' means
SAMPLE_EVERY = 8

C = TypeVar("C")

#: the worker's sums (a thread's, or a task's: asyncio gives each task its own context), None outside the harness's
#: recording workers
_current: ContextVar[Sums | None] = ContextVar("clientbench_phases", default=None)


def valid_key(key: str) -> bool:
    """A phase name, or consecutive ones joined by "+" in their order (connect+tls)."""
    parts = key.split("+")
    if not all(p in NAMES for p in parts):
        return False
    where = [NAMES.index(p) for p in parts]
    return where == list(range(where[0], where[0] + len(where)))


def check_keys(keys: Sequence[str]) -> tuple[str, ...]:
    """The keys a plugin declares: valid, each phase in one key at most, in the order of NAMES."""
    for key in keys:
        if not valid_key(key):
            raise ValueError(f"{key!r} is not a phase ({', '.join(NAMES)}, or consecutive ones joined by +)")
    names = [p for key in keys for p in key.split("+")]
    if len(set(names)) != len(names) or names != sorted(names, key=NAMES.index):
        raise ValueError(f"phases {list(keys)}: each phase once, in the order {', '.join(NAMES)}")
    return tuple(keys)


def phase(key: str, ns: int) -> None:
    """Record that the current request spent `ns` nanoseconds in phase `key` (added to what it spent there
    before). Nothing happens when the harness records none of this request's phases."""
    sums = _current.get()
    if sums is not None and sums.pending is not None:
        sums.pending[key] = sums.pending.get(key, 0) + ns


def phases(spent: Mapping[str, int]) -> None:
    """Record the current request's phases at once: {key: ns} (a library that tells them all together)."""
    sums = _current.get()
    if sums is not None and sums.pending is not None:
        sums.pending.update(spent)


def recording() -> bool:
    """Whether the harness records the current request's phases (a plugin installs its library's hooks then)."""
    sums = _current.get()
    return sums is not None and sums.pending is not None


def worker(sums: Sums) -> None:
    """The current thread (or task) is the worker these sums are of."""
    _current.set(sums)


class Sums:
    """One worker's phases: the successful requests recorded, the sum of their latencies and of each phase."""

    def __init__(self, keys: tuple[str, ...]):
        self.keys = keys
        self.count = 0
        self.latency_ns = 0
        self.sums = dict.fromkeys(keys, 0)
        #: the phases of the request being recorded (None: this one is not)
        self.pending: dict[str, int] | None = None

    def add(self, latency_ns: int) -> None:
        """The request that ran last succeeded in `latency_ns`: its phases count, if they were recorded (a request
        that recorded none, e.g. an upload where the plugin times its GETs only, is left out)."""
        pending, self.pending = self.pending, None
        if not pending:
            return
        sums = self.sums
        try:
            for key, ns in pending.items():
                sums[key] += ns if ns > 0 else 0
        except KeyError:
            unknown = sorted(set(pending) - set(self.keys))
            raise RuntimeError(f"the plugin recorded phases {unknown} it does not declare ({self.keys})") from None
        self.count += 1
        self.latency_ns += latency_ns

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "latency_ns": self.latency_ns, "sum_ns": dict(self.sums)}


def sampled_sync(
    request: Callable[[C, str], tuple[int, int]], phased: Callable[[C, str], tuple[int, int]], sums: Sums
) -> Callable[[C, str], tuple[int, int]]:
    """`request`, but every SAMPLE_EVERY-th call (the first included) `phased`, its phases recorded into `sums`."""
    calls = itertools.count()

    def call(client: C, url: str) -> tuple[int, int]:
        if next(calls) % SAMPLE_EVERY:
            return request(client, url)
        sums.pending = {}
        return phased(client, url)

    return call


def sampled_async(
    request: Callable[[C, str], Awaitable[tuple[int, int]]],
    phased: Callable[[C, str], Awaitable[tuple[int, int]]],
    sums: Sums,
) -> Callable[[C, str], Awaitable[tuple[int, int]]]:
    calls = itertools.count()

    def call(client: C, url: str) -> Awaitable[tuple[int, int]]:
        if next(calls) % SAMPLE_EVERY:
            return request(client, url)
        sums.pending = {}
        return phased(client, url)

    return call
