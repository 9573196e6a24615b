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
    optional: bool = False  # a peer from PyPI: when not installed the row is skipped, not failed
    fixed_workers: int | None = None  # e.g. 1 for a serial row, whatever --workers says

    @property
    def label(self) -> str:
        gil = f", GIL {self.gil}" if self.gil else ""
        serial = ", W=1" if self.fixed_workers == 1 else ""
        return f"{self.language} {self.library} ({self.mode}{gil}{serial})"

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
    ClientSpec("py-beast-held", "Python", "beast", "sync", "held",
               _python("binding", "--binding", "beast", "--gil", "held"),
               needs_module="beast_client", install_hint="make bindings"),
    ClientSpec("py-beast-released", "Python", "beast", "sync", "released",
               _python("binding", "--binding", "beast", "--gil", "released"),
               needs_module="beast_client", install_hint="make bindings"),
    ClientSpec("py-aiohttp", "Python", "aiohttp", "async", None, _python("aiohttp_driver"),
               needs_module="aiohttp", install_hint="make venv"),
    ClientSpec("py-reqwest-async", "Python", "reqwest", "async", None,
               _python("binding", "--binding", "reqwest", "--mode", "async"),
               needs_module="reqwest_client", install_hint="make bindings"),
    ClientSpec("py-reqwest-held", "Python", "reqwest", "sync", "held",
               _python("binding", "--binding", "reqwest", "--gil", "held"),
               needs_module="reqwest_client", install_hint="make bindings"),
    ClientSpec("py-reqwest-released", "Python", "reqwest", "sync", "released",
               _python("binding", "--binding", "reqwest", "--gil", "released"),
               needs_module="reqwest_client", install_hint="make bindings"),
    # -- more native rows and the floor (make run-all) ---------------------------------------------
    ClientSpec("cpp-beast-serial", "C++", "beast", "sync", None, _native(paths.beast_driver, "C++ beast driver"),
               default=False, fixed_workers=1),
    ClientSpec("rust-reqwest-sync", "Rust", "reqwest", "sync", None,
               lambda: [*_native(paths.reqwest_driver, "Rust reqwest driver")(), "--mode", "sync"], default=False),
    ClientSpec("cpp-floor", "C++", "raw socket", "sync", None, _native(paths.floor_driver, "C++ floor driver"),
               default=False, floor=True),
    # -- peers from PyPI (make peers; make run-all) -------------------------------------------------
    *(
        ClientSpec(name, "Python", library, mode, None, _python(module, *extra), needs_module=needs,
                   install_hint="make peers", default=False, optional=True)
        for name, library, mode, module, extra, needs in (
            ("py-httpx-sync", "httpx", "sync", "httpx_driver", ("--mode", "sync"), "httpx"),
            ("py-httpx-async", "httpx", "async", "httpx_driver", ("--mode", "async"), "httpx"),
            ("py-urllib3", "urllib3", "sync", "urllib3_driver", (), "urllib3"),
            ("py-pycurl", "pycurl", "sync", "pycurl_driver", (), "pycurl"),
            ("py-aiohttp-uvloop", "aiohttp+uvloop", "async", "aiohttp_driver", ("--loop", "uvloop"), "uvloop"),
            ("py-pyreqwest-sync", "pyreqwest", "sync", "pyreqwest_driver", ("--mode", "sync"), "pyreqwest"),
            ("py-pyreqwest-async", "pyreqwest", "async", "pyreqwest_driver", ("--mode", "async"), "pyreqwest"),
            ("py-rnet-sync", "rnet", "sync", "rnet_driver", ("--mode", "sync"), "rnet"),
            ("py-rnet-async", "rnet", "async", "rnet_driver", ("--mode", "async"), "rnet"),
            ("py-curl_cffi-sync", "curl_cffi", "sync", "curl_cffi_driver", ("--mode", "sync"), "curl_cffi"),
            ("py-curl_cffi-async", "curl_cffi", "async", "curl_cffi_driver", ("--mode", "async"), "curl_cffi"),
        )
    ),
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
