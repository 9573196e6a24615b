"""clientbench driver: `reqwest_client.AsyncClient` (Rust reqwest through PyO3), async: W asyncio tasks.

    python -m clientbench.drivers.reqwest_async_binding --url URL [--workers W] [--requests N]
        [--warmup K] [--timeout S]

Each task owns one `reqwest_client.AsyncClient`; `await client.fetch_len(url)` returns
`(status, body bytes)`. The requests run on pyo3-async-runtimes' tokio runtime, the tasks on one
asyncio event loop.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import _common


def main(argv: list[str] | None = None) -> int:
    args = _common.parser("reqwest (Rust, PyO3 binding) async driver: W asyncio tasks").parse_args(argv)
    try:
        import reqwest_client
    except ImportError as exc:
        print(f"reqwest_async_binding: cannot import reqwest_client ({exc}); install it with "
              "`pip install ./bindings/reqwest`", file=sys.stderr)
        return 1

    async def make_client(a: argparse.Namespace) -> Any:
        return reqwest_client.AsyncClient(timeout=a.timeout)

    async def request(client: Any, url: str) -> tuple[int, int]:
        return await client.fetch_len(url)

    async def close(client: Any) -> None:
        client.close()

    info = {
        "language": "Python",
        "library": "reqwest",
        "library_version": reqwest_client.reqwest_version,
        "mode": "async",
        "gil": None,
        "binding": f"reqwest_client {reqwest_client.__version__} (PyO3)",
    }
    doc = _common.AsyncDriver(make_client=make_client, request=request, close=close).run(args, info)
    _common.emit(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
