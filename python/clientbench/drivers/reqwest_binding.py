"""clientbench driver: `reqwest_client.Client` (Rust reqwest through PyO3), sync: W threads.

    python -m clientbench.drivers.reqwest_binding --url URL [--workers W] [--requests N]
        [--warmup K] [--timeout S] [--gil held|released]

Each thread owns one `reqwest_client.Client` (its own keep-alive connection and tokio runtime) and calls
`client.fetch_len(url, release_gil=...)` (the code path of `get`, also returning the body size), exactly as with
the C++ binding. `--gil held` keeps the GIL during the request, so the threads run one at a time.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import _common


def main(argv: list[str] | None = None) -> int:
    args = _common.parser("reqwest (Rust, PyO3 binding) sync driver: W threads", gil=True).parse_args(argv)
    try:
        import reqwest_client
    except ImportError as exc:
        print(f"reqwest_binding: cannot import reqwest_client ({exc}); install it with "
              "`pip install ./bindings/reqwest`", file=sys.stderr)
        return 1

    release_gil = args.gil == "released"

    def make_client(a: argparse.Namespace) -> Any:
        return reqwest_client.Client(timeout=a.timeout)

    def held(client: Any, url: str) -> tuple[int, int]:
        return client.fetch_len(url, release_gil=False)

    # (status, body bytes), reads the whole body. Released is the default: call the Rust method directly.
    request = reqwest_client.Client.fetch_len if release_gil else held

    def close(client: Any) -> None:
        client.close()

    info = {
        "language": "Python",
        "library": "reqwest",
        "library_version": reqwest_client.reqwest_version,
        "mode": "sync",
        "gil": args.gil,
        "binding": f"reqwest_client {reqwest_client.__version__} (PyO3)",
    }
    doc = _common.SyncDriver(make_client=make_client, request=request, close=close).run(args, info)
    _common.emit(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
