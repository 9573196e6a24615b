"""Where the executables the runner starts come from: the server, the native drivers and probes, toxiproxy.

Installed with pip, they come with the `clientbench-native` distribution (`pip install "clientbench[native]"`:
its package `clientbench_native` carries them and says where). Run from a checkout (an editable install, or
CLIENTBENCH_ROOT), the runner takes the checkout's own builds (`make build`), so that what a developer just
built is what runs. A missing executable is `Unavailable`: its row says how to get it, and runs nothing.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import SetupError

#: the distribution that carries the executables, and its package
NATIVE_DISTRIBUTION, NATIVE_PACKAGE = "clientbench-native", "clientbench_native"


class Unavailable(SetupError):
    """Something a row or a command needs is not installed here; the message says how to get it."""


@dataclass(frozen=True)
class Executable:
    name: str
    what: str
    checkout_path: str  # where a checkout builds it, relative to its root
    make: str  # the make target that builds it there


EXECUTABLES = {
    e.name: e
    for e in (
        Executable("clientbench-server", "the axum server", "target/release/clientbench-server", "make rust"),
        Executable("reqwest-driver", "the Rust reqwest driver", "target/release/reqwest-driver", "make rust"),
        Executable("reqwest-soak", "the Rust soak probe", "target/release/reqwest-soak", "make rust"),
        Executable("beast-driver", "the C++ Beast driver", "build/cpp-beast/beast-driver", "make cpp"),
        Executable("floor-driver", "the C++ raw-socket floor driver", "build/cpp-beast/floor-driver", "make cpp"),
        Executable("beast-soak", "the C++ soak probe", "build/cpp-beast/beast-soak", "make cpp"),
        Executable("toxiproxy-server", "toxiproxy (network emulation)", "build/bin/toxiproxy-server", "make toxiproxy"),
        Executable("udp-relay", "the UDP relay (network emulation over QUIC)", "target/release/udp-relay", "make rust"),
    )
}


def _is_checkout(d: Path) -> bool:
    return (d / "server-axum").is_dir() and (d / "cpp-beast").is_dir() and (d / "python" / "clientbench").is_dir()


@cache
def checkout() -> Path | None:
    """The checkout the runner runs from: $CLIENTBENCH_ROOT, else the one this package is imported from (an
    editable install of python/); None when the runner is an installed package."""
    env = os.environ.get("CLIENTBENCH_ROOT")
    if env:
        root = Path(env).expanduser().resolve()
        if not _is_checkout(root):
            raise SetupError(f"CLIENTBENCH_ROOT={env} is not a clientbench checkout (no server-axum/, cpp-beast/)")
        return root
    here = Path(__file__).resolve().parents[3]  # .../python/clientbench/environment/binaries.py
    return here if _is_checkout(here) else None


def repo_root() -> Path:
    """The checkout; SetupError when the runner is an installed package (the caller needs a checkout's file)."""
    root = checkout()
    if root is None:
        raise SetupError("this needs a clientbench checkout (the runner is an installed package): set CLIENTBENCH_ROOT")
    return root


@cache
def native_bin() -> Path | None:
    """The folder of the installed clientbench-native's executables (None: not installed)."""
    try:
        module = importlib.import_module(NATIVE_PACKAGE)
    except ImportError:
        return None
    folder = Path(module.bin_dir())
    return folder if folder.is_dir() else None


def native_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version(NATIVE_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


#: what brings each extra's rows in a checkout
MAKE = {"core": "make venv", "native": "make build", "bindings": "make bindings", "peers": "make peers"}


def hint(extra: str) -> str:
    """How to get what an extra brings: its make target in a checkout, else pip (extras joined by +)."""
    parts = extra.split("+")
    if checkout() is not None:
        return "run `" + " ".join(dict.fromkeys(MAKE[p].removeprefix("make ") for p in parts)).join(("make ", "`"))
    named = [p for p in parts if p != "core"]
    return f'pip install "clientbench[{",".join(named)}]"' if named else "pip install clientbench"


def find(name: str) -> Path | None:
    """An executable's path, or None when it is not there."""
    exe = EXECUTABLES[name]
    root = checkout()
    candidates = [root / exe.checkout_path] if root is not None else []
    if (folder := native_bin()) is not None:
        candidates.append(folder / name)
    return next((p for p in candidates if p.is_file() and os.access(p, os.X_OK)), None)


def require(name: str) -> Path:
    """An executable's path; Unavailable saying how to get it."""
    path = find(name)
    if path is not None:
        return path
    exe = EXECUTABLES[name]
    root = checkout()
    if root is not None:
        raise Unavailable(f"{exe.what} is not built at {root / exe.checkout_path}: run `{exe.make}`")
    raise Unavailable(f'{exe.what} is not installed: pip install "clientbench[native]"')


def results_base() -> Path:
    """Where results folders go by default: ./results under the current folder."""
    return Path.cwd() / "results"
