"""The plugin SDK: a Python client library as a row of the table, in about ten lines
(docs/bring-your-own-client.md).

    import httpx
    from clientbench import sdk

    def make_client(opts: sdk.Options) -> httpx.Client:
        return httpx.Client(timeout=opts.timeout, verify=sdk.ssl_context(opts))

    def request(client: httpx.Client, url: str) -> tuple[int, int]:
        r = client.get(url)
        return r.status_code, len(r.content)  # the status and the length of the whole body, read

    plugin = sdk.SyncClient("httpx", make_client, request, close=httpx.Client.close)

`clientbench run --client mymodule:plugin` makes it a row; `clientbench check-driver --client mymodule:plugin`
checks it. The plugin says how to make a client and how to do one request (and, for POST/PUT, one upload
that returns the response body); the harness (clientbench.harness) does the rest: W threads (SyncClient) or W
tasks on one event loop (AsyncClient), the warm-up, the ready barrier, timing, the open loop, the upload
answer's check, failure reasons with the shared classes, CPU time and peak RSS, and the raw document.

Every Python row of the table is such a plugin (clientbench/drivers/), run in its own driver process by
`python -m clientbench.plugin MODULE:OBJECT [the contract's flags]`. This module needs nothing but the
standard library, so a plugin runs under any interpreter (`--interpreters`).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from . import harness
from .harness import ssl_context, verify
from .harness import version as installed_version
from .harness.options import unsupported
from .harness.phases import check_keys, phase, phases, recording

__all__ = [
    "AsyncClient",
    "Options",
    "Plugin",
    "SyncClient",
    "http2",
    "http3",
    "installed_version",
    "phase",
    "phases",
    "pool_size",
    "recording",
    "run",
    "ssl_context",
    "unsupported",
    "verify",
]

C = TypeVar("C")

#: the contract's flags as parsed (docs/raw-format.md): url, workers, requests, warmup, timeout (seconds),
#: connection, ca_file, insecure, rate, method, body_size, client_scope, http, ...; `ssl_context(opts)` and
#: `verify(opts)` turn the TLS flags into what libraries take, `pool_size(opts)` and `http2(opts)` the others
Options = argparse.Namespace


def pool_size(opts: Options) -> int:
    """The connections a client may keep: 1 for a worker's own client, W for the client all W workers share."""
    return int(opts.workers) if opts.client_scope == "shared" else 1


def http2(opts: Options) -> bool:
    """`--http 2`: ask the library for HTTP/2 (ALPN h2 over https, prior knowledge over http)."""
    return bool(opts.http == "2")


def http3(opts: Options) -> bool:
    """`--http 3`: ask the library for HTTP/3 (QUIC; https only, the harness checked it)."""
    return bool(opts.http == "3")


#: the directions of a streamed form (`stream=`): both, unless the plugin says `streams=("download",)`
STREAMS = ("upload", "download")


#: the event loops an async plugin runs on (`--loop`): asyncio's own, uvloop and rloop (both from `make peers`)
LOOPS = ("asyncio", "uvloop", "rloop")


def _no_close(client: object) -> None:
    return None


@dataclass(frozen=True)
class _Labels:
    """What every plugin has, sync or async: its Library column, what the row says about itself (the document's
    client section, docs/raw-format.md) and what it can do. The fields after `library` are keywords."""

    library: str
    _: KW_ONLY
    language: str = "Python"
    version: str | None = None
    distribution: str | None = None
    gil: str | None = None
    info: Mapping[str, Any] = field(default_factory=dict)
    exit_after_document: bool = False
    shareable: bool = True
    http2: bool = False
    http3: bool = False
    streams: tuple[str, ...] = STREAMS
    phases: tuple[str, ...] | Callable[[Options], tuple[str, ...]] = ()
    mode: ClassVar[str]

    def __post_init__(self) -> None:
        if not callable(self.phases):
            check_keys(self.phases)

    def client_info(self) -> dict[str, Any]:
        version = self.version or installed_version(self.distribution or self.library) or "unknown"
        return {
            "language": self.language,
            "library": self.library,
            "library_version": version,
            "mode": self.mode,
            "gil": self.gil,
            **self.info,
        }


