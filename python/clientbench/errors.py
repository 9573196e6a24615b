"""The one error type the command line turns into a one-line message."""

from __future__ import annotations


class SetupError(RuntimeError):
    """Something the run needs is missing or wrong (a binary not built, a bad option): one-line message."""
