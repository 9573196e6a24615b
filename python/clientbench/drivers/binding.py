"""Our Python bindings (`beast_client`: C++ Boost.Beast via pybind11; `reqwest_client`: Rust reqwest via PyO3).

    python -m clientbench.drivers.binding --binding beast|reqwest --url URL [the contract's flags]
        [--gil held|released] [--mode sync|async]

Both bindings have the same API, so one driver serves both. sync: W threads, each with its own `Client`
(own keep-alive connection), calling `fetch_len(url, release_gil=...)` (the code path of `get`, also
returning the body size), or for POST/PUT `fetch(url, method=..., body=..., release_gil=...)` (the same
path, returning the body); `--gil held` keeps the GIL during the request, so the threads run one at a time.
async (reqwest only): W asyncio tasks, each with its own `AsyncClient`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from .. import harness

MODULES = {"beast": "beast_client", "reqwest": "reqwest_client"}


def library_info(module: Any, binding: str) -> dict[str, Any]:
    if binding == "beast":
        return {
            "library_version": module.boost_version,  # same column as the native C++ row
            "binding": f"beast_client {module.__version__} (pybind11, Boost {module.boost_version})",
        }
    return {
        "library_version": module.reqwest_version,  # same column as the native Rust row
        "binding": f"reqwest_client {module.__version__} (PyO3)",
    }


def main(argv: list[str] | None = None) -> int:
    p = harness.parser(__doc__ or "", gil=True, modes=("sync", "async"))
    p.add_argument("--binding", choices=list(MODULES), required=True, help="which binding to drive")
    args = p.parse_args(argv)
    if args.mode == "async" and args.binding != "reqwest":
        p.error("--mode async: only the reqwest binding has an AsyncClient")
    try:
        mod: Any = importlib.import_module(MODULES[args.binding])
    except ImportError as exc:
        print(
            f"binding: cannot import {MODULES[args.binding]} ({exc}); install it with "
            f"`pip install ./bindings/{args.binding}`",
            file=sys.stderr,
        )
        return 1

    # verify= only when asked for: a plain-HTTP row builds its client with the bindings' defaults, as an
    # application would
    tls = {"verify": harness.verify(args)} if args.ca_file or args.insecure else {}
    # the native drivers' configuration: one total timeout per request (no connect/read timers), and for
    # reqwest no proxy from the environment
    options: dict[str, Any] = {"connect_timeout": None, "read_timeout": None, **tls}
    if args.binding == "reqwest":
        options["trust_env"] = False

    def make_client(a: argparse.Namespace) -> Any:
        return mod.Client(timeout=a.timeout, **options)

    def held(client: Any, url: str) -> tuple[int, int]:
        status, nbytes = client.fetch_len(url, release_gil=False)
        return status, nbytes

    async def make_async_client(a: argparse.Namespace) -> Any:
        return mod.AsyncClient(timeout=a.timeout, **options)

    async def request_async(client: Any, url: str) -> tuple[int, int]:
        status, nbytes = await client.fetch_len(url)
        return status, nbytes

    async def close_async(client: Any) -> None:
        client.close()

    release = args.gil == "released"

    def upload(client: Any, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        status, answer = client.fetch(url, method=method, body=body, release_gil=release)
        return status, answer

    async def upload_async(client: Any, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        status, answer = await client.fetch(url, method=method, body=body)
        return status, answer

    # Released is the default of fetch_len: call the native method directly (no Python frame, no kwargs).
    request = mod.Client.fetch_len if release else held
    info = {
        "language": "Python",
        "library": args.binding,
        **library_info(mod, args.binding),
        "gil": args.gil if args.mode == "sync" else None,
    }
    harness.run(
        args,
        info,
        harness.SyncDriver(make_client, request, lambda c: c.close(), upload),
        harness.AsyncDriver(make_async_client, request_async, close_async, upload_async),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