@dataclass(frozen=True)
class SyncClient(_Labels, Generic[C]):
    """A sync library: W threads, each with its own client.

    - `make_client(opts)` -> a client with its own connection (`opts.timeout`: --timeout in s, which bounds
      each whole request: a request that takes longer counts as a TimeoutError even if the library returns it);
    - `request(client, url)` -> (status, length of the body): one GET, the whole body read;
    - `upload(client, url, method, body)` -> (status, the whole response body): one POST/PUT (optional:
      without it the row sends GET only and refuses `--method`);
    - `close(client)`: optional.

    Keywords: `language` ("Python"), `version` (default: the installed version of the distribution
    `distribution`, by default `library`), `gil` ("held"/"released" for a library that can keep the GIL
    during its I/O), `info` (more keys for the document's client section), `exit_after_document` (end the
    process without the interpreter's teardown, for a library whose runtime crashes there).

    What the client can do (a mode it cannot do exits 3, `unsupported: ...`): `shareable` (default True: one
    client may serve all W workers at once from one pool, `--client-scope shared`; `make_client` sizes its pool with
    `pool_size(opts)`), `http2` (default False: the client speaks HTTP/2 when `http2(opts)`, and HTTP/1.1 only
    otherwise, also where its library would offer h2 by itself), `http3` (default False: the client speaks HTTP/3
    when `http3(opts)`), and `protocol(client, url)`, one GET that returns its response's HTTP version (with
    --http 2 or 3, the document's `client.protocol`; the row says HTTP/1.1 otherwise).

    Streamed bodies (`--upload stream`, `--download stream`; docs/raw-format.md): `stream(client, method, url,
    content, chunk_size)` -> a context manager of `(status, pieces)`: `content` is None (GET), the body's bytes,
    or an iterator of chunks to send as they come (the library's streamed, chunked upload); `pieces` iterates
    the response body in chunks of at most `chunk_size` bytes as the library reads them, or whole (one piece)
    when `chunk_size` is None. The harness counts and checks the pieces. `streams`: the directions it streams
    (default both; ("download",) for a library that cannot send an iterator).

    Phases (`--phases`; docs/raw-format.md, "Phases"): `phases` names the keys the plugin records (e.g.
    `("connect", "tls", "send", "wait", "receive")`, or a merged `"send+wait"` where its library cannot tell two
    apart); while the harness records, `recording()` is true inside `request`, which then calls `phase(key, ns)`
    for each phase its library lets it see (from the library's hooks or timings). The harness sums them over the
    successful requests; the runner shows their means and the client's own time (the latency less the phases).
    `phases` may be a function of the options that returns the keys (a library whose keys depend on the URL or the
    protocol). `phased`: another request function that the harness calls instead of `request` for the requests
    it records (one in SAMPLE_EVERY: harness/phases.py), for a library whose fast path cannot say its phases (the
    bindings' `fetch_len`, and `fetch_phases` beside it); it hands them over at once with `phases({key: ns})`."""

    make_client: Callable[[Options], C]
    request: harness.SyncRequest[C]
    upload: harness.SyncUpload[C] | None = None
    close: Callable[[C], None] | None = None
    _: KW_ONLY
    protocol: harness.SyncProtocol[C] | None = None
    stream: harness.SyncStream[C] | None = None
    phased: harness.SyncRequest[C] | None = None
    mode: ClassVar[str] = "sync"

    def driver(self) -> harness.SyncDriver[C]:
        return harness.SyncDriver(
            self.make_client,
            self.request,
            self.close or _no_close,
            self.upload,
            self.protocol,
            self.stream,
            self.streams,
            self.phases,
            self.phased,
        )


@dataclass(frozen=True)
class AsyncClient(_Labels, Generic[C]):
    """An async library: W tasks on one event loop (asyncio, or uvloop / rloop with `--loop uvloop` / `--loop
    rloop`), each with its own client. As SyncClient, with `request` and `upload` coroutine functions;
    `make_client` and `close` may be plain functions or coroutine functions. `loops_without_tls`: the loops of
    LOOPS on which the library cannot make TLS connections, each with why (rloop 0.5.0 has no TLS in its
    transports: a library on asyncio's streams or protocols has none there, one with its own I/O or its own TLS
    has): `--loop` one of them with an https:// URL exits 3 (`unsupported: ...`); over http the row runs.
    `stream` returns an async context manager of `(status, pieces)`, `pieces` an async iterator; `content` is an
    async iterator of chunks when the upload streams."""

    make_client: Callable[[Options], Awaitable[C] | C]
    request: harness.AsyncRequest[C]
    upload: harness.AsyncUpload[C] | None = None
    close: Callable[[C], Awaitable[None] | None] | None = None
    _: KW_ONLY
    protocol: harness.AsyncProtocol[C] | None = None
    stream: harness.AsyncStream[C] | None = None
    loops_without_tls: Mapping[str, str] = field(default_factory=dict)
    phased: harness.AsyncRequest[C] | None = None
    mode: ClassVar[str] = "async"

    def driver(self) -> harness.AsyncDriver[C]:
        make, close = self.make_client, self.close or _no_close

        async def make_client(opts: Options) -> C:
            client = make(opts)
            return await client if inspect.isawaitable(client) else client

        async def close_client(client: C) -> None:
            done = close(client)
            if inspect.isawaitable(done):
                await done

        return harness.AsyncDriver(
            make_client,
            self.request,
            close_client,
            self.upload,
            self.protocol,
            self.stream,
            self.streams,
            self.phases,
            self.phased,
        )


