"""A driver that sends no request, for the runner's tests: run as a script (`python fake_driver.py FLAGS`).

It takes the contract's flags (docs/raw-format.md) and answers every request itself (status 200, 13 bytes)
through the real harness, so its document is valid. `--crash-on-repeat I` (repeatable) makes it exit
with status 3 and `boom` on stderr instead, when it runs as repeat I: the runner gives repeat i the
PYTHONHASHSEED i. `--crash-always` crashes every time.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from clientbench import harness


def spec(name: str, *flags: str, optional: bool = False) -> Any:
    """A client row (run.clients.ClientSpec) whose driver is this script with `flags`."""
    return code_spec(name, None, *flags, optional=optional)


def code_spec(name: str, code: str | None, *flags: str, optional: bool = False) -> Any:
    """A client row whose driver is `python -c code` (this script when code is None)."""
    from clientbench.model import Client
    from clientbench.run.clients import ClientSpec

    program = [str(Path(__file__))] if code is None else ["-c", code]
    client = Client(name=name, language="Python", library="fake", mode="sync", optional=optional)
    return ClientSpec(client, lambda: [sys.executable, *program, *flags])


def main() -> int:
    p = harness.parser(__doc__ or "")
    p.add_argument("--crash-on-repeat", type=int, action="append", default=[])
    p.add_argument("--crash-always", action="store_true")
    args = p.parse_args()
    repeat = int(os.environ.get("PYTHONHASHSEED", "-1"))
    if args.crash_always or repeat in args.crash_on_repeat:
        print(f"boom (repeat {repeat})", file=sys.stderr)
        return 3
    info = {"language": "Python", "library": "fake", "library_version": "0", "gil": None}
    harness.run(args, info, harness.SyncDriver(lambda a: object(), lambda client, url: (200, 13)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
