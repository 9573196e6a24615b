"""Our Python bindings (`beast_client`: C++ Boost.Beast via pybind11; `reqwest_client`: Rust reqwest via PyO3).

Both bindings have the same API, so one module serves both, as six plugins (clientbench.sdk), each a
function that imports its binding when its row runs: `beast_held`, `beast_released`, `reqwest_held`,
`reqwest_released` (sync: W threads, each with its own `Client` and keep-alive connection, calling
`fetch_len(url, release_gil=...)`, the code path of `get` also returning the body size, or for POST/PUT
`fetch(url, method=..., body=..., release_gil=...)`, the same path returning the body; with the GIL held the
threads run one at a time), `beast_async` and `reqwest_async` (W tasks on one event loop, each with its own
`AsyncClient`, awaiting `fetch_len(url)` / `fetch(...)`).

Streamed bodies (--upload/--download stream) go through the application API, `Client.stream(method, url,
body=...)`: the body an iterator of chunks (sent chunked), the response read by `iter_bytes()` in the pieces the
binding receives (it takes no chunk size); `stream()` releases the GIL while it waits, whatever `--gil` says. Both
AsyncClients stream the harness's async iterator of chunks.

`--http 3`: the reqwest binding's `http3=True` (QUIC with prior knowledge, docs/binding-api.md); beast_client
speaks HTTP/1.1 only, so its rows say unsupported for `--http 2` and `3`.

    python -m clientbench.plugin clientbench.drivers.binding:beast_held [the contract's flags]
    python -m clientbench.drivers.binding --binding beast|reqwest [--gil held|released] [--mode sync|async] ...
"""

from __future__ import annotations

import contextlib
import importlib
import ipaddress
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from .. import sdk
from ..harness.options import Parser
from .streaming import awhole, whole

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


def _accepts(module: Any, **options: Any) -> bool:
    """Whether this build of the binding's Client takes these options (a TypeError names one it does not)."""
    try:
        module.Client(**options).close()
    except TypeError:
        return False
    return True


def capabilities(module: Any, binding: str) -> dict[str, bool]:
    """What the installed binding can do: HTTP/2 and HTTP/3 (the reqwest binding's `http2` and `http3` options), a
    bounded pool for the client all workers share (`max_connections`)."""
    return {
        "http2": binding == "reqwest" and _accepts(module, http2=False),
        "http3": binding == "reqwest" and _accepts(module, http3=False),
        "max_connections": _accepts(module, max_connections=1),
    }


def _options(binding: str, opts: sdk.Options, can: dict[str, bool]) -> dict[str, Any]:
    """The native drivers' configuration: one total timeout per request (no connect/read timers), for reqwest
    no proxy from the environment; verify= only when asked for (a plain-HTTP row builds its client with the
    bindings' defaults, as an application would); the shared client's pool bounded at W connections; HTTP/2
    by ALPN over https, with prior knowledge over http; HTTP/3 (https only: the harness checked it) with prior
    knowledge, never a fallback to TCP."""
    options: dict[str, Any] = {"timeout": opts.timeout, "connect_timeout": None, "read_timeout": None}
    if opts.ca_file or opts.insecure:
        options["verify"] = sdk.verify(opts)
    if binding == "reqwest":
        options["trust_env"] = False
    if opts.client_scope == "shared" and can["max_connections"]:
        options["max_connections"] = opts.workers
    if sdk.http2(opts):
        options["http2"] = "alpn" if opts.url.startswith("https:") else "prior_knowledge"
    if sdk.http3(opts):
        options["http3"] = True
    if sdk.http2(opts) or sdk.http3(opts):
        # the protocol probe goes through request(), whose decoding client keeps a pool of its own; without
        # decoding it shares fetch_len's, so the row's one HTTP/2 or QUIC connection carries the probe too
        options["decompress"] = False
    return options


def _version(response: Any, opts: sdk.Options) -> str | None:
    """The response's HTTP version where the binding tells it; without HTTP/2 or 3 asked for, the client speaks
    HTTP/1.1 only."""
    version = getattr(response, "http_version", None)
    asked = sdk.http2(opts) or sdk.http3(opts)
    return str(version) if version is not None else None if asked else "HTTP/1.1"


