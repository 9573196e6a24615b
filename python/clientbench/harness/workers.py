"""The workers: W threads (SyncDriver) or W tasks on one event loop (AsyncDriver), each with its own
client or all with one shared client (`--client-scope shared`), a ready barrier, then t0 and the timed loop,
closed or open (docs/raw-format.md, "The workload"); and the raw document they make."""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .. import contract
from .forms import (
    BOTH,
    AsyncForms,
    AsyncRequest,
    AsyncStream,
    AsyncUpload,
    SyncForms,
    SyncRequest,
    SyncStream,
    SyncUpload,
)
from .info import GcCount, emit
from .phases import SAMPLE_EVERY, Sums, check_keys, sampled_async, sampled_sync, worker
from .record import Worker
from .schedule import NS, intended_ns, open_loop, open_loop_async, round_half_away

#: the document's schema: the contract's version (schema/contract.json)
SCHEMA_ID = contract.schema_id()

C = TypeVar("C")

#: one untimed GET through a client (--http 2 only): the HTTP version its response came with ("HTTP/2", ...)
SyncProtocol = Callable[[C, str], "str | None"]
AsyncProtocol = Callable[[C, str], Awaitable["str | None"]]

#: the names libraries give HTTP versions, as the document writes them
_VERSIONS = {
    **{v: "HTTP/3" for v in ("3", "3.0", "h3")},
    **{v: "HTTP/2" for v in ("2", "2.0", "h2", "h2c")},
    "1.1": "HTTP/1.1",
    "1.0": "HTTP/1.0",
}


def _no_close(client: object) -> None:
    return None


def protocol_name(version: object) -> str | None:
    """A library's name for an HTTP version as the contract writes it: "HTTP/1.1", "HTTP/2" (None: unknown)."""
    if version is None:
        return None
    text = str(version).strip()
    key = text.upper().removeprefix("HTTP/").removeprefix("HTTP").lower().lstrip("_/")
    return _VERSIONS.get(key, text or None)


def _probe_sync(probe: SyncProtocol[C] | None, client: C | None, args: argparse.Namespace) -> str | None:
    """With --http 2 or 3, the protocol of one untimed GET after the timed group. Otherwise the plugin keeps its
    library on HTTP/1.1 (the SDK's rule), and no request is sent outside the workload."""
    if probe is None or getattr(args, "http", "1.1") not in ("2", "3"):
        return "HTTP/1.1"
    if client is None:
        return None
    try:
        return protocol_name(probe(client, args.url))
    except Exception:  # the requests failed too: counted there
        return None


async def _probe_async(probe: AsyncProtocol[C] | None, client: C | None, args: argparse.Namespace) -> str | None:
    if probe is None or getattr(args, "http", "1.1") not in ("2", "3"):
        return "HTTP/1.1"
    if client is None:
        return None
    try:
        return protocol_name(await probe(client, args.url))
    except Exception:
        return None


def _labelled(client_info: dict[str, Any], protocol: str | None) -> dict[str, Any]:
    return {**client_info, "protocol": protocol} if protocol else client_info


def _shared(args: argparse.Namespace) -> bool:
    return getattr(args, "client_scope", "per-worker") == "shared"


def _first_contact(call: Callable[[], object]) -> None:
    """One untimed request of a shared client before its workers warm it up all at once: a library learns
    whether an origin speaks HTTP/2 from its first connection (ALPN), and W requests sent together to an origin
    it has not met yet would each open one; after this one, an HTTP/2 client multiplexes them over its
    connection, as an application's client does once it has served a request."""
    try:
        call()
    except Exception:  # a warm-up request: its failure is not measured
        pass


def _duration_ns(args: argparse.Namespace) -> int | None:
    """D in whole ns, rounded as the intended times are (docs/raw-format.md: the schedule's I(w, k) < D)."""
    return None if args.duration is None else round_half_away(args.duration * NS)


def _schedule(args: argparse.Namespace, index: int) -> Any:
    return intended_ns(index, args.workers, args.rate, args.arrival, args.seed)


#: the phase keys a client records: fixed, or a function of the options (keys that depend on the URL or the protocol)
Keys = tuple[str, ...] | Callable[[argparse.Namespace], tuple[str, ...]]


