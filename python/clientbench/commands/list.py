"""`clientbench list`: every row, what it measures, and whether it can run here: installed (with the version of
what it runs), or how to get it (the pip extra, or in a checkout the make target)."""

from __future__ import annotations

import argparse
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING

from .. import arguments
from ..environment.binaries import Unavailable, checkout, native_version
from ..errors import SetupError
from ..options.rows import select
from ..registry import external
from ..registry.spec import ClientSpec

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from . import Command


def add_parser(sub: Subparsers, command: Command) -> None:
    p = sub.add_parser(
        command.name,
        help=command.help,
        description="Every row: what it measures, and whether it can run here (installed, with the version of "
        "what it runs) or how to get it (the pip extra, or in a checkout the make target).",
    )
    external.add_options(p)


@dataclass(frozen=True)
class ListOptions:
    specs: tuple[ClientSpec, ...]  # every row: the shipped ones and those from outside the project


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> ListOptions:
    return ListOptions(tuple(select(dataclasses.replace(arguments.rows(args), all=True))))


def run(o: ListOptions) -> int:
    return list_rows(o.specs)


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    """Which distributions provide each top-level module: read once (it reads every installed distribution's
    files, which was nearly all of `list`'s time when each Python row read it again)."""
    return metadata.packages_distributions()


def _version(spec: ClientSpec) -> str:
    """The version of what the row runs: its Python library's distribution, or the native executables'."""
    if spec.from_document:
        return "outside the project"
    if spec.is_python:
        module = (spec.needs_module or "").split(".")[0]
        dists = _distributions().get(module, []) if module else []
        versions = [f"{d} {metadata.version(d)}" for d in dict.fromkeys(dists)]
        return ", ".join(versions) or "installed"
    root = checkout()
    return f"built in {root}" if root is not None else f"clientbench-native {native_version()}"


def state(spec: ClientSpec) -> str:
    """`installed (...)`, or `unavailable: how to get it`."""
    try:
        spec.argv()
    except Unavailable as exc:
        return f"unavailable: {exc}"
    except SetupError as exc:  # an external program not found, a plugin spec that cannot run
        return f"cannot run: {exc}"
    return f"installed ({_version(spec)})"


def list_rows(specs: Sequence[ClientSpec], out: Callable[[str], None] = print) -> int:
    for c in specs:
        label = external.describe(c) if c.from_document else c.label
        notes = [f"tags: {', '.join(c.tags)}"] if c.tags else []
        notes += [] if c.default else ["not in the default set"]
        out(f"{c.name:24} {label}" + (f"  ({'; '.join(notes)})" if notes else ""))
        out(f"{'':24} {state(c)}")
    return 0
