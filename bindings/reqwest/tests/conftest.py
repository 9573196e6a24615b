"""Make `clientbench` (repository python/) importable, and provide the axum server for the tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[3]

try:
    import clientbench  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "python"))


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """Base URL (no trailing slash) of a clientbench-server started for this test session.

    Needs target/release/clientbench-server: `cargo build --release -p clientbench-server`."""
    from clientbench.server import Server

    with Server(REPO / "target" / "release" / "clientbench-server") as s:
        yield s.url