def _recorded(args: argparse.Namespace, declared: Keys, workers: list[Worker], info: dict[str, Any]) -> bool:
    """With --phases and a client that sees some: every worker sums them, and the document names them."""
    if not getattr(args, "phases", False):
        return False
    keys = check_keys(declared(args)) if callable(declared) else declared
    if not keys:
        return False
    for w in workers:
        w.phases = Sums(keys)
    info["phases"] = list(keys)
    return True


@dataclass
class SyncDriver(Generic[C]):
    """W threads, each with its own client (or one shared client): N sequential requests each (closed loop), or
    on a schedule. `protocol`: one GET that returns its response's HTTP version (None: HTTP/1.1 only)."""

    make_client: Callable[[argparse.Namespace], C]
    request: SyncRequest[C]
    close: Callable[[C], None] = _no_close
    upload: SyncUpload[C] | None = None
    protocol: SyncProtocol[C] | None = None
    stream: SyncStream[C] | None = None  # the streamed form (forms.py), for --upload/--download stream
    streams: tuple[str, ...] = BOTH  # the directions it streams
    phases: Keys = ()  # the phase keys its requests record (harness/phases.py), with --phases
    phased: SyncRequest[C] | None = None  # the request to make while phases are recorded (default: request)

    @staticmethod
    def _timed_loop(
        w: Worker, client: C, args: argparse.Namespace, request: SyncRequest[C], phased: SyncRequest[C] | None = None
    ) -> None:
        """The closed keep-alive hot loop: as little Python per request as possible (it runs under the GIL,
        and every Python row shares it). With `phased` (--phases), request k goes through it when k is a multiple
        of SAMPLE_EVERY, its phases recorded: the others pay one test of k."""
        perf, url, limit, phases = time.perf_counter_ns, args.url, w.limit_ns, w.phases
        starts, latencies = w.starts, w.latencies
        w.loop_start = perf()
        for i in range(args.requests):
            call = request
            if phased is not None and not i % SAMPLE_EVERY:
                assert phases is not None
                phases.pending, call = {}, phased
            start = perf()
            try:
                status, nbytes = call(client, url)
            except Exception as exc:
                w.record(i, start, perf(), None, getattr(exc, "nbytes", 0), exc)
                continue
            end = perf()
            if status == 200 and end - start <= limit:
                starts.append(start)
                latencies.append(end - start)
                w.nbytes += nbytes
                if phases is not None and phases.pending is not None:
                    phases.add(end - start)
            else:
                w.record(i, start, end, status, nbytes, None)
        w.loop_end = perf()

    def run(self, args: argparse.Namespace, client_info: dict[str, Any]) -> dict[str, Any]:
        is_open = args.rate is not None
        workers = [Worker(args.record == "histogram", is_open, args.timeout) for _ in range(args.workers)]
        forms = SyncForms(args, self.request, self.upload, self.stream, self.streams)
        duration_ns = _duration_ns(args)
        client_info = dict(client_info)
        _recorded(args, self.phases, workers, client_info)
        phased = self.phased or self.request
        # all workers ready (client built, warmed up) -> main takes t0 -> go: no loop starts before t0
        ready = threading.Barrier(args.workers + 1)
        go = threading.Event()
        # every timed loop over -> main takes the wall time; then worker 0 asks its client for the protocol (from
        # its own thread: a library may keep a connection per thread) and every worker closes its own client
        finished = threading.Barrier(args.workers + 1)
        protocol: list[str | None] = [None]
        t0 = [0]
        setup_errors: list[BaseException] = []
        shared = _shared(args)
        the_client: C | None = None
        if shared:  # made once, before the workers; each worker warms it up as usual
            try:
                made_shared = the_client = self.make_client(args)
                if args.warmup:
                    _first_contact(lambda: forms.for_worker(0)(made_shared, args.url))
            except Exception as exc:
                setup_errors.append(exc)

        def work(index: int, w: Worker) -> None:
            client: C | None = the_client
            try:
                made = the_client if shared else self.make_client(args)
                client = made
                if made is not None:
                    warm = forms.for_worker(index)
                    for _ in range(args.warmup):
                        try:
                            warm(made, args.url)
                        except Exception:  # warmup failures are not measured
                            pass
            except BaseException as exc:  # still join the barrier so nobody waits forever
                setup_errors.append(exc)
            request = plain = forms.for_worker(index)  # the timed requests count from k = 0 again
            # a GET's phases are recorded (not the other forms'), of one request in SAMPLE_EVERY
            sampled = w.phases is not None and plain is self.request
            if w.phases is not None:
                worker(w.phases)
                if sampled:
                    request = sampled_sync(plain, phased, w.phases)
            ready.wait()
            go.wait()

            def send() -> tuple[int, int]:
                nonlocal client
                if args.connection == "new":  # a fresh client (and connection) per request
                    if client is not None:
                        self.close(client)
                    client = None
                    client = self.make_client(args)
                elif client is None:
                    raise setup_errors[0] if setup_errors else RuntimeError("no client")
                return request(client, args.url)

            try:
                if is_open:
                    open_loop(w, send, _schedule(args, index), t0[0], args.requests, duration_ns)
                elif client is not None and args.connection == "keep-alive":
                    self._timed_loop(w, client, args, plain, phased if sampled else None)
                else:
                    w.loop_start = time.perf_counter_ns()
                    for i in range(args.requests):
                        start = time.perf_counter_ns()
                        status, nbytes, error = None, 0, None
                        try:
                            status, nbytes = send()
                        except Exception as exc:
                            error, nbytes = exc, getattr(exc, "nbytes", 0)
                        w.record(i, start, time.perf_counter_ns(), status, nbytes, error)
                    w.loop_end = time.perf_counter_ns()
            finally:
                finished.wait()
            if index == 0:
                protocol[0] = _probe_sync(self.protocol, client, args)
            if client is not None and not shared:
                try:
                    self.close(client)
                except Exception:
                    pass

        threads = [threading.Thread(target=work, args=(i, w), daemon=True) for i, w in enumerate(workers)]
        for t in threads:
            t.start()
        ready.wait()
        collector = GcCount()
        collector.start()
        t0[0], cpu0 = time.perf_counter_ns(), time.process_time_ns()
        go.set()
        finished.wait()
        wall, cpu = time.perf_counter_ns() - t0[0], time.process_time_ns() - cpu0
        gc_counts = collector.stop()
        for t in threads:
            t.join()
        if the_client is not None:
            try:
                self.close(the_client)
            except Exception:
                pass
        for w in workers:
            w.count_missed(duration_ns)
        return document(args, _labelled(client_info, protocol[0]), wall, t0[0], workers, cpu, gc_counts)


