"""The client registry: which driver runs each row of the table, and how the row is labelled.

A row is a driver command (docs/raw-format.md) plus its `model.Client` labels. Adding a client row = one
driver (a plugin in python/clientbench/drivers/, or a native program) plus one entry in CLIENTS; rows from
outside the project (an external program, a user's plugin: run/external.py) join them for one command.
Selecting rows (`--clients`) matches names, or tags, with shell-style globs, e.g. `--clients 'py-*'` or
`--clients cpp-beast,rust-reqwest`.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib.util
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SetupError
from ..model import Client
from . import paths
from .interpreters import Interpreter, has_module


@dataclass(frozen=True)
class PythonDriver:
    """A Python row: a plugin (clientbench.sdk) run by `python -m clientbench.plugin MODULE:OBJECT <args>`,
    under any interpreter."""

    plugin: str  # MODULE:OBJECT
    args: tuple[str, ...] = ()

    def argv(self, python: str) -> list[str]:
        return [python, "-m", "clientbench.plugin", self.plugin, *self.args]


@dataclass(frozen=True)
class ClientSpec:
    client: Client
    command: Callable[[], list[str]] | PythonDriver = field(compare=False, repr=False)
    needs_module: str | None = None  # Python module the driver imports (bindings, peers)
    install_hint: str = "make build"
    default: bool = True  # in the default selection (`make run`); others need --clients or `--all`
    python: Interpreter | None = None  # a Python row under another interpreter (None: the runner's own)
    tags: tuple[str, ...] = ()  # more names `--clients` selects the row by
    #: the row's language, library and mode come from its own document (a row from outside the project)
    from_document: bool = False

    @property
    def is_python(self) -> bool:
        return isinstance(self.command, PythonDriver)

    def under(self, interpreter: Interpreter | None) -> ClientSpec:
        """This Python row under another interpreter (named `<name>@<label>`)."""
        if interpreter is None or not self.is_python:
            return self
        client = dataclasses.replace(
            self.client, name=f"{self.client.name}@{interpreter.label}", interpreter=interpreter.label
        )
        return dataclasses.replace(self, client=client, python=interpreter)

    def labelled(self, info: dict[str, Any]) -> Client:
        """The row's labels as its document gives them (the document's client section, validated)."""
        if not self.from_document:
            return self.client
        return dataclasses.replace(
            self.client, language=info["language"], library=info["library"], mode=info["mode"], gil=info["gil"]
        )

    def matches(self, pattern: str) -> bool:
        return any(fnmatch.fnmatchcase(n, pattern) for n in (self.name, *self.tags))

    def env(self) -> dict[str, str]:
        return self.python.env() if self.python is not None else {}

    @property
    def name(self) -> str:
        return self.client.name

    @property
    def label(self) -> str:
        return self.client.label

    def argv(self) -> list[str]:
        """The driver command without workload flags; SetupError if it cannot run here."""
        if isinstance(self.command, PythonDriver):
            python = self.python.executable if self.python is not None else sys.executable
            if self.needs_module:
                found = (
                    has_module(python, self.needs_module)
                    if self.python is not None
                    else importlib.util.find_spec(self.needs_module) is not None
                )
                if not found:
                    where = python if self.python is not None else sys.prefix
                    raise SetupError(
                        f"Python module {self.needs_module!r} is not installed in {where}; run `{self.install_hint}`"
                    )
            return self.command.argv(python)
        return self.command()


def _native(path: Callable[[], Path], what: str, *extra: str) -> Callable[[], list[str]]:
    return lambda: [str(paths.require(path(), what)), *extra]


def _python(plugin: str, *extra: str) -> PythonDriver:
    """A plugin of clientbench/drivers/, e.g. `httpx_driver:SYNC`."""
    return PythonDriver(f"clientbench.drivers.{plugin}", extra)


def _spec(
    name: str,
    language: str,
    library: str,
    mode: str,
    command: Callable[[], list[str]] | PythonDriver,
    *,
    gil: str | None = None,
    fixed_workers: int | None = None,
    floor: bool = False,
    optional: bool = False,
    needs_module: str | None = None,
    install_hint: str = "make build",
    default: bool = True,
) -> ClientSpec:
    client = Client(
        name=name,
        language=language,
        library=library,
        mode=mode,
        gil=gil,
        fixed_workers=fixed_workers,
        floor=floor,
        optional=optional,
    )
    return ClientSpec(client, command, needs_module=needs_module, install_hint=install_hint, default=default)


PeerRow = tuple[str, str, str, str, tuple[str, ...], str]


def _on_uvloop(*rows: PeerRow) -> list[PeerRow]:
    """Each async row on asyncio, followed by the same row on uvloop (`--loop uvloop`; `py-httpx-async` ->
    `py-httpx-uvloop`, its library `httpx+uvloop` as its document says); aiohttp's uvloop row is listed as is."""
    out: list[PeerRow] = []
    for name, library, mode, plugin, extra, needs in rows:
        out.append((name, library, mode, plugin, extra, needs))
        if mode == "async" and not extra:
            base = name.removesuffix("-async")
            out.append((f"{base}-uvloop", f"{library}+uvloop", mode, plugin, ("--loop", "uvloop"), needs))
    return out


