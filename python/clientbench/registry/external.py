"""Rows from outside the project (docs/bring-your-own-client.md): any program that speaks the driver contract
(docs/raw-format.md), and Python plugins (clientbench.sdk).

- `--driver NAME='COMMAND ARGS'`: a program, split like a shell line (shlex); the runner appends the
  contract's flags, as for every row;
- `--clients-file clients.toml`: `[clients.NAME]` tables with `command` (a string or a list) or `plugin`
  (MODULE:OBJECT [ARGS]), and optional `tags` and `default`; a relative program path is relative to the file;
- `--client [NAME=]MODULE:OBJECT [ARGS]`: a plugin, run by `python -m clientbench.plugin MODULE:OBJECT ARGS`;
- a `clientbench.clients` entry point of an installed distribution: NAME = "MODULE:OBJECT".

Their language, library and mode come from their own documents (`ClientSpec.from_document`).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ..errors import SetupError
from ..model import Client
from .shipped import CLIENTS
from .spec import ClientSpec, PythonDriver

ENTRY_POINT_GROUP = "clientbench.clients"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_TOML_KEYS = {"command", "plugin", "tags", "default"}


@dataclass(frozen=True)
class Program:
    """An external driver's command line; the program is found when the row runs (SetupError if not)."""

    argv: tuple[str, ...]
    base: Path | None = None  # a relative program path (one with a '/') is relative to this folder

    def __call__(self) -> list[str]:
        program = self.argv[0]
        if os.sep in program:
            path = Path(program).expanduser()
            if not path.is_absolute() and self.base is not None:
                path = self.base / path
            if not path.is_file():
                raise SetupError(f"command not found: {program} (no such file: {path})")
            if not os.access(path, os.X_OK):
                raise SetupError(f"command not executable: {path}")
            found = str(path)
        else:
            which = shutil.which(program)
            if which is None:
                raise SetupError(f"command not found: {program!r} is not on PATH")
            found = which
        return [found, *self.argv[1:]]


def _check_name(name: str, where: str) -> str:
    if not _NAME.fullmatch(name):
        raise SetupError(f"{where}: {name!r} is not a row name (letters, digits and . _ + -, not first)")
    return name


