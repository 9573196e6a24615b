"""What a worker measured, and how it is written into the raw document (docs/raw-format.md, "The document"):
per-request arrays (`--record samples`) or, computed at the end from the same samples, HdrHistogram buckets
at 3 significant digits (`--record histogram`)."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, MutableSequence
from typing import Any

from .failures import DigestMismatch, Overtime, describe
from .phases import Sums
from .schedule import count_missed

#: a worker lists at most this many failures (all of them are counted)
MAX_FAILURES = 1000
#: HdrHistogram at 3 significant digits: 2,048 sub-buckets, so values below 2,048 are exact
SIGNIFICANT_DIGITS = 3
_SUB_BUCKET_BITS = 11


def lowest_equivalent(value: int) -> int:
    """The lowest value of the bucket that holds `value` (unit 1 ns): v below 2,048, else ⌊v / 2ᵇ⌋ · 2ᵇ with
    b = ⌊log₂ v⌋ − 10 (HdrHistogram's get_lowest_equivalent_value at 3 significant digits)."""
    shift = value.bit_length() - _SUB_BUCKET_BITS
    return value if shift <= 0 else value >> shift << shift


def histogram(values: Iterable[int]) -> dict[str, Any]:
    """The contract's histogram of `values`: every bucket that holds one, by increasing value."""
    counts = Counter(map(lowest_equivalent, values))
    return {"significant_digits": SIGNIFICANT_DIGITS, "counts": [[v, c] for v, c in sorted(counts.items())]}


class Worker:
    """One worker's measurements, with absolute monotonic timestamps until to_json().

    `compact` keeps the samples in `array('q')`s (8 bytes each, for the long runs that record histograms);
    otherwise in lists, which the closed loop appends to a little faster. `timeout_s`: --timeout, which bounds
    the whole request: one that took longer is a failure (Overtime), whatever it returned."""

    def __init__(self, compact: bool = False, open_loop: bool = False, timeout_s: float | None = None):
        def new() -> MutableSequence[int]:
            return array("q") if compact else []

        self.starts = new()
        self.latencies = new()
        self.intended: MutableSequence[int] | None = new() if open_loop else None
        self.failures: list[dict[str, Any]] = []
        self.failure_count = 0
        self.failed = array("q")  # the index of every failed request (the histograms are of the others)
        self.nbytes = 0
        self.late = 0
        self.missed = 0
        self.loop_start = 0
        self.loop_end = 0
        self.timeout_s = timeout_s
        #: the longest service time of a request that did not time out, ns (the closed loop's hot path reads it)
        self.limit_ns = round(timeout_s * 1e9) if timeout_s is not None else 1 << 62
        self._unsent: tuple[int, Iterator[int]] | None = None
        #: with --phases, for a client that records some: their sums over the successful requests
        self.phases: Sums | None = None

    def record(
        self, index: int, start: int, end: int, status: int | None, nbytes: int, error: BaseException | None
    ) -> None:
        self.starts.append(start)
        self.latencies.append(end - start)
        self.nbytes += nbytes
        # past --timeout: a TimeoutError before its status or answer is looked at, as from a library that stops at T
        if end - start > self.limit_ns and (error is None or isinstance(error, DigestMismatch)):
            assert self.timeout_s is not None
            error = Overtime(end - start, self.timeout_s, nbytes)
        if error is not None:
            self.fail(index, describe(error), None)
        elif status != 200:
            self.fail(index, f"status {status}", status)
        elif self.phases is not None:
            self.phases.add(end - start)
            return
        if self.phases is not None:  # a failed request's phases do not count
            self.phases.pending = None

    def record_open(
        self,
        index: int,
        intended: int,
        start: int,
        end: int,
        status: int | None,
        nbytes: int,
        error: BaseException | None,
    ) -> None:
        assert self.intended is not None
        self.intended.append(intended)
        self.record(index, start, end, status, nbytes, error)

    def fail(self, index: int, reason: str, status: int | None) -> None:
        self.failure_count += 1
        self.failed.append(index)
        if len(self.failures) < MAX_FAILURES:
            self.failures.append({"index": index, "reason": reason, "status": status})

    def stop(self, first_missed: int, rest: Iterator[int]) -> None:
        """The open loop stopped at D: the schedule from `first_missed` on was not sent (counted later, by
        count_missed(), outside the timed group)."""
        self._unsent = (first_missed, rest)

    def count_missed(self, duration_ns: int | None) -> None:
        if self._unsent is not None and duration_ns is not None:
            self.missed = count_missed(*self._unsent, duration_ns)
        self._unsent = None

    def to_json(self, t0: int, record: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "elapsed_ns": self.loop_end - self.loop_start,
            "count": len(self.latencies),
            "late": self.late,
            "missed": self.missed,
            "bytes": self.nbytes,
            "failure_count": self.failure_count,
            "failures": self.failures,
        }
        if record == "samples":
            out["start_ns"] = [max(0, s - t0) for s in self.starts]
            out["latencies_ns"] = list(self.latencies)
            if self.intended is not None:
                out["intended_ns"] = list(self.intended)
        else:
            out["histograms"] = self.histograms(t0)
        if self.phases is not None:
            out["phases"] = self.phases.to_json()
        return out

    def histograms(self, t0: int) -> dict[str, Any]:
        """Service time and (open loop) corrected latency of the successful requests."""
        failed = set(self.failed)
        ok = [i for i in range(len(self.latencies)) if i not in failed] if failed else range(len(self.latencies))
        lat = self.latencies
        out = {"service": histogram(lat[i] for i in ok)}
        if self.intended is not None:
            starts, intended = self.starts, self.intended
            out["corrected"] = histogram(starts[i] - t0 + lat[i] - intended[i] for i in ok)
        return out
