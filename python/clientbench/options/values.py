"""The value types of the command line: each reads one option's text (or one point of a list, e.g. a sweep's
--values) and returns its value, or raises `BadValue` with a message that names what was expected. `BadValue` is
both argparse's ArgumentTypeError (as a `type=`, argparse turns it into the one-line usage error) and a SetupError
(a point of a list read after parsing is one line too).

The rich values keep their parsers with their concept and are called from here or from the parsing layer:
--network (network.py), --targets (targets.py), --pin (testbed.py), a sweep's scenario (dimensions.py), --listen
(commands/serve.py) and --fail-on (analysis/gate.py)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

from ..errors import SetupError
from ..network import Network
from ..network import parse as parse_network
from ..workload import MAX_BODY_SIZE, MAX_CHUNK_SIZE

N = TypeVar("N", int, float)


class BadValue(SetupError, argparse.ArgumentTypeError):
    """A value that is not what its option takes: one line naming what was expected."""


def number(
    kind: type[N],
    what: str,
    minimum: float = 0,
    *,
    strict: bool = False,
    maximum: float | None = None,
    unit: str = "",
    finite: bool = False,
) -> Callable[[str], N]:
    """A number of `kind` >= minimum (> with `strict`), at most `maximum` (`unit` says what that bound is),
    and with `finite` not an infinity or NaN; `what` names what was expected."""

    def parse(text: str) -> N:
        try:
            value = kind(text)
        except ValueError:
            raise BadValue(f"expected {what}, got {text!r}") from None
        if value < minimum or (strict and value == minimum):
            raise BadValue(f"must be {'>' if strict else '>='} {minimum:g}, got {text}")
        if finite and not math.isfinite(value):
            raise BadValue(f"expected {what}, got {text!r}")
        if maximum is not None and value > maximum:
            raise BadValue(f"must be <= {maximum}{unit}, got {text}")
        return value

    return parse


def whole(low: int, high: int | None = None, unit: str = "") -> Callable[[str], int]:
    """A whole number >= low (and <= high)."""
    return number(int, "a whole number", low, maximum=high, unit=unit)


positive = whole(1)
non_negative = whole(0)
seconds = number(float, "seconds", strict=True, finite=True)
non_negative_seconds = number(float, "seconds", finite=True)
rate = number(float, "requests per second", strict=True, finite=True)
milliseconds = number(float, "milliseconds", strict=True, finite=True)
body_size = number(int, "a size in bytes", maximum=MAX_BODY_SIZE)  # 1 GiB
mebibytes = number(float, "a size in MiB", strict=True)
chunk_size = number(int, "a size in bytes", strict=True, maximum=MAX_CHUNK_SIZE)  # 16 MiB


def rate_point(text: str) -> float:
    """One rate of a list (--rates): a positive number of requests/s."""
    try:
        value = float(text)
    except ValueError:
        raise BadValue(f"expected a number of requests/s, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise BadValue(f"a rate must be a positive number of requests/s, got {text!r}")
    return value


def one_of(*names: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in names:
            raise BadValue(f"expected one of {', '.join(names)}, got {text!r}")
        return text

    return parse


def request_path(text: str) -> str:
    if not text.startswith("/"):
        raise BadValue(f"a request path starts with '/', got {text!r}")
    return text


def network_spec(text: str) -> Network | None:
    """--network: rtt=, jitter=, rate=, loss= or a preset (network.parse)."""
    try:
        return parse_network(text)
    except SetupError as exc:
        raise BadValue(str(exc)) from None


def items(text: str) -> list[str]:
    """The items of a comma-separated list, blanks dropped."""
    return [i.strip() for i in text.split(",") if i.strip()]