Plugin = SyncClient[Any] | AsyncClient[Any]


def parser(plugin: Plugin, description: str = "") -> argparse.ArgumentParser:
    """The contract's flags, and `--loop` for an async plugin."""
    p = harness.parser(description or f"clientbench plugin: {plugin.language} {plugin.library} ({plugin.mode})")
    if isinstance(plugin, AsyncClient):
        p.add_argument("--loop", choices=LOOPS, default="asyncio", help="the event loop (default asyncio)")
    return p


def refuse(plugin: Plugin, args: Options) -> None:
    """Exit 3 (`unsupported: ...`) for a mode the plugin says it cannot do, rather than run it another way."""
    if args.client_scope == "shared" and not plugin.shareable:
        unsupported(f"--client-scope shared ({plugin.library}'s client cannot give several workers one pool)")
    if args.http == "2" and not plugin.http2:
        unsupported(f"HTTP/2 ({plugin.library} speaks HTTP/1.1 only)")
    if args.http == "3" and not plugin.http3:
        unsupported(f"HTTP/3 ({plugin.library} has no HTTP/3)")
    for direction in STREAMS:
        if getattr(args, direction) == "stream" and (plugin.stream is None or direction not in plugin.streams):
            unsupported(f"--{direction} stream ({plugin.library} has no streamed {direction}s here)")
    if isinstance(plugin, AsyncClient) and args.url.startswith("https:") and args.loop in plugin.loops_without_tls:
        unsupported(f"--loop {args.loop} over https ({plugin.loops_without_tls[args.loop]})")


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """`--loop NAME`'s event loop factory: None for asyncio's own; uvloop's `new_event_loop`, rloop's as
    `_rloop_loop` makes it (exit 3, `unsupported: ...`, where that package is not installed)."""
    if name == "asyncio":
        return None
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        unsupported(f"--loop {name} ({exc})")
    factory: Callable[[], asyncio.AbstractEventLoop] = module.new_event_loop
    return (lambda: _rloop_loop(factory)) if name == "rloop" else factory


def _rloop_loop(new_event_loop: Callable[[], asyncio.AbstractEventLoop]) -> asyncio.AbstractEventLoop:
    """An rloop loop that ends as asyncio's does when a task raises SystemExit or KeyboardInterrupt (the harness's
    `unsupported()` while the loop runs): rloop 0.5.0 hands them to its exception handler and runs on, forever.
    This handler stops the loop instead, so that run_until_complete raises them from the finished task; anything
    else it logs as asyncio's default handler does. rloop calls a handler with the context alone (asyncio with the
    loop and the context)."""
    loop = new_event_loop()

    def handler(*args: Any) -> None:
        context: dict[str, Any] = args[-1]
        exc = context.get("exception")
        if isinstance(exc, SystemExit | KeyboardInterrupt):
            loop.stop()
        else:
            log = logging.getLogger("asyncio")
            log.error(context.get("message") or "Unhandled exception in event loop", exc_info=exc or False)

    loop.set_exception_handler(handler)
    return loop


def run(plugin: Plugin, argv: list[str] | None = None, description: str = "") -> int:
    """Parse the contract's flags, run the plugin's workers and print the raw document; 0, or 2 after a usage
    error (one line on stderr). The row runs in its own process: `python -m clientbench.plugin`."""
    args = parser(plugin, description).parse_args(argv)
    refuse(plugin, args)
    info = plugin.client_info()
    if isinstance(plugin, SyncClient):
        doc = plugin.driver().run(args, info)
    else:
        factory = loop_factory(args.loop)
        if factory is not None:  # the loop is part of the row: `httpx+uvloop`, `httpx+rloop`
            info["library"] = f"{plugin.library}+{args.loop}"
            info["library_version"] = f"{info['library_version']} ({args.loop} {installed_version(args.loop)})"
        doc = plugin.driver().run(args, info, factory)
    harness.emit(doc)
    if plugin.exit_after_document:
        harness.skip_teardown()
    return 0
