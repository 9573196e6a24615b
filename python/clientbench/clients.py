"""The rows of the table: which driver runs each client, and how it is labelled.

A row is a driver command (docs/raw-format.md) plus labels. Selecting rows (`--clients`) matches names
with shell-style globs, e.g. `--clients 'py-*'` or `--clients cpp-beast,rust-reqwest`.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from . import paths
from .paths import SetupError


@dataclass(frozen=True)
class ClientSpec:
    name: str
    language: str
    library: str
    mode: str  # "sync" | "async"
    gil: str | None  # "held" | "released" | None
    command: Callable[[], list[str]] = field(compare=False, repr=False)
    needs_module: str | None = None  # Python module the driver imports (bindings)
    install_hint: str = "make build"
    default: bool = True  # in the default selection (`make run`); others need --clients or `--all`
    floor: bool = False  # a raw-socket floor row: the `xfloor` column divides by its Mean

    @property
    def label(self) -> str:
        gil = f", GIL {self.gil}" if self.gil else ""
        return f"{self.language} {self.library} ({self.mode}{gil})"

    def argv(self) -> list[str]:
        """The driver command without workload flags; SetupError if it cannot run here."""
        if self.needs_module and importlib.util.find_spec(self.needs_module) is None:
            raise SetupError(f"Python module {self.needs_module!r} is not installed in {sys.prefix}; "
                             f"run `{self.install_hint}`")
        return self.command()


def _native(path: Callable[[], Path], what: str) -> Callable[[], list[str]]:
    return lambda: [str(paths.require(path(), what))]


def _python(module: str, *extra: str) -> Callable[[], list[str]]:
    return lambda: [sys.executable, "-m", f"clientbench.drivers.{module}", *extra]


CLIENTS: tuple[ClientSpec, ...] = (
    ClientSpec("cpp-beast", "C++", "beast", "sync", None, _native(paths.beast_driver, "C++ beast driver")),
    ClientSpec("rust-reqwest", "Rust", "reqwest", "async", None,
               _native(paths.reqwest_driver, "Rust reqwest driver")),
    ClientSpec("py-requests", "Python", "requests", "sync", None, _python("requests_driver"),
               needs_module="requests", install_hint="make venv"),
    ClientSpec("py-beast-held", "Python", "beast", "sync", "held", _python("beast_binding", "--gil", "held"),
               needs_module="beast_client", install_hint="make bindings"),
    ClientSpec("py-beast-released", "Python", "beast", "sync", "released",
               _python("beast_binding", "--gil", "released"),
               needs_module="beast_client", install_hint="make bindings"),
    ClientSpec("py-aiohttp", "Python", "aiohttp", "async", None, _python("aiohttp_driver"),
               needs_module="aiohttp", install_hint="make venv"),
    ClientSpec("py-reqwest-async", "Python", "reqwest", "async", None, _python("reqwest_async_binding"),
               needs_module="reqwest_client", install_hint="make bindings"),
    ClientSpec("py-reqwest-held", "Python", "reqwest", "sync", "held",
               _python("reqwest_binding", "--gil", "held"),
               needs_module="reqwest_client", install_hint="make bindings"),
    ClientSpec("py-reqwest-released", "Python", "reqwest", "sync", "released",
               _python("reqwest_binding", "--gil", "released"),
               needs_module="reqwest_client", install_hint="make bindings"),
)


def select(patterns: Sequence[str] | None, clients: Sequence[ClientSpec] = CLIENTS,
           everything: bool = False) -> list[ClientSpec]:
    """Rows whose name matches any of the comma-separated glob patterns, in table order; without
    patterns the default rows (or every row with `everything`)."""
    if not patterns:
        return [c for c in clients if everything or c.default]
    wanted = [p.strip() for item in patterns for p in item.split(",") if p.strip()]
    unknown = [p for p in wanted if not any(fnmatch.fnmatchcase(c.name, p) for c in clients)]
    if unknown:
        names = ", ".join(c.name for c in clients)
        raise SetupError(f"no client matches {', '.join(map(repr, unknown))}; known clients: {names}")
    return [c for c in clients if any(fnmatch.fnmatchcase(c.name, p) for p in wanted)]
