"""Command line: `clientbench COMMAND [FLAGS]`, `run` when no command is named. The commands are the table
commands.COMMANDS; this module only assembles their parsers, then hands the Namespace to the chosen command's
`from_args` and its typed options to its `run`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import __version__
from .commands import COMMANDS, DEFAULT, command
from .errors import SetupError
from .execution.limits import raise_open_files


class Parser(argparse.ArgumentParser):
    """argparse, but errors are one line: `clientbench: error: ...` (and the usage hint)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


def build_parser() -> Parser:
    p = Parser(
        prog="clientbench",
        description="Benchmark HTTP clients (C++ Beast, Rust reqwest, Python requests/aiohttp, our "
        "pybind11/PyO3 bindings and more Python clients from PyPI) against a local axum server with one "
        "workload: W workers x N sequential requests, each worker with its own client.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for c in COMMANDS:
        c.load().add_parser(sub, c)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv = [DEFAULT, *argv]
    args = build_parser().parse_args(argv)
    raise_open_files()  # before any child starts: the server and the drivers inherit it
    module = command(args.command).load()
    try:
        return int(module.run(module.from_args(args, argv)))
    except SetupError as exc:
        print(f"clientbench: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `clientbench list | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
