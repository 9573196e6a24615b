"""The driver harness: the workload contract, once, for every Python driver.

A driver module supplies only how to make a client and how to do one request; this module runs W workers
(threads for sync libraries, tasks on one event loop for async ones), times them and prints the raw
document described in docs/raw-format.md. Statistics are not computed here: the runner does that.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import functools
import json
import os
import ssl
import sys
import sysconfig
import threading
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

SCHEMA_ID = "clientbench.raw/1"

C = TypeVar("C")

#: do one request: returns (status, body bytes read); raises on any transport error
SyncRequest = Callable[[C, str], "tuple[int, int]"]
AsyncRequest = Callable[[C, str], Awaitable["tuple[int, int]"]]


def parser(description: str, *, gil: bool = False, modes: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    if modes:
        p.add_argument(
            "--mode", choices=modes, default=modes[0], help=f"the library's native mode to use (default {modes[0]})"
        )
    p.add_argument("--url", required=True, help="URL every request goes to")
    p.add_argument("--workers", type=_positive, default=10, help="workers, each with its own client (default 10)")
    p.add_argument("--requests", type=_positive, default=100, help="timed requests per worker (default 100)")
    p.add_argument("--warmup", type=_non_negative, default=0, help="untimed requests per worker (default 0)")
    p.add_argument("--timeout", type=_positive_float, default=30.0, help="per-request timeout, s (default 30)")
    p.add_argument(
        "--connection",
        choices=["keep-alive", "new"],
        default="keep-alive",
        help="keep-alive: one connection per worker (default); new: a new client and connection for every request",
    )
    add_tls_options(p)
    if gil:
        p.add_argument(
            "--gil",
            choices=["held", "released"],
            default="released",
            help="hold or release the GIL during I/O (default released)",
        )
    return p


def add_tls_options(p: argparse.ArgumentParser) -> None:
    """The contract's TLS flags (docs/raw-format.md), also taken by the soak probe: `--ca-file` or `--insecure`."""
    tls = p.add_mutually_exclusive_group()
    tls.add_argument("--ca-file", metavar="PATH", help="trust the CA certificates in this PEM file (https URLs)")
    tls.add_argument(
        "--insecure", action="store_true", help="do not verify the server's certificate (unsafe; https URLs)"
    )


def verify(args: argparse.Namespace) -> bool | str:
    """requests' convention: False (--insecure), a CA bundle path (--ca-file), or True (the system roots)."""
    if args.insecure:
        # asked for: urllib3's per-request InsecureRequestWarning would only flood the driver's stderr
        warnings.filterwarnings("ignore", message="Unverified HTTPS request")
        return False
    return args.ca_file or True


def ssl_context(args: argparse.Namespace) -> ssl.SSLContext | bool:
    """An SSLContext that trusts --ca-file (or the system roots), or False with --insecure. One per process,
    as an application would keep it: loading the system roots costs ~50 ms of CPU, which a context made per
    client would add to every new connection (plain http ones too)."""
    if args.insecure:
        return False
    return _context(args.ca_file)


@functools.cache
def _context(ca_file: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_file)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


#: The failure classes, the same in every language's harness (docs/raw-format.md, "Failure reasons").
#: TLSError: an untrusted or expired certificate, a wrong host name, a failed handshake.
FAILURE_CLASSES = (
    "TimeoutError",
    "TLSError",
    "ConnectionError",
    "ProtocolError",
    "InvalidUrl",
    "InvalidRequest",
    "Cancelled",
    "Error",
)


