"""The executables the clientbench runner starts, built for Linux (manylinux_2_28, x86-64 or aarch64): the axum
server, the Rust reqwest driver and soak probe, the C++ Beast and raw-socket floor drivers and the Beast soak
probe, and toxiproxy. The runner (clientbench.environment.binaries) finds them through bin_dir().

_version.py is written by scripts/build-native-wheel.sh from the runner's own version (python/clientbench/
__init__.py): `pip install "clientbench[native]"` asks for this distribution at exactly that version."""

from __future__ import annotations

from pathlib import Path

from ._version import __version__

__all__ = ["__version__", "bin_dir"]


def bin_dir() -> Path:
    """The folder that holds the executables (clientbench-server, reqwest-driver, reqwest-soak, beast-driver,
    floor-driver, beast-soak, toxiproxy-server)."""
    return Path(__file__).resolve().parent / "bin"
