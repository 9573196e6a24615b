"""Bounds on measured time beside the other suites. On two busy cores a sleep ends late (CI saw a server's 40 ms pause
read as 59 ms while the aarch64 wheels built beside the tests), never early, and a phase that holds its neighbour's
time is off by a whole delay on every try. So a timed check raises `OffTime`, and a test marked `retimed` runs again
on it, up to 3 more times with fresh fixtures (pytest-rerunfailures); any other failure fails at once."""

from __future__ import annotations

import pytest


class OffTime(AssertionError):
    """A measured time outside its bound."""


#: run the test again when a timed check missed (and only then)
retimed = pytest.mark.flaky(reruns=3, only_rerun=[OffTime])


def timed(ok: bool, *context: object) -> None:
    """A check of a time: OffTime when it does not hold."""
    if not ok:
        raise OffTime(context)


def about(measured_s: float, expected_s: float, *context: object) -> None:
    """`measured_s` is `expected_s` within the contract's bound, 10 % + 1 ms (docs/raw-format.md)."""
    timed(abs(measured_s - expected_s) <= 0.1 * expected_s + 0.001, f"{measured_s:.4f} s, not {expected_s} s", *context)
