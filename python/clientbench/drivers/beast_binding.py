"""clientbench driver: `beast_client.Client` (C++ Boost.Beast through pybind11), sync: W threads.

    python -m clientbench.drivers.beast_binding --url URL [--workers W] [--requests N]
        [--warmup K] [--timeout S] [--gil held|released]

Each thread owns one `beast_client.Client` (its own keep-alive connection and io_context) and calls
`client.fetch_len(url, release_gil=...)` (the code path of `get`, also returning the body size). `--gil held`
keeps the GIL during the request, so the threads run one at a time.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import _common


def main(argv: list[str] | None = None) -> int:
    args = _common.parser("Boost.Beast (C++, pybind11 binding) sync driver: W threads", gil=True).parse_args(argv)
    try:
        import beast_client
    except ImportError as exc:
        print(f"beast_binding: cannot import beast_client ({exc}); install it with "
              "`pip install ./bindings/beast`", file=sys.stderr)
        return 1

    release_gil = args.gil == "released"

    def make_client(a: argparse.Namespace) -> Any:
        return beast_client.Client(timeout=a.timeout)

    def held(client: Any, url: str) -> tuple[int, int]:
        return client.fetch_len(url, release_gil=False)

    # (status, body bytes), reads the whole body. Released is the default: call the C++ method directly.
    request = beast_client.Client.fetch_len if release_gil else held

    def close(client: Any) -> None:
        client.close()

    info = {
        "language": "Python",
        "library": "beast",
        "library_version": beast_client.boost_version,  # same column as the native C++ row
        "mode": "sync",
        "gil": args.gil,
        "binding": f"beast_client {beast_client.__version__} (pybind11, Boost {beast_client.boost_version})",
    }
    doc = _common.SyncDriver(make_client=make_client, request=request, close=close).run(args, info)
    _common.emit(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
