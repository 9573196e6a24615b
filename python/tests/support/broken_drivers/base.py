"""The broken drivers' common part: stdlib_plugin's driver, with a hook that changes its document, its exit
status or its usage errors (each script in this folder breaks one rule of docs/raw-format.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from clientbench import harness, sdk
from stdlib_plugin import plugin

__all__ = ["main", "plugin"]


def main(tamper: Callable[[dict[str, Any]], None] | None = None, exit_status: int = 0, usage_status: int = 2) -> None:
    try:
        args = sdk.parser(plugin).parse_args(sys.argv[1:])
    except SystemExit as exc:
        sys.exit(usage_status if exc.code == 2 else exc.code)
    doc = plugin.driver().run(args, plugin.client_info())
    doc["client"]["python"] = harness.interpreter()  # as harness.emit() does, before the tamper
    if tamper is not None:
        tamper(doc)
    print(json.dumps(doc, separators=(",", ":")))
    sys.exit(exit_status)
