"""One cold start of a Python row: `clientbench cold`'s probe (docs/cold-start.md).

    python .../clientbench/probes/cold_start.py LIBRARY[,MORE] MODULE:OBJECT [the plugin's args, the contract's flags]

Run as a script (not with -m, which imports runpy and the clientbench package first), so that when the library's
import begins the process holds what `python -c 'import LIBRARY'` would: the interpreter's start-up modules and
this file's two builtins. In order, each stamped with CLOCK_MONOTONIC (time.monotonic_ns, the clock the runner
stamped just before it started this process, so the runner subtracts its stamp from ours):

1. `start`: this file's first line runs (the exec, the interpreter's start-up and site are behind it);
2. `import0` .. `imported`: `import LIBRARY` (its top module and everything it imports; then MORE, the row's event
   loop when it runs on uvloop or rloop; "-": the plugin's module is the library, a plugin from outside the project);
3. the plugin is loaded (clientbench.plugin: its module, the SDK and the harness) and the contract's flags parsed,
   untimed: the harness's own start-up is the benchmark's, not the library's;
4. `construct0` .. `constructed`: the plugin's `make_client(opts)` (awaited for an async plugin, on an event loop
   made before);
5. `first0` .. `first`: the first request on that client (its connection, TLS handshake and exchange);
6. `second0` .. `second`: a second request on the same client.

Then, untimed, the protocol of a third request when --http 2 or 3 was asked, the client closed, and one JSON line
(clientbench.cold-probe/1) on stdout with the stamps, each request's status, body length or failure, and the peak
RSS (VmHWM). Exit status 3 with `unsupported: ...` on stderr as a driver's (the plugin cannot do what was asked);
a plugin that cannot be loaded is one line on stderr and exit status 1.
"""

from __future__ import annotations

import sys
import time

START_NS = time.monotonic_ns()
del sys.path[0]  # this file's folder, which a script gets first on its path: nothing is imported from it

TYPE_CHECKING = False  # (not typing's: the library's import must find typing where `import LIBRARY` would)
if TYPE_CHECKING:
    from typing import Any

    from clientbench import sdk


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: cold_start.py LIBRARY MODULE:OBJECT [ARGS]", file=sys.stderr)
        return 2
    library, target, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    modules = library.split(",") if library != "-" else [target.partition(":")[0]]
    marks = "importtime" in sys._xoptions  # -X importtime: mark where the library's import begins and ends
    if marks:
        print("cold_start: import begins", file=sys.stderr, flush=True)
    import0 = time.monotonic_ns()
    for module in modules:
        try:
            __import__(module)
        except Exception as exc:
            print(f"cold_start: error: cannot import {module}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    imported = time.monotonic_ns()
    if marks:
        print("cold_start: import ends", file=sys.stderr, flush=True)
    return _measure(target, rest, {"start": START_NS, "import0": import0, "imported": imported}, modules[0])


def _measure(target: str, rest: list[str], stamps: dict[str, int], module: str) -> int:
    import json

    from clientbench import harness, plugin, sdk

    try:
        loaded = plugin.load(target)
    except plugin.PluginError as exc:
        print(f"cold_start: error: {exc}", file=sys.stderr)
        return 1
    opts = sdk.parser(loaded, f"cold_start {target}").parse_args(rest)
    sdk.refuse(loaded, opts)
    stamps["loaded"] = time.monotonic_ns()
    if isinstance(loaded, sdk.SyncClient):
        outcome = _sync(loaded, opts, stamps)
    else:
        import asyncio

        factory = sdk.loop_factory(opts.loop)
        loop = factory() if factory is not None else asyncio.new_event_loop()
        try:
            outcome = loop.run_until_complete(_async(loaded, opts, stamps))
        finally:
            loop.close()
    info = loaded.client_info()
    line = {
        "schema": "clientbench.cold-probe/1",
        "module": module,
        "stamps_ns": stamps,
        "requests": outcome["requests"],
        "protocol": outcome["protocol"],
        "library": info["library"],
        "library_version": info["library_version"],
        "mode": info["mode"],
        "gil": info["gil"],
        "peak_rss_kib": harness.peak_rss_kib(),
        "python": sys.version.split()[0],
    }
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    if loaded.exit_after_document:
        harness.skip_teardown()
    return 0


def _answer(got: tuple[int, int] | BaseException, started: int, ended: int, timeout_s: float) -> dict[str, Any]:
    """A request's outcome: its status and body length, or its failure (a request that ended after --timeout is a
    TimeoutError, as the harness counts it)."""
    if isinstance(got, BaseException):
        from clientbench import harness

        return {"error": harness.describe(got)}
    status, length = got
    if ended - started > timeout_s * 1e9:
        return {"error": f"TimeoutError: the request took longer than --timeout {timeout_s:g} s"}
    return {"status": int(status), "bytes": int(length)}


def _sync(loaded: sdk.SyncClient[Any], opts: sdk.Options, stamps: dict[str, int]) -> dict[str, Any]:
    url, timeout = str(opts.url), float(opts.timeout)
    stamps["construct0"] = time.monotonic_ns()
    client = loaded.make_client(opts)
    stamps["constructed"] = time.monotonic_ns()
    answers: list[dict[str, Any]] = []
    for name in ("first", "second"):
        stamps[f"{name}0"] = started = time.monotonic_ns()
        got: tuple[int, int] | BaseException
        try:
            got = loaded.request(client, url)
        except Exception as exc:
            got = exc
        stamps[name] = ended = time.monotonic_ns()
        answers.append(_answer(got, started, ended, timeout))
    protocol = None
    if opts.http != "1.1" and loaded.protocol is not None:
        try:
            protocol = loaded.protocol(client, url)
        except Exception as exc:
            protocol = None
            answers.append({"error": f"the protocol's request: {exc}"})
    if loaded.close is not None:
        loaded.close(client)
    return {"requests": answers, "protocol": protocol}


async def _async(loaded: sdk.AsyncClient[Any], opts: sdk.Options, stamps: dict[str, int]) -> dict[str, Any]:
    import inspect

    url, timeout = str(opts.url), float(opts.timeout)
    stamps["construct0"] = time.monotonic_ns()
    client = loaded.make_client(opts)
    if inspect.isawaitable(client):
        client = await client
    stamps["constructed"] = time.monotonic_ns()
    answers: list[dict[str, Any]] = []
    for name in ("first", "second"):
        stamps[f"{name}0"] = started = time.monotonic_ns()
        got: tuple[int, int] | BaseException
        try:
            got = await loaded.request(client, url)
        except Exception as exc:
            got = exc
        stamps[name] = ended = time.monotonic_ns()
        answers.append(_answer(got, started, ended, timeout))
    protocol = None
    if opts.http != "1.1" and loaded.protocol is not None:
        try:
            protocol = await loaded.protocol(client, url)
        except Exception as exc:
            answers.append({"error": f"the protocol's request: {exc}"})
    if loaded.close is not None:
        done = loaded.close(client)
        if inspect.isawaitable(done):
            await done
    return {"requests": answers, "protocol": protocol}


if __name__ == "__main__":
    sys.exit(main())
