"""The rows the project ships: which driver runs each row of the table, and how the row is labelled.

Adding a client row = one driver (a plugin in python/clientbench/drivers/, or a native program) plus one entry
in CLIENTS (docs/architecture.md, "Where a change goes").
"""

from __future__ import annotations

from collections.abc import Callable

from ..environment import binaries
from ..model import Client
from .spec import ClientSpec, PythonDriver


def _native(executable: str, *extra: str) -> Callable[[], list[str]]:
    """A native driver of the checkout's builds or of clientbench-native (environment/binaries.py)."""
    return lambda: [str(binaries.require(executable)), *extra]


def _python(plugin: str, *extra: str) -> PythonDriver:
    """A plugin of clientbench/drivers/, e.g. `httpx_driver:SYNC`."""
    return PythonDriver(f"clientbench.drivers.{plugin}", extra)


def _spec(
    name: str,
    language: str,
    library: str,
    mode: str,
    command: Callable[[], list[str]] | PythonDriver,
    *,
    gil: str | None = None,
    fixed_workers: int | None = None,
    floor: bool = False,
    optional: bool = False,
    needs_module: str | None = None,
    extra: str = "native",
    default: bool = True,
) -> ClientSpec:
    # a row on another event loop needs that loop's package too (the extra that brings the row brings it)
    args = command.args if isinstance(command, PythonDriver) else ()
    loop = args[args.index("--loop") + 1] if "--loop" in args else None
    client = Client(
        name=name,
        language=language,
        library=library,
        mode=mode,
        gil=gil,
        fixed_workers=fixed_workers,
        floor=floor,
        optional=optional,
    )
    also = (loop,) if loop is not None and loop != needs_module else ()
    return ClientSpec(client, command, needs_module=needs_module, also_needs=also, extra=extra, default=default)


PeerRow = tuple[str, str, str, str, tuple[str, ...], str]

#: async peers on the event loop's own transports, which rloop 0.5.0 does not do whole: no TLS (aiohttp's, niquests',
#: aiosonic's and httpx-aiohttp's connections need it; the last two plugins say so, `--loop rloop` over https exiting
#: 3) and no connection reset reported (httpx's and httpx2's, on its plain connections with TLS of their own, wait
#: for the timeout instead): no -rloop row. The others do their own I/O (Rust's runtimes, libcurl): whole on rloop.
LOOP_TRANSPORTS = frozenset(
    {"py-httpx-async", "py-httpx2-async", "py-niquests-async", "py-aiosonic", "py-httpx-aiohttp"}
)


def _on_loops(*rows: PeerRow) -> list[PeerRow]:
    """Each async row on asyncio, followed by the same row on uvloop (`--loop uvloop`) and on rloop (`--loop
    rloop`): `py-wreq-async` -> `py-wreq-uvloop`, `py-wreq-rloop`, its library `wreq+uvloop`, `wreq+rloop` as its
    document says; no rloop row for a library on the loop's transports (LOOP_TRANSPORTS); aiohttp's uvloop row is
    listed as is."""
    out: list[PeerRow] = []
    for name, library, mode, plugin, extra, needs in rows:
        out.append((name, library, mode, plugin, extra, needs))
        if mode == "async" and not extra:
            base = name.removesuffix("-async")
            loops = ("uvloop",) if name in LOOP_TRANSPORTS else ("uvloop", "rloop")
            out.extend((f"{base}-{loop}", f"{library}+{loop}", mode, plugin, ("--loop", loop), needs) for loop in loops)
    return out


_BEAST = ("beast-driver",)
_REQWEST = ("reqwest-driver",)