@dataclass
class AsyncDriver(Generic[C]):
    """W tasks on one event loop, each with its own client (or one shared client): N sequential requests each,
    or on a schedule."""

    make_client: Callable[[argparse.Namespace], Awaitable[C]]
    request: AsyncRequest[C]
    close: Callable[[C], Awaitable[None]]
    upload: AsyncUpload[C] | None = None
    protocol: AsyncProtocol[C] | None = None
    stream: AsyncStream[C] | None = None
    streams: tuple[str, ...] = BOTH
    phases: Keys = ()
    phased: AsyncRequest[C] | None = None

    async def _run(self, args: argparse.Namespace, client_info: dict[str, Any]) -> dict[str, Any]:
        is_open = args.rate is not None
        workers = [Worker(args.record == "histogram", is_open, args.timeout) for _ in range(args.workers)]
        forms = AsyncForms(args, self.request, self.upload, self.stream, self.streams)
        timed = [forms.for_worker(i) for i in range(args.workers)]  # each counts from k = 0 after its warm-up
        client_info = dict(client_info)
        if _recorded(args, self.phases, workers, client_info):
            phased = self.phased or self.request
            for i, w in enumerate(workers):
                if timed[i] is self.request and w.phases is not None:  # a GET
                    timed[i] = sampled_async(timed[i], phased, w.phases)
        duration_ns = _duration_ns(args)
        clients: list[C | None] = []
        setup_error: BaseException | None = None
        for _ in range(1 if _shared(args) else args.workers):
            try:
                clients.append(await self.make_client(args))
            except Exception as exc:
                setup_error = exc
                clients.append(None)
        if _shared(args):  # one client for every task
            clients *= args.workers

        async def warm(client: C | None, index: int) -> None:
            if client is None:
                return
            request = forms.for_worker(index)
            for _ in range(args.warmup):
                try:
                    await request(client, args.url)
                except Exception:
                    pass

        async def send(index: int) -> tuple[int, int]:
            client = clients[index]
            if args.connection == "new":  # a fresh client (and connection) per request
                clients[index] = None
                if client is not None:
                    await self.close(client)
                client = clients[index] = await self.make_client(args)
            elif client is None:
                raise setup_error or RuntimeError("no client")
            return await timed[index](client, args.url)

        async def work(w: Worker, index: int) -> None:
            if w.phases is not None:  # (this task's context)
                worker(w.phases)
            request = timed[index]
            w.loop_start = time.perf_counter_ns()
            for i in range(args.requests):
                start = time.perf_counter_ns()
                status, nbytes, error = None, 0, None
                client = clients[index]
                try:
                    if client is not None and args.connection == "keep-alive":
                        status, nbytes = await request(client, args.url)
                    else:
                        status, nbytes = await send(index)
                except Exception as exc:
                    error, nbytes = exc, getattr(exc, "nbytes", 0)
                w.record(i, start, time.perf_counter_ns(), status, nbytes, error)
            w.loop_end = time.perf_counter_ns()

        async def scheduled(w: Worker, index: int, t0: int) -> None:
            if w.phases is not None:
                worker(w.phases)
            await open_loop_async(w, lambda: send(index), _schedule(args, index), t0, args.requests, duration_ns)

        try:
            if _shared(args) and args.warmup and clients[0] is not None:
                try:  # see _first_contact
                    await forms.for_worker(0)(clients[0], args.url)
                except Exception:
                    pass
            await asyncio.gather(*(warm(c, i) for i, c in enumerate(clients)))
            collector = GcCount()
            collector.start()
            t0, cpu0 = time.perf_counter_ns(), time.process_time_ns()
            if is_open:
                await asyncio.gather(*(scheduled(w, i, t0) for i, w in enumerate(workers)))
            else:
                await asyncio.gather(*(work(w, i) for i, w in enumerate(workers)))
            wall, cpu = time.perf_counter_ns() - t0, time.process_time_ns() - cpu0
            gc_counts = collector.stop()
            protocol = await _probe_async(self.protocol, clients[0], args)
        finally:
            for c in {id(c): c for c in clients if c is not None}.values():
                if c is not None:
                    try:
                        await self.close(c)
                    except Exception:
                        pass
        for w in workers:
            w.count_missed(duration_ns)
        return document(args, _labelled(client_info, protocol), wall, t0, workers, cpu, gc_counts)

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


