"""The one row selection: what `-c` (names or globs, comma-separated, repeatable), `--all`, the rows from outside
the project (installed plugins, --clients-file, --client, --driver) and --interpreters / --python mean, for every
command that runs rows (run, sweep, gil, cost, profile, soak, check-driver, list).

A command's own reading of -c is an option of `select`, not a function of its own:

- run, sweep, profile and list: names, globs and tags over the registry, the default rows without -c (every row
  with --all), in table order; a row named by its exact name is `explicit` (a run fails when it cannot run it).
- cost (`tails`): also a name that matches no row but is the last part of rows' names stands for those rows
  (`floor` for cpp-floor and py-floor).
- soak (`among` its targets, `exact`): its own targets, named exactly, in the order given (every one without -c).
- check-driver (`named`): only the rows named (the command after --, the --driver and --client rows, the -c rows,
  else the --clients-file rows), at least one.
- gil: its phases' fixed rows (`among` the shipped rows), which --interpreters repeats.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, overload

from ..environment.interpreters import Interpreter
from ..environment.interpreters import resolve as resolve_interpreters
from ..errors import SetupError
from ..registry import external
from ..registry.spec import ClientSpec, under
from .values import items


@dataclass(frozen=True)
class RowFlags:
    """What the command line says about rows."""

    clients: tuple[str, ...] = ()  # -c/--clients: each a comma-separated list of names or globs
    all: bool = False  # --all: every row, not only the default set
    drivers: tuple[str, ...] = ()  # --driver NAME=COMMAND
    plugins: tuple[str, ...] = ()  # --client [NAME=]MODULE:OBJECT
    clients_files: tuple[Path, ...] = ()  # --clients-file TOML
    interpreters: str | None = None  # --interpreters LIST
    python: str | None = None  # --python PATH
    program: tuple[str, ...] = ()  # check-driver's `-- COMMAND ARGS`


class Row(Protocol):
    """What the selection reads of a row (a registry row, a soak target)."""

    @property
    def name(self) -> str: ...

    @property
    def tags(self) -> tuple[str, ...]: ...

    @property
    def default(self) -> bool: ...


R = TypeVar("R", bound=Row)


def registry(flags: RowFlags) -> list[ClientSpec]:
    """The shipped rows and those from outside the project: installed plugins, --clients-file, --client, --driver."""
    return external.registry(flags.drivers, flags.plugins, flags.clients_files)


def interpreters(flags: RowFlags) -> list[Interpreter | None]:
    """--python, or each of --interpreters; none given: the runner's own (an empty list)."""
    if flags.python:
        return resolve_interpreters([flags.python])
    if flags.interpreters:
        return resolve_interpreters(items(flags.interpreters))
    return []


@overload
def select(
    flags: RowFlags, among: None = None, *, tails: bool = False, named: str | None = None
) -> list[ClientSpec]: ...


@overload
def select(
    flags: RowFlags,
    among: Sequence[R],
    *,
    tails: bool = False,
    exact: bool = False,
    named: str | None = None,
    kind: str = "client",
) -> list[R]: ...


def select(
    flags: RowFlags,
    among: Sequence[Any] | None = None,
    *,
    tails: bool = False,
    exact: bool = False,
    named: str | None = None,
    kind: str = "client",
) -> list[Any]:
    """The rows `flags` choose `among` these (default: the registry `flags` make), each Python row once per
    interpreter of --interpreters / --python. `tails`: cost's expansion of a name's last part; `exact`: names
    only, in the order given; `named`: only the rows named, else SetupError(named); `kind`: what a row is called
    in the message when a name matches none."""
    rows: list[Any] = registry(flags) if among is None else list(among)
    if named is not None:
        chosen = _named(flags, rows, named)
    elif exact:
        chosen = _exact(flags.clients, rows, kind)
    else:
        patterns = _tails(flags.clients, rows) if tails else flags.clients
        chosen = _matching(patterns, rows, everything=flags.all, kind=kind)
    runs = interpreters(flags)
    return under(chosen, runs) if runs else chosen


def _wanted(patterns: Sequence[str]) -> list[str]:
    return [p for item in patterns for p in items(item)]


def _matches(row: Row, pattern: str) -> bool:
    return any(fnmatch.fnmatchcase(n, pattern) for n in (row.name, *row.tags))


def _matching(patterns: Sequence[str], rows: Sequence[Any], *, everything: bool, kind: str) -> list[Any]:
    """Rows whose name (or a tag) matches any of the patterns, in table order; without patterns the default rows
    (or every row with `everything`). A row named by its exact name is `explicit`."""
    if not patterns:
        return [r for r in rows if everything or r.default]
    wanted = _wanted(patterns)
    unknown = [p for p in wanted if not any(_matches(r, p) for r in rows)]
    if unknown:
        names = ", ".join(r.name for r in rows)
        raise SetupError(f"no {kind} matches {', '.join(map(repr, unknown))}; known {kind}s: {names}")
    chosen = [r for r in rows if any(_matches(r, p) for p in wanted)]
    return [dataclasses.replace(r, explicit=r.name in wanted) if hasattr(r, "explicit") else r for r in chosen]


def _tails(patterns: Sequence[str], rows: Sequence[Row]) -> list[str]:
    """A name that matches no row but is the last part of rows' names stands for those rows (`floor` for cpp-floor
    and py-floor)."""
    out: list[str] = []
    for p in _wanted(patterns):
        tails = [r.name for r in rows if r.name.rsplit("-", 1)[-1] == p]
        if not any(fnmatch.fnmatchcase(r.name, p) for r in rows) and tails:
            out += tails
        else:
            out.append(p)
    return out


def _exact(patterns: Sequence[str], rows: Sequence[Any], kind: str) -> list[Any]:
    """Rows named exactly, in the order given; without names every row."""
    if not patterns:
        return list(rows)
    by_name = {r.name: r for r in rows}
    names = _wanted(patterns)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SetupError(f"unknown {kind}(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
    return [by_name[n] for n in names]


def _named(flags: RowFlags, rows: Sequence[ClientSpec], refusal: str) -> list[ClientSpec]:
    """The rows named: the command after --, the --driver and --client rows, and the -c rows (else the
    --clients-file rows); SetupError(refusal) when none is."""
    specs: list[ClientSpec] = []
    if flags.program:
        specs.append(external.program_spec("driver", list(flags.program)))
    given = {s.name for s in (*map(external.parse_driver, flags.drivers), *map(external.parse_client, flags.plugins))}
    specs += [s for s in rows if s.name in given]
    if flags.clients:
        specs += [s for s in _matching(flags.clients, rows, everything=False, kind="client") if s not in specs]
    elif flags.clients_files:
        files = {s.name for f in flags.clients_files for s in external.load_clients_file(f)}
        specs += [s for s in rows if s.name in files and s not in specs]
    if not specs:
        raise SetupError(refusal)
    return specs