_BEAST = (paths.beast_driver, "C++ beast driver")
_REQWEST = (paths.reqwest_driver, "Rust reqwest driver")

CLIENTS: tuple[ClientSpec, ...] = (
    _spec("cpp-beast", "C++", "beast", "sync", _native(*_BEAST)),
    _spec("rust-reqwest", "Rust", "reqwest", "async", _native(*_REQWEST)),
    _spec(
        "py-requests",
        "Python",
        "requests",
        "sync",
        _python("requests_driver:SYNC"),
        needs_module="requests",
        install_hint="make venv",
    ),
    _spec(
        "py-beast-held",
        "Python",
        "beast",
        "sync",
        _python("binding:beast_held"),
        gil="held",
        needs_module="beast_client",
        install_hint="make bindings",
    ),
    _spec(
        "py-beast-released",
        "Python",
        "beast",
        "sync",
        _python("binding:beast_released"),
        gil="released",
        needs_module="beast_client",
        install_hint="make bindings",
    ),
    _spec(
        "py-aiohttp",
        "Python",
        "aiohttp",
        "async",
        _python("aiohttp_driver:ASYNC"),
        needs_module="aiohttp",
        install_hint="make venv",
    ),
    _spec(
        "py-reqwest-async",
        "Python",
        "reqwest",
        "async",
        _python("binding:reqwest_async"),
        needs_module="reqwest_client",
        install_hint="make bindings",
    ),
    _spec(
        "py-reqwest-held",
        "Python",
        "reqwest",
        "sync",
        _python("binding:reqwest_held"),
        gil="held",
        needs_module="reqwest_client",
        install_hint="make bindings",
    ),
    _spec(
        "py-reqwest-released",
        "Python",
        "reqwest",
        "sync",
        _python("binding:reqwest_released"),
        gil="released",
        needs_module="reqwest_client",
        install_hint="make bindings",
    ),
    _spec(
        "py-reqwest-uvloop",
        "Python",
        "reqwest+uvloop",
        "async",
        _python("binding:reqwest_async", "--loop", "uvloop"),
        needs_module="reqwest_client",
        install_hint="make bindings peers",
        default=False,
    ),
    # -- more native rows and the floor (make run-all) ---------------------------------------------
    _spec("cpp-beast-serial", "C++", "beast", "sync", _native(*_BEAST), default=False, fixed_workers=1),
    _spec("rust-reqwest-sync", "Rust", "reqwest", "sync", _native(*_REQWEST, "--mode", "sync"), default=False),
    _spec(
        "cpp-floor",
        "C++",
        "raw socket",
        "sync",
        _native(paths.floor_driver, "C++ floor driver"),
        default=False,
        floor=True,
    ),
    # -- peers from PyPI (make peers; make run-all): each async row also on uvloop ------------------
    *(
        _spec(
            name,
            "Python",
            library,
            mode,
            _python(plugin, *extra),
            needs_module=needs,
            install_hint="make peers",
            default=False,
            optional=True,
        )
        for name, library, mode, plugin, extra, needs in _on_uvloop(
            ("py-httpx-sync", "httpx", "sync", "httpx_driver:SYNC", (), "httpx"),
            ("py-httpx-async", "httpx", "async", "httpx_driver:ASYNC", (), "httpx"),
            ("py-httpx2-sync", "httpx2", "sync", "httpx2_driver:SYNC", (), "httpx2"),
            ("py-httpx2-async", "httpx2", "async", "httpx2_driver:ASYNC", (), "httpx2"),
            ("py-urllib3", "urllib3", "sync", "urllib3_driver:SYNC", (), "urllib3"),
            ("py-niquests-sync", "niquests", "sync", "niquests_driver:SYNC", (), "niquests"),
            ("py-niquests-async", "niquests", "async", "niquests_driver:ASYNC", (), "niquests"),
            ("py-pycurl", "pycurl", "sync", "pycurl_driver:SYNC", (), "pycurl"),
            ("py-aiohttp-uvloop", "aiohttp+uvloop", "async", "aiohttp_driver:ASYNC", ("--loop", "uvloop"), "uvloop"),
            ("py-pyreqwest-sync", "pyreqwest", "sync", "pyreqwest_driver:SYNC", (), "pyreqwest"),
            ("py-pyreqwest-async", "pyreqwest", "async", "pyreqwest_driver:ASYNC", (), "pyreqwest"),
            ("py-pyqwest-sync", "pyqwest", "sync", "pyqwest_driver:SYNC", (), "pyqwest"),
            ("py-pyqwest-async", "pyqwest", "async", "pyqwest_driver:ASYNC", (), "pyqwest"),
            ("py-wreq-sync", "wreq", "sync", "wreq_driver:SYNC", (), "wreq"),
            ("py-wreq-async", "wreq", "async", "wreq_driver:ASYNC", (), "wreq"),
            ("py-rnet-sync", "rnet", "sync", "rnet_driver:SYNC", (), "rnet"),
            ("py-rnet-async", "rnet", "async", "rnet_driver:ASYNC", (), "rnet"),
            ("py-curl_cffi-sync", "curl_cffi", "sync", "curl_cffi_driver:SYNC", (), "curl_cffi"),
            ("py-curl_cffi-async", "curl_cffi", "async", "curl_cffi_driver:ASYNC", (), "curl_cffi"),
        )
    ),
)


def select(
    patterns: Sequence[str] | None, clients: Sequence[ClientSpec] = CLIENTS, everything: bool = False
) -> list[ClientSpec]:
    """Rows whose name (or a tag) matches any of the comma-separated glob patterns, in table order; without
    patterns the default rows (or every row with `everything`)."""
    if not patterns:
        return [c for c in clients if everything or c.default]
    wanted = [p.strip() for item in patterns for p in item.split(",") if p.strip()]
    unknown = [p for p in wanted if not any(c.matches(p) for c in clients)]
    if unknown:
        names = ", ".join(c.name for c in clients)
        raise SetupError(f"no client matches {', '.join(map(repr, unknown))}; known clients: {names}")
    return [c for c in clients if any(c.matches(p) for p in wanted)]


def under(specs: Sequence[ClientSpec], interpreters: Sequence[Interpreter | None]) -> list[ClientSpec]:
    """Every Python row once per interpreter (None: the runner's own), next to each other; native rows once."""
    if not interpreters:
        return list(specs)
    out: list[ClientSpec] = []
    for spec in specs:
        out += [spec.under(i) for i in interpreters] if spec.is_python else [spec]
    return out