#: libcurl's error codes (pycurl raises them as `error(code, message)`)
_CURL_CLASSES = {
    1: "InvalidUrl",
    3: "InvalidUrl",
    5: "ConnectionError",
    6: "ConnectionError",
    7: "ConnectionError",
    8: "ProtocolError",
    18: "ConnectionError",
    28: "TimeoutError",
    35: "TLSError",
    51: "TLSError",
    52: "ConnectionError",
    55: "ConnectionError",
    56: "ConnectionError",
    60: "TLSError",
}
#: exception class names (of the exception or a base class) that mean "this URL cannot be used"; whole names:
#: a substring test would take curl_cffi's CurlError for a URLError
_URL_NAMES = frozenset(
    {
        "invalidurl",
        "urlerror",
        "missingschema",
        "invalidschema",
        "locationparseerror",
        "locationvalueerror",
        "unsupportedprotocol",
        "nonhttpurlclienterror",
        "invalidurlclienterror",
        "invalidurlredirectclienterror",
    }
)
_CONNECTION_ERRNOS = (errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.EPIPE)


def failure_class(exc: BaseException) -> str:
    """The failure class of an exception from any Python client library (they do not share a hierarchy)."""
    name = type(exc).__name__.lower()
    names = {c.__name__.lower() for c in type(exc).__mro__}  # base classes too
    # the exception's own name: urllib3's NewConnectionError derives from ConnectTimeoutError
    if isinstance(exc, TimeoutError) or "timeout" in name:
        return "TimeoutError"
    if type(exc).__module__ == "pycurl" and exc.args and isinstance(exc.args[0], int):
        return _CURL_CLASSES.get(exc.args[0], "Error")
    # certificate, host name and handshake failures: by type where the library has one, else by its text
    # (Rust clients report them as connect errors whose message names the TLS cause; not a bare "ssl":
    # aiohttp writes "ssl:default" into every connection error)
    text = str(exc).lower()
    if (
        isinstance(exc, ssl.SSLError)
        or type(exc).__name__ == "TLSError"
        or any(k in name for k in ("ssl", "certificate", "tls"))
        or any(
            k in text for k in ("certificate", "ssl handshake", "tls handshake", "invalidcertificate", "unknownissuer")
        )
    ):
        return "TLSError"
    if names & _URL_NAMES or (isinstance(exc, ValueError) and text.startswith(("invalid url", "unsupported url"))):
        return "InvalidUrl"
    if (
        isinstance(exc, ConnectionError)
        or "connect" in name
        or name == "readerror"
        or getattr(exc, "errno", None) in _CONNECTION_ERRNOS
    ):
        return "ConnectionError"
    if any(k in name for k in ("protocol", "payload", "incomplete", "badstatus", "parse", "decod")):
        return "ProtocolError"
    if isinstance(exc, ValueError):
        return "InvalidRequest"
    if "cancel" in name:
        return "Cancelled"
    return "Error"


def describe(exc: BaseException) -> str:
    """`<class>: <message>`; the library's own exception name is kept in the message when it differs."""
    text = str(exc).strip().replace("\n", " ")
    name, cls = type(exc).__name__, failure_class(exc)
    detail = text if name == cls else f"{name}: {text}" if text else name
    return f"{cls}: {detail}" if detail else cls


@dataclass
class Worker:
    """What one worker measured; absolute monotonic timestamps until `to_json`."""

    starts: list[int] = field(default_factory=list)
    latencies: list[int] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    nbytes: int = 0
    loop_start: int = 0
    loop_end: int = 0

    def record(
        self, index: int, start: int, end: int, status: int | None, nbytes: int, error: BaseException | None
    ) -> None:
        self.starts.append(start)
        self.latencies.append(end - start)
        self.nbytes += nbytes
        if error is not None:
            self.failures.append({"index": index, "reason": describe(error), "status": None})
        elif status != 200:
            self.failures.append({"index": index, "reason": f"status {status}", "status": status})

    def to_json(self, t0: int) -> dict[str, Any]:
        return {
            "elapsed_ns": self.loop_end - self.loop_start,
            "start_ns": [max(0, s - t0) for s in self.starts],
            "latencies_ns": self.latencies,
            "bytes": self.nbytes,
            "failures": self.failures,
        }


