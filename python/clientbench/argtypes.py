"""The command line's value types: each parses one option's text or raises argparse.ArgumentTypeError with a
message that names what was expected (argparse turns it into the one-line usage error)."""

from __future__ import annotations

import argparse
import math

from .errors import SetupError
from .network import Network
from .network import parse as parse_network
from .workload import MAX_BODY_SIZE


def number(kind: type, minimum: float, what: str, strict: bool = False):  # type: ignore[no-untyped-def]
    def parse(text: str):  # type: ignore[no-untyped-def]
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum or (strict and value == minimum):
            raise argparse.ArgumentTypeError(f"must be {'>' if strict else '>='} {minimum:g}, got {text}")
        return value

    return parse


def finite(kind: type, what: str, strict: bool, maximum: float | None = None):  # type: ignore[no-untyped-def]
    """A finite number > 0 (strict) or >= 0, at most `maximum`; the message names what was expected."""
    parse = number(kind, 0, what, strict=strict)

    def checked(text: str):  # type: ignore[no-untyped-def]
        value = parse(text)
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum}, got {text}")
        return value

    return checked


positive = number(int, 1, "a whole number")
non_negative = number(int, 0, "a whole number")
seconds = finite(float, "seconds", strict=True)
non_negative_seconds = finite(float, "seconds", strict=False)
rate = finite(float, "requests per second", strict=True)
milliseconds = finite(float, "milliseconds", strict=True)
body_size = finite(int, "a size in bytes", strict=False, maximum=MAX_BODY_SIZE)  # 1 GiB
mebibytes = number(float, 0, "a size in MiB", strict=True)


def network_spec(text: str) -> Network | None:
    try:
        return parse_network(text)
    except SetupError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def request_path(text: str) -> str:
    if not text.startswith("/"):
        raise argparse.ArgumentTypeError(f"a request path starts with '/', got {text!r}")
    return text
