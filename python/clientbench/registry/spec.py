"""The client registry's entries: a row is a driver command (docs/raw-format.md) plus its `model.Client` labels.

`ClientSpec` is one row, `PythonDriver` a Python row's plugin; `under` repeats the Python rows under other
interpreters (options/rows.py selects rows by name or tag with shell-style globs, `--clients 'py-*'`). The rows the
project ships are in shipped.py; rows from outside the project (an external program, a user's plugin) in
external.py.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..environment.binaries import Unavailable, hint
from ..environment.interpreters import Interpreter, has_module
from ..model import Client


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
    #: more modules it needs, from the same extra: the event loop of a `--loop uvloop|rloop` row
    also_needs: tuple[str, ...] = ()
    #: what brings the row when it is not installed: the pip extra (core, native, bindings, peers, or two joined
    #: by +), or in a checkout its make target (environment/binaries.py)
    extra: str = "native"
    #: named with -c by its exact name (not a glob): a run that cannot run it says so and fails
    explicit: bool = False
    default: bool = True  # in the default selection (`make run`); others need --clients or `--all`
    python: Interpreter | None = None  # a Python row under another interpreter (None: the runner's own)
    tags: tuple[str, ...] = ()  # more names `--clients` selects the row by
    #: the row's language, library and mode come from its own document (a row from outside the project)
    from_document: bool = False
    #: the driver takes `--phases` (contract raw/4: the project's drivers and every plugin); an outside program may
    #: keep an older version, so the runner asks it for no phases
    phases: bool = True

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

    def wrapped(self, prefix: Sequence[str]) -> ClientSpec:
        """This row with its driver command run under `prefix` (a tool and its options: valgrind, strace, a
        profiler)."""
        return dataclasses.replace(self, command=lambda: [*prefix, *self.argv()])

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
            for module in (self.needs_module, *self.also_needs) if self.needs_module else ():
                found = (
                    has_module(python, module)
                    if self.python is not None
                    else importlib.util.find_spec(module) is not None
                )
                if not found:
                    where = f" under {python}" if self.python is not None else ""
                    raise Unavailable(f"{module} is not installed{where}: {hint(self.extra)}")
            return self.command.argv(python)
        return self.command()


def under(specs: Sequence[ClientSpec], interpreters: Sequence[Interpreter | None]) -> list[ClientSpec]:
    """Every Python row once per interpreter (None: the runner's own), next to each other; native rows once."""
    if not interpreters:
        return list(specs)
    out: list[ClientSpec] = []
    for spec in specs:
        out += [spec.under(i) for i in interpreters] if spec.is_python else [spec]
    return out