def document(
    args: argparse.Namespace,
    client: dict[str, Any],
    wall_ns: int,
    t0: int,
    workers: list[Worker],
    cpu_ns: int,
    gc_counts: dict[str, int] | None = None,
) -> dict[str, Any]:
    is_open = args.rate is not None
    return {
        "schema": SCHEMA_ID,
        "client": client,
        "workload": {
            "url": args.url,
            "workers": args.workers,
            "requests": args.requests,
            "duration_s": args.duration,
            "warmup": args.warmup,
            "timeout_s": args.timeout,
            "connection": args.connection,
            "loop": "open" if is_open else "closed",
            "rate": args.rate,
            "arrival": args.arrival if is_open else None,
            "seed": args.seed if is_open and args.arrival == "poisson" else None,  # only poisson draws from it
            "method": args.method,
            "body_size": args.body_size,
            "record": args.record,
            "client_scope": getattr(args, "client_scope", "per-worker"),
            "http": getattr(args, "http", "1.1"),
            "upload": getattr(args, "upload", "whole"),
            "download": getattr(args, "download", "whole"),
            "chunk_size": getattr(args, "chunk_size", 65536),
            "targets": getattr(args, "targets", None),
        },
        "wall_ns": wall_ns,
        "cpu_ns": cpu_ns,
        **({"gc": gc_counts} if gc_counts is not None else {}),
        "workers": [w.to_json(t0, args.record) for w in workers],
    }


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
