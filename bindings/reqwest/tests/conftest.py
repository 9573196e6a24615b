"""The fixtures shared by the three pytest suites (`server`, `closed_port_url`, `raw_server`) are in
python/tests/support/ of the checkout: put it (and `clientbench`, when it is not installed) on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

try:
    import clientbench  # noqa: F401  (server control)
except ImportError:
    sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "python" / "tests"))

pytest_plugins = ("support.fixtures",)