@contextlib.contextmanager
def stream(
    client: Any, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    with client.stream(method, url, body=content) as r:
        yield r.status, r.iter_bytes() if chunk else whole(r.read())


@contextlib.asynccontextmanager
async def stream_async(
    client: Any, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
    async with client.stream(method, url, body=content) as r:
        yield r.status, r.aiter_bytes() if chunk else awhole(r.aread)


def _named(url: str) -> bool:
    """The URL's host is a name (resolved: a dns phase), not an IP address."""
    host = urlsplit(url).hostname or ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return True
    return False


def phase_keys(binding: str) -> Callable[[sdk.Options], tuple[str, ...]]:
    """The phases a binding's client records (docs/phases.md): Beast times its own steps (dns where it resolves a
    name); reqwest's connector makes the TCP connection and its TLS in one call (with the name's resolution in it),
    its send() resolves with the response's head, and over HTTP/3 its QUIC connection is made in the exchange."""

    def keys(opts: sdk.Options) -> tuple[str, ...]:
        named = _named(opts.url)
        if binding == "beast":
            return ("dns",) * named + ("connect", "tls", "send", "wait", "receive")
        if opts.http == "3":
            return ("dns+connect+tls+send+wait" if named else "connect+tls+send+wait", "receive")
        return ("dns+connect+tls" if named else "connect+tls", "send+wait", "receive")

    return keys


def sync_plugin(binding: str, gil: str) -> sdk.SyncClient[Any]:
    mod: Any = importlib.import_module(MODULES[binding])
    release = gil == "released"
    can = capabilities(mod, binding)

    options: dict[str, Any] = {}
    flags: list[sdk.Options] = []

    def make_client(opts: sdk.Options) -> Any:
        if not options:  # once: the same flags for every client
            options.update(_options(binding, opts, can))
            flags.append(opts)
        return mod.Client(**options)

    def protocol(client: Any, url: str) -> str | None:
        # fetch_len/fetch do not say the version: the application API does (on fetch_len's pool: _options)
        return _version(client.request("GET", url), flags[0])

    def held(client: Any, url: str) -> tuple[int, int]:
        status, nbytes = client.fetch_len(url, release_gil=False)
        return status, nbytes

    def upload(client: Any, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        status, answer = client.fetch(url, method=method, body=body, release_gil=release)
        return status, answer

    def phased(client: Any, url: str) -> tuple[int, int]:
        """--phases: fetch_len's path, which also says how long each phase took."""
        status, nbytes, phases = client.fetch_phases(url, release_gil=release)
        sdk.phases(phases)
        return status, nbytes

    info = library_info(mod, binding)
    return sdk.SyncClient(
        binding,
        make_client,
        # Released is the default of fetch_len: the native method itself (no Python frame, no kwargs).
        mod.Client.fetch_len if release else held,
        upload,
        lambda c: c.close(),
        version=info.pop("library_version"),
        gil=gil,
        info=info,
        http2=can["http2"],
        http3=can["http3"],
        protocol=protocol,
        stream=stream,
        phases=phase_keys(binding),
        phased=phased,
    )


def async_plugin(binding: str) -> sdk.AsyncClient[Any]:
    """The binding's AsyncClient: W tasks on one event loop (asyncio, or uvloop with `--loop uvloop`), each
    with its own client, or one client all of them share (`--client-scope shared`: each request takes a
    connection of the pool, `max_connections` W)."""
    mod: Any = importlib.import_module(MODULES[binding])
    can = capabilities(mod, binding)

    options: dict[str, Any] = {}
    flags: list[sdk.Options] = []

    def make_client(opts: sdk.Options) -> Any:
        if not options:
            options.update(_options(binding, opts, can))
            flags.append(opts)
        return mod.AsyncClient(**options)

    async def protocol(client: Any, url: str) -> str | None:
        return _version(await client.request("GET", url), flags[0])

    async def request(client: Any, url: str) -> tuple[int, int]:
        status, nbytes = await client.fetch_len(url)
        return status, nbytes

    async def upload(client: Any, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        status, answer = await client.fetch(url, method=method, body=body)
        return status, answer

    async def phased(client: Any, url: str) -> tuple[int, int]:
        status, nbytes, phases = await client.fetch_phases(url)
        sdk.phases(phases)
        return status, nbytes

    info = library_info(mod, binding)
    return sdk.AsyncClient(
        binding,
        make_client,
        request,
        upload,
        lambda c: c.close(),
        version=info.pop("library_version"),
        info=info,
        http2=can["http2"],
        http3=can["http3"],
        protocol=protocol,
        stream=stream_async,
        phases=phase_keys(binding),
        phased=phased,
    )


def beast_async() -> sdk.AsyncClient[Any]:
    return async_plugin("beast")


def reqwest_async() -> sdk.AsyncClient[Any]:
    return async_plugin("reqwest")


def beast_held() -> sdk.SyncClient[Any]:
    return sync_plugin("beast", "held")


def beast_released() -> sdk.SyncClient[Any]:
    return sync_plugin("beast", "released")


def reqwest_held() -> sdk.SyncClient[Any]:
    return sync_plugin("reqwest", "held")


def reqwest_released() -> sdk.SyncClient[Any]:
    return sync_plugin("reqwest", "released")


def main(argv: list[str] | None = None) -> int:
    """`--binding`, `--gil` and `--mode` pick the plugin; the contract's flags go to it."""
    p = Parser(add_help=False)  # its errors: one line, exit 2
    p.add_argument("--binding", choices=list(MODULES), required=True)
    p.add_argument("--gil", choices=["held", "released"], default="released")
    p.add_argument("--mode", choices=["sync", "async"], default="sync")
    args, rest = p.parse_known_args(argv)
    try:
        plugin = async_plugin(args.binding) if args.mode == "async" else sync_plugin(args.binding, args.gil)
    except ImportError as exc:
        print(
            f"binding: cannot import {MODULES[args.binding]} ({exc}); install it with "
            f"`pip install ./bindings/{args.binding}`",
            file=sys.stderr,
        )
        return 1
    return sdk.run(plugin, rest, __doc__ or "")


if __name__ == "__main__":
    sys.exit(main())
