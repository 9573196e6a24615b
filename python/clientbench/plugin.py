"""The driver process of a Python plugin row (clientbench.sdk):

    python -m clientbench.plugin MODULE:OBJECT [the contract's flags, docs/raw-format.md]

OBJECT is an `sdk.SyncClient` or `sdk.AsyncClient` in MODULE (a dotted path to it, if nested), or a function
without arguments that returns one (so a module can import its library only when that row runs). A plugin
that cannot be imported or loaded is one line on stderr and exit status 1; bad flags exit 2.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from . import sdk

PROG = "clientbench.plugin"


class PluginError(Exception):
    """The plugin cannot be loaded: the message says why, in one line."""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def split(target: str) -> tuple[str, str]:
    """MODULE:OBJECT -> (module, object); PluginError when it is not of that form."""
    module, sep, obj = target.partition(":")
    if not sep or not module.strip() or not obj.strip() or ":" in obj:
        raise PluginError(f"{target!r} is not MODULE:OBJECT (e.g. mybench:plugin)")
    return module.strip(), obj.strip()


def load(target: str) -> sdk.Plugin:
    """The plugin named by MODULE:OBJECT, imported and checked."""
    module_name, path = split(target)
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # whatever the module raises while it is imported
        raise PluginError(f"cannot import {module_name}: {_one_line(exc)}") from None
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginError(f"{module_name} has no {path!r}") from None
        except Exception as exc:  # a module __getattr__ that fails
            raise PluginError(f"{target}: {_one_line(exc)}") from None
    if not isinstance(obj, sdk.SyncClient | sdk.AsyncClient) and callable(obj):
        try:
            obj = obj()
        except Exception as exc:
            raise PluginError(f"{target}() raised {_one_line(exc)}") from None
    if not isinstance(obj, sdk.SyncClient | sdk.AsyncClient):
        raise PluginError(f"{target} is {type(obj).__name__}, not a plugin (clientbench.sdk.SyncClient or AsyncClient)")
    return obj


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0].startswith("-"):
        if argv and argv[0] in ("-h", "--help"):
            print(__doc__)
            return 0
        print(f"{PROG}: error: the first argument is the plugin, MODULE:OBJECT", file=sys.stderr)
        return 2
    try:
        plugin = load(argv[0])
    except PluginError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    return sdk.run(plugin, argv[1:], f"{PROG} {argv[0]}: {plugin.language} {plugin.library} ({plugin.mode})")


if __name__ == "__main__":
    sys.exit(main())