CLIENTS: tuple[ClientSpec, ...] = (
    _spec("cpp-beast", "C++", "beast", "sync", _native(*_BEAST)),
    _spec("rust-reqwest", "Rust", "reqwest", "async", _native(*_REQWEST)),
    _spec(
        "py-requests",
        "Python",
        "requests",
        "sync",
        _python("requests_driver:SYNC"),
        needs_module="requests",
        extra="core",
    ),
    _spec(
        "py-beast-held",
        "Python",
        "beast",
        "sync",
        _python("binding:beast_held"),
        gil="held",
        needs_module="beast_client",
        extra="bindings",
    ),
    _spec(
        "py-beast-released",
        "Python",
        "beast",
        "sync",
        _python("binding:beast_released"),
        gil="released",
        needs_module="beast_client",
        extra="bindings",
    ),
    _spec(
        "py-beast-async",
        "Python",
        "beast",
        "async",
        _python("binding:beast_async"),
        needs_module="beast_client",
        extra="bindings",
    ),
    _spec(
        "py-aiohttp",
        "Python",
        "aiohttp",
        "async",
        _python("aiohttp_driver:ASYNC"),
        needs_module="aiohttp",
        extra="core",
    ),
    _spec(
        "py-reqwest-async",
        "Python",
        "reqwest",
        "async",
        _python("binding:reqwest_async"),
        needs_module="reqwest_client",
        extra="bindings",
    ),
    _spec(
        "py-reqwest-held",
        "Python",
        "reqwest",
        "sync",
        _python("binding:reqwest_held"),
        gil="held",
        needs_module="reqwest_client",
        extra="bindings",
    ),
    _spec(
        "py-reqwest-released",
        "Python",
        "reqwest",
        "sync",
        _python("binding:reqwest_released"),
        gil="released",
        needs_module="reqwest_client",
        extra="bindings",
    ),
    _spec(
        "py-reqwest-uvloop",
        "Python",
        "reqwest+uvloop",
        "async",
        _python("binding:reqwest_async", "--loop", "uvloop"),
        needs_module="reqwest_client",
        extra="bindings+peers",
        default=False,
    ),
    _spec(
        "py-beast-uvloop",
        "Python",
        "beast+uvloop",
        "async",
        _python("binding:beast_async", "--loop", "uvloop"),
        needs_module="beast_client",
        extra="bindings+peers",
        default=False,
    ),
    # -- more native rows and the floor (make run-all) ---------------------------------------------
    _spec("cpp-beast-serial", "C++", "beast", "sync", _native(*_BEAST), default=False, fixed_workers=1),
    _spec("rust-reqwest-sync", "Rust", "reqwest", "sync", _native(*_REQWEST, "--mode", "sync"), default=False),
    _spec(
        "cpp-floor",
        "C++",
        "raw socket",
        "sync",
        _native("floor-driver"),
        default=False,
        floor=True,
    ),
    _spec(
        "py-floor",
        "Python",
        "raw socket",
        "sync",
        _python("floor_driver:SYNC"),
        default=False,
        floor=True,
        extra="core",
    ),
    # the asyncio floor (docs/cost.md): what the async Python rows divide by, on their own loop
    _spec(
        "py-floor-async",
        "Python",
        "raw socket",
        "async",
        _python("floor_async_driver:ASYNC"),
        default=False,
        floor=True,
        extra="core",
    ),
    _spec(
        "py-floor-uvloop",
        "Python",
        "raw socket+uvloop",
        "async",
        _python("floor_async_driver:ASYNC", "--loop", "uvloop"),
        needs_module="uvloop",
        default=False,
        floor=True,
        extra="peers",
    ),
    # -- peers from PyPI (make peers; make run-all): each async row also on uvloop and rloop ---------
    *(
        _spec(
            name,
            "Python",
            library,
            mode,
            _python(plugin, *extra),
            needs_module=needs,
            extra="peers",
            default=False,
            optional=True,
        )
        for name, library, mode, plugin, extra, needs in _on_loops(
            ("py-httpx-sync", "httpx", "sync", "httpx_driver:SYNC", (), "httpx"),
            ("py-httpx-async", "httpx", "async", "httpx_driver:ASYNC", (), "httpx"),
            ("py-httpx2-sync", "httpx2", "sync", "httpx2_driver:SYNC", (), "httpx2"),
            ("py-httpx2-async", "httpx2", "async", "httpx2_driver:ASYNC", (), "httpx2"),
            ("py-urllib3", "urllib3", "sync", "urllib3_driver:SYNC", (), "urllib3"),
            ("py-niquests-sync", "niquests", "sync", "niquests_driver:SYNC", (), "niquests"),
            ("py-niquests-async", "niquests", "async", "niquests_driver:ASYNC", (), "niquests"),
            ("py-pycurl", "pycurl", "sync", "pycurl_driver:SYNC", (), "pycurl"),
            ("py-aiohttp-uvloop", "aiohttp+uvloop", "async", "aiohttp_driver:ASYNC", ("--loop", "uvloop"), "uvloop"),
            ("py-pyreqwest-sync", "pyreqwest", "sync", "pyreqwest_driver:SYNC", (), "pyreqwest"),
            ("py-pyreqwest-async", "pyreqwest", "async", "pyreqwest_driver:ASYNC", (), "pyreqwest"),
            ("py-pyqwest-sync", "pyqwest", "sync", "pyqwest_driver:SYNC", (), "pyqwest"),
            ("py-pyqwest-async", "pyqwest", "async", "pyqwest_driver:ASYNC", (), "pyqwest"),
            ("py-wreq-sync", "wreq", "sync", "wreq_driver:SYNC", (), "wreq"),
            ("py-wreq-async", "wreq", "async", "wreq_driver:ASYNC", (), "wreq"),
            ("py-rnet-sync", "rnet", "sync", "rnet_driver:SYNC", (), "rnet"),
            ("py-rnet-async", "rnet", "async", "rnet_driver:ASYNC", (), "rnet"),
            ("py-curl_cffi-sync", "curl_cffi", "sync", "curl_cffi_driver:SYNC", (), "curl_cffi"),
            ("py-curl_cffi-async", "curl_cffi", "async", "curl_cffi_driver:ASYNC", (), "curl_cffi"),
            ("py-impit-sync", "impit", "sync", "impit_driver:SYNC", (), "impit"),
            ("py-impit-async", "impit", "async", "impit_driver:ASYNC", (), "impit"),
            ("py-primp-sync", "primp", "sync", "primp_driver:SYNC", (), "primp"),
            ("py-primp-async", "primp", "async", "primp_driver:ASYNC", (), "primp"),
            ("py-ry-sync", "ry", "sync", "ry_driver:SYNC", (), "ry"),
            ("py-ry-async", "ry", "async", "ry_driver:ASYNC", (), "ry"),
            ("py-httpr-sync", "httpr", "sync", "httpr_driver:SYNC", (), "httpr"),
            ("py-httpr-async", "httpr", "async", "httpr_driver:ASYNC", (), "httpr"),
            ("py-aiosonic", "aiosonic", "async", "aiosonic_driver:ASYNC", (), "aiosonic"),
            ("py-httpx-aiohttp", "httpx-aiohttp", "async", "httpx_aiohttp_driver:ASYNC", (), "httpx_aiohttp"),
            # its plugin re-executes the driver process with gevent's patches first: a function that returns it
            (
                "py-geventhttpclient",
                "geventhttpclient",
                "sync",
                "geventhttpclient_driver:plugin",
                (),
                "geventhttpclient",
            ),
        )
    ),
)