def _split(command: str, where: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise SetupError(f"{where}: cannot split {command!r}: {exc}") from None
    if not argv:
        raise SetupError(f"{where}: the command is empty")
    return argv


def program_spec(
    name: str, argv: Sequence[str], *, base: Path | None = None, tags: Sequence[str] = (), default: bool = True
) -> ClientSpec:
    """A row whose driver is an external program."""
    client = Client(name=name, language="external", library=name, mode="-")
    return ClientSpec(
        client, Program(tuple(argv), base), tags=tuple(tags), default=default, from_document=True, phases=False
    )


def plugin_spec(name: str, plugin: str, *, tags: Sequence[str] = (), default: bool = True) -> ClientSpec:
    """A row whose driver is a Python plugin (clientbench.sdk): `MODULE:OBJECT [ARGS]`, e.g. an async
    plugin's `--loop uvloop`."""
    target, *args = _split(plugin, name)
    _target(target, name)
    client = Client(name=name, language="Python", library=name, mode="-")
    # no needs_module: the driver process says, in one line, why it cannot import the plugin's module
    return ClientSpec(client, PythonDriver(target, tuple(args)), tags=tuple(tags), default=default, from_document=True)


def _target(target: str, where: str) -> str:
    module, sep, obj = target.partition(":")
    if not sep or not module or not obj or not all(p.isidentifier() for p in (*module.split("."), *obj.split("."))):
        raise SetupError(f"{where}: {target!r} is not MODULE:OBJECT (e.g. mybench:plugin)")
    return module


def parse_driver(text: str) -> ClientSpec:
    """`--driver NAME=COMMAND ARGS`."""
    name, sep, command = text.partition("=")
    if not sep:
        raise SetupError(f"--driver {text!r}: expected NAME='COMMAND ARGS'")
    name = _check_name(name.strip(), "--driver")
    return program_spec(name, _split(command, f"--driver {name}"))


def parse_client(text: str) -> ClientSpec:
    """`--client [NAME=]MODULE:OBJECT [ARGS]`; the name defaults to py-<the module's last part>."""
    name, sep, plugin = text.partition("=")
    if not sep or not _NAME.fullmatch(name.strip()):  # no name: the = (if any) is in the ARGS
        name, plugin = "", text
    target = _split(plugin, "--client")[0]
    module = _target(target, "--client")
    name = name.strip() or "py-" + module.rsplit(".", 1)[-1].replace("_", "-")
    return plugin_spec(name, plugin)


def load_clients_file(path: Path) -> list[ClientSpec]:
    """The rows of a clients.toml: `[clients.NAME]` with `command` or `plugin`, and `tags`, `default`."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        raise SetupError("--clients-file needs Python 3.11 or later (tomllib)") from None
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SetupError(f"--clients-file {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SetupError(f"--clients-file {path}: not TOML: {exc}") from None
    table = doc.get("clients")
    if not isinstance(table, dict) or not table or set(doc) - {"clients"}:
        raise SetupError(f"--clients-file {path}: expected [clients.NAME] tables and nothing else")
    base = path.resolve().parent
    return [_toml_spec(name, entry, f"--clients-file {path}: [clients.{name}]", base) for name, entry in table.items()]


def _toml_spec(name: str, entry: Any, where: str, base: Path) -> ClientSpec:
    if not isinstance(entry, dict):
        raise SetupError(f"{where}: expected a table")
    unknown = set(entry) - _TOML_KEYS
    if unknown:
        raise SetupError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_TOML_KEYS))})"
        )
    _check_name(name, where)
    tags, default = entry.get("tags", []), entry.get("default", True)
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
        raise SetupError(f"{where}: tags must be a list of names")
    if not isinstance(default, bool):
        raise SetupError(f"{where}: default must be true or false")
    if ("command" in entry) == ("plugin" in entry):
        raise SetupError(f"{where}: give either command or plugin")
    if "plugin" in entry:
        if not isinstance(entry["plugin"], str):
            raise SetupError(f"{where}: plugin must be a string, MODULE:OBJECT [ARGS]")
        return plugin_spec(name, entry["plugin"], tags=tags, default=default)
    command = entry["command"]
    if isinstance(command, str):
        argv = _split(command, where)
    elif isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        argv = tuple(command)
    else:
        raise SetupError(f"{where}: command must be a string or a non-empty list of strings")
    return program_spec(name, argv, base=base, tags=tags, default=default)


def entry_point_specs() -> list[ClientSpec]:
    """The plugins installed distributions register as `clientbench.clients` entry points (NAME =
    "MODULE:OBJECT"); nothing is imported here, the driver process does that."""
    specs = []
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        where = f"entry point {ep.name} ({ep.value})"
        specs.append(plugin_spec(_check_name(ep.name, where), ep.value.replace(" ", "")))
    return specs


def registry(
    drivers: Sequence[str] = (),
    plugins: Sequence[str] = (),
    files: Sequence[Path] = (),
    entry_points: bool = True,
    builtin: Sequence[ClientSpec] = CLIENTS,
) -> list[ClientSpec]:
    """The shipped rows, then the installed plugins, the clients files', the --client and the --driver rows;
    SetupError when two rows share a name."""
    extra: list[ClientSpec] = [*(entry_point_specs() if entry_points else [])]
    for file in files:
        extra += load_clients_file(file)
    extra += [parse_client(p) for p in plugins]
    extra += [parse_driver(d) for d in drivers]
    specs = [*builtin, *extra]
    _unique(specs)
    return specs


def _unique(specs: Iterable[ClientSpec]) -> None:
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise SetupError(f"two clients are named {spec.name!r}: give one another name (NAME=...)")
        seen.add(spec.name)


def add_options(g: argparse._ArgumentGroup | argparse.ArgumentParser) -> None:
    """The command-line options of these rows (run, sweep, cost, list, check-driver)."""
    g.add_argument(
        "--driver",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="a row whose driver is this program (any language; it speaks docs/raw-format.md), e.g. "
        "--driver go-nethttp='./go-driver --flag'; repeatable",
    )
    g.add_argument(
        "--clients-file",
        action="append",
        default=[],
        type=Path,
        metavar="TOML",
        help="rows from a clients.toml: [clients.NAME] with command = '...' (or plugin = 'MODULE:OBJECT'), "
        "tags = [...], default = true|false",
    )
    g.add_argument(
        "--client",
        dest="plugins",
        action="append",
        default=[],
        metavar="[NAME=]MODULE:OBJECT",
        help="a row whose driver is a Python plugin (clientbench.sdk) importable as MODULE:OBJECT, e.g. "
        "mybench:plugin, or with its own flags: 'py-mybench-uvloop=mybench:plugin --loop uvloop'; repeatable",
    )


def describe(spec: ClientSpec) -> str:
    """What runs a row from outside the project, for `clientbench list`."""
    if isinstance(spec.command, PythonDriver):
        return f"Python plugin {spec.command.plugin}"
    if isinstance(spec.command, Program):
        return f"program {shlex.join(spec.command.argv)}"
    return spec.label
