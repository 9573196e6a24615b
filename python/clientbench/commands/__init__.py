"""The commands, one module each, listed once in COMMANDS: its name, its module and its line in `clientbench
--help`. cli.py assembles the command line from this table alone.

A command's module has
- `add_parser(sub, command)`: its parser (its flags, from arguments.py's shared groups and its own),
- `from_args(args, argv)`: the parsing layer's end: argparse's Namespace read into the command's typed options (a
  frozen dataclass), every value and rule checked by the options layer (options/) on the way; no Namespace goes
  further,
- `run(options)`: the command, on those typed options; its exit status.

A module imports at its top only what its parser and its options need: what `run` needs (the testbed, numpy, the
exporters) it imports when it runs, so that `clientbench --help`, a command's --help and `clientbench list` stay
fast. What several commands share at their end lives in `output` (a run folder's files, the terminal table, the
exit status, a results document's header); no command imports another."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from ..dimensions import DIMENSIONS


@dataclass(frozen=True)
class Command:
    name: str  # as typed: `clientbench NAME`
    module: str  # its module in commands/
    help: str  # its line in `clientbench --help`

    def load(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module}")


COMMANDS = (
    Command("run", "run", "run the clients and print the table (the default command)"),
    Command("sweep", "sweep", f"run the clients over one dimension ({', '.join(DIMENSIONS)})"),
    Command("gil", "gil", "the GIL report: serial baseline, GIL held vs released, timeline"),
    Command("compare", "compare", "per-row ratios of two runs, flagging changes beyond the noise"),
    Command("report", "report", "the HTML report of a results folder (report.html), or of two runs compared"),
    Command("soak", "soak", "a million requests through each binding and native client: failures, RSS"),
    Command(
        "cost",
        "cost",
        "instructions, syscalls and allocations per request, counted (valgrind's callgrind, strace)",
    ),
    Command(
        "cold",
        "cold",
        "cold starts: process start to the library imported, the client built, a first and a second request",
    ),
    Command(
        "profile",
        "profile",
        "where each row spends its time: a flame graph per row (py-spy, perf), the harness's frames marked",
    ),
    Command("list", "list", "list the clients (table rows), each installed or how to get it"),
    Command("serve", "serve", "the embedded server on its own, for a second machine (run --target there)"),
    Command(
        "history", "history", "every row's figures across runs: history.csv, a trend table and chart (report.html)"
    ),
    Command(
        "check-driver",
        "check_driver",
        "check that a driver (any program, or a Python plugin) meets the driver contract",
    ),
)
#: the command when none is named (`clientbench -w 4` is `clientbench run -w 4`)
DEFAULT = "run"


def command(name: str) -> Command:
    return next(c for c in COMMANDS if c.name == name)
