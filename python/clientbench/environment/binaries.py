"""Where the built artefacts of the repository live."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import SetupError


def repo_root() -> Path:
    """The clientbench checkout: $CLIENTBENCH_ROOT, else the nearest parent of the CWD (or of this
    package) that holds both `server-axum/` and `cpp-beast/`."""
    env = os.environ.get("CLIENTBENCH_ROOT")
    if env:
        return Path(env).resolve()
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for d in (start, *start.parents):
            if (d / "server-axum").is_dir() and (d / "cpp-beast").is_dir():
                return d
    raise SetupError("cannot find the clientbench checkout; run from inside it or set CLIENTBENCH_ROOT")


def server_binary() -> Path:
    return repo_root() / "target" / "release" / "clientbench-server"


def reqwest_driver() -> Path:
    return repo_root() / "target" / "release" / "reqwest-driver"


def beast_driver() -> Path:
    return repo_root() / "build" / "cpp-beast" / "beast-driver"


def floor_driver() -> Path:
    return repo_root() / "build" / "cpp-beast" / "floor-driver"


def beast_soak() -> Path:
    return repo_root() / "build" / "cpp-beast" / "beast-soak"


def reqwest_soak() -> Path:
    return repo_root() / "target" / "release" / "reqwest-soak"


def require(path: Path, what: str) -> Path:
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise SetupError(f"{what} not found at {path}; build it with `make build`")
    return path