def document(
    args: argparse.Namespace, client: dict[str, Any], wall_ns: int, t0: int, workers: list[Worker], cpu_ns: int
) -> dict[str, Any]:
    return {
        "schema": SCHEMA_ID,
        "client": client,
        "workload": {
            "url": args.url,
            "workers": args.workers,
            "requests": args.requests,
            "warmup": args.warmup,
            "timeout_s": args.timeout,
            "connection": args.connection,
        },
        "wall_ns": wall_ns,
        "cpu_ns": cpu_ns,
        "workers": [w.to_json(t0) for w in workers],
    }


def version(distribution: str) -> str | None:
    """An installed package's version (not every library exports a typed `__version__`)."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def peak_rss_kib() -> int | None:
    """Peak resident set of this process image (VmHWM: reset at exec, unlike getrusage's ru_maxrss, which
    also counts the forked parent's pages before exec)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def interpreter() -> dict[str, Any]:
    """The interpreter the driver ran on, as measured at the end of the run: free-threaded build or not,
    whether the GIL was enabled at run time (a C extension without free-threading support re-enables it when
    imported), and which client packages ran with compiled extension modules (the others ran pure Python)."""
    extensions: dict[str, list[str]] = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        # The module's own name, not its sys.modules key: requests.packages.* are aliases of other packages.
        real = getattr(module, "__name__", None) or name
        top = real.split(".", 1)[0]
        if file.endswith((".so", ".pyd")) and top not in sys.stdlib_module_names:
            extensions.setdefault(top, []).append(real)
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    return {
        "implementation": sys.implementation.name,
        "version": ".".join(map(str, sys.version_info[:3])),
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "gil_enabled": bool(is_gil_enabled()) if is_gil_enabled is not None else True,
        "executable": sys.executable,
        "extensions": {k: sorted(set(v)) for k, v in sorted(extensions.items())},
    }


def emit(doc: dict[str, Any]) -> None:
    rss = peak_rss_kib()
    if rss is not None:
        doc["peak_rss_kib"] = rss
    doc["client"]["python"] = interpreter()
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    sys.stdout.flush()


@dataclass
class SyncDriver(Generic[C]):
    """W threads, each with its own client, N sequential requests each."""

    make_client: Callable[[argparse.Namespace], C]
    request: SyncRequest[C]
    close: Callable[[C], None] = lambda client: None

    def _timed_loop(self, w: Worker, client: C, args: argparse.Namespace) -> None:
        """The keep-alive hot loop: as little Python per request as possible (it runs under the GIL)."""
        perf, request, url = time.perf_counter_ns, self.request, args.url
        starts, latencies = w.starts, w.latencies
        w.loop_start = perf()
        for i in range(args.requests):
            start = perf()
            try:
                status, nbytes = request(client, url)
            except Exception as exc:
                w.record(i, start, perf(), None, 0, exc)
                continue
            end = perf()
            if status == 200:
                starts.append(start)
                latencies.append(end - start)
                w.nbytes += nbytes
            else:
                w.record(i, start, end, status, nbytes, None)
        w.loop_end = perf()

    def run(self, args: argparse.Namespace, client_info: dict[str, Any]) -> dict[str, Any]:
        workers = [Worker() for _ in range(args.workers)]
        # all workers ready (client built, warmed up) -> main takes t0 -> go: no loop starts before t0
        ready = threading.Barrier(args.workers + 1)
        go = threading.Event()
        setup_errors: list[BaseException] = []

        def work(w: Worker) -> None:
            client = None
            try:
                client = self.make_client(args)
                for _ in range(args.warmup):
                    try:
                        self.request(client, args.url)
                    except Exception:  # warmup failures are not measured
                        pass
            except BaseException as exc:  # still join the barrier so nobody waits forever
                setup_errors.append(exc)
            ready.wait()
            go.wait()
            if client is not None and args.connection == "keep-alive":
                self._timed_loop(w, client, args)
            else:
                w.loop_start = time.perf_counter_ns()
                for i in range(args.requests):
                    start = time.perf_counter_ns()
                    status, nbytes, error = None, 0, None
                    if client is None:
                        error = setup_errors[0] if setup_errors else RuntimeError("no client")
                    else:
                        try:  # --connection new: a fresh client (and connection) per request
                            self.close(client)
                            client = self.make_client(args)
                            status, nbytes = self.request(client, args.url)
                        except Exception as exc:
                            error = exc
                    w.record(i, start, time.perf_counter_ns(), status, nbytes, error)
                w.loop_end = time.perf_counter_ns()
            if client is not None:
                try:
                    self.close(client)
                except Exception:
                    pass

        threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
        for t in threads:
            t.start()
        ready.wait()
        t0, cpu0 = time.perf_counter_ns(), time.process_time_ns()
        go.set()
        for t in threads:
            t.join()
        wall, cpu = time.perf_counter_ns() - t0, time.process_time_ns() - cpu0
        return document(args, client_info, wall, t0, workers, cpu)


@dataclass
class AsyncDriver(Generic[C]):
    """W tasks on one event loop, each with its own client, N sequential requests each."""

    make_client: Callable[[argparse.Namespace], Awaitable[C]]
    request: AsyncRequest[C]
    close: Callable[[C], Awaitable[None]]

    async def _run(self, args: argparse.Namespace, client_info: dict[str, Any]) -> dict[str, Any]:
        workers = [Worker() for _ in range(args.workers)]
        clients: list[C | None] = []
        setup_error: BaseException | None = None
        for _ in range(args.workers):
            try:
                clients.append(await self.make_client(args))
            except Exception as exc:
                setup_error = exc
                clients.append(None)

        async def warm(client: C | None) -> None:
            if client is None:
                return
            for _ in range(args.warmup):
                try:
                    await self.request(client, args.url)
                except Exception:
                    pass

        async def work(w: Worker, index: int) -> None:
            w.loop_start = time.perf_counter_ns()
            for i in range(args.requests):
                start = time.perf_counter_ns()
                status, nbytes, error = None, 0, None
                client = clients[index]
                if client is None:
                    error = setup_error or RuntimeError("no client")
                else:
                    try:
                        if args.connection == "new":  # a fresh client (and connection) per request
                            clients[index] = None
                            await self.close(client)
                            client = clients[index] = await self.make_client(args)
                        status, nbytes = await self.request(client, args.url)
                    except Exception as exc:
                        error = exc
                w.record(i, start, time.perf_counter_ns(), status, nbytes, error)
            w.loop_end = time.perf_counter_ns()

        try:
            await asyncio.gather(*(warm(c) for c in clients))
            t0, cpu0 = time.perf_counter_ns(), time.process_time_ns()
            await asyncio.gather(*(work(w, i) for i, w in enumerate(workers)))
            wall, cpu = time.perf_counter_ns() - t0, time.process_time_ns() - cpu0
        finally:
            for c in clients:
                if c is not None:
                    try:
                        await self.close(c)
                    except Exception:
                        pass
        return document(args, client_info, wall, t0, workers, cpu)

    def run(
        self,
        args: argparse.Namespace,
        client_info: dict[str, Any],
        loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
    ) -> dict[str, Any]:
        if loop_factory is None:
            return asyncio.run(self._run(args, client_info))
        loop = loop_factory()
        try:
            return loop.run_until_complete(self._run(args, client_info))
        finally:
            loop.close()


def run(
    args: argparse.Namespace,
    info: dict[str, Any],
    sync: SyncDriver[Any] | None = None,
    async_: AsyncDriver[Any] | None = None,
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
) -> None:
    """Run the driver of `args.mode` (or the only one given) and print the document."""
    mode = getattr(args, "mode", "sync" if sync else "async")
    info = {**info, "mode": mode}
    if mode == "sync":
        assert sync is not None
        emit(sync.run(args, info))
    else:
        assert async_ is not None
        emit(async_.run(args, info, loop_factory))


def skip_teardown() -> None:
    """End the process once the document is out, without the interpreter's teardown: for libraries whose
    runtime crashes at interpreter exit (a bug of theirs that would fail a row whose figures are complete).
    Only drivers of other people's libraries use it, each saying which crash it avoids."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
