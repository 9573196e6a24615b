"""Synthetic raw documents, runs and rows (no driver, no server) for the model, report and command tests."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from clientbench.model import Client, DriverRun, Results, Row, RunStatus
from clientbench.stats import ProcessUsage, row_stats
from clientbench.workload import Workload


def raw(workers: int = 2, n: int = 50, seed: int = 0, wall_ms: float = 10.0, serial: bool = False) -> dict[str, Any]:
    """A valid clientbench.raw/1 document: `workers` x `n` requests of random latency (50-500 us), wall time
    `wall_ms`; with `serial` the workers' requests follow each other (timeline plots)."""
    rng = np.random.default_rng(seed)
    ws = []
    for i in range(workers):
        lat = rng.integers(50_000, 500_000, size=n)
        offset = i * int(lat.sum()) if serial else 0
        starts = (offset + np.concatenate([[0], np.cumsum(lat)[:-1]])).tolist()
        ws.append(
            {
                "elapsed_ns": int(lat.sum()),
                "start_ns": starts,
                "latencies_ns": lat.tolist(),
                "bytes": 13 * n,
                "failures": [],
            }
        )
    return {
        "schema": "clientbench.raw/1",
        "client": {"language": "Python", "library": "x", "library_version": "1", "mode": "sync", "gil": "held"},
        "workload": {"url": "http://127.0.0.1:1/", "workers": workers, "requests": n, "warmup": 0, "timeout_s": 1},
        "wall_ns": int(wall_ms * 1e6),
        "workers": ws,
        "cpu_ns": 2_000_000,
    }


WORKLOAD_2 = {
    "url": "http://127.0.0.1:1/", "workers": 2, "requests": None, "duration_s": 0.001, "warmup": 0, "timeout_s": 30,
    "connection": "keep-alive", "loop": "open", "rate": 4000, "arrival": "uniform", "seed": 1, "method": "GET",
    "body_size": 0, "record": "samples",
}  # fmt: skip
#: a clientbench.raw/3 open-loop document with samples, small enough to compute by hand (test_stats does)
OPEN: dict[str, Any] = {
    "schema": "clientbench.raw/3",
    "client": {"language": "C++", "library": "beast", "library_version": "1.81.0", "mode": "sync", "gil": None},
    "workload": WORKLOAD_2,
    "wall_ns": 1_000_000,
    "workers": [
        {"elapsed_ns": 900_000, "count": 2, "late": 1, "missed": 0, "start_ns": [0, 700_000],
         "intended_ns": [0, 500_000], "latencies_ns": [600_000, 200_000], "bytes": 26, "failure_count": 0,
         "failures": []},
        {"elapsed_ns": 800_000, "count": 1, "late": 0, "missed": 1, "start_ns": [250_000], "intended_ns": [250_000],
         "latencies_ns": [550_000], "bytes": 0, "failure_count": 1,
         "failures": [{"index": 0, "reason": "status 500", "status": 500}]},
    ],
}  # fmt: skip


def histogram_doc() -> dict[str, Any]:
    """OPEN with histograms instead of samples (over the successful requests only: none of worker 1's)."""
    doc = copy.deepcopy(OPEN)
    doc["workload"]["record"] = "histogram"
    for w in doc["workers"]:
        for key in ("start_ns", "intended_ns", "latencies_ns"):
            del w[key]
    # worker 0: service 600,000 and 200,000 ns, corrected 600,000 and 400,000 ns, as their buckets
    service, corrected = [[199_936, 1], [599_552, 1]], [[399_872, 1], [599_552, 1]]
    doc["workers"][0]["histograms"] = {
        "service": {"significant_digits": 3, "counts": service},
        "corrected": {"significant_digits": 3, "counts": corrected},
    }
    doc["workers"][1]["histograms"] = {
        "service": {"significant_digits": 3, "counts": []},
        "corrected": {"significant_digits": 3, "counts": []},
    }
    return doc


def client(name: str = "py-x", gil: str | None = "held", optional: bool = False, **kw: Any) -> Client:
    return Client(name=name, language="Python", library="x", mode="sync", gil=gil, optional=optional, **kw)


def good_run(c: Client, seed: int = 0, wall_ms: float = 10.0, serial: bool = False) -> DriverRun:
    doc = raw(seed=seed, wall_ms=wall_ms, serial=serial)
    return DriverRun(c, RunStatus.OK, raw=doc, stats=row_stats(doc, ProcessUsage(0.5, 20480)), returncode=0)


def open_row(name: str, rate: float, service_us: float, workers: int = 2, repeats: int = 1, **kw: Any) -> Row:
    """A row of open-loop runs at `rate` of the fake driver's simulated workers (`service_us` per request:
    they keep up while rate / workers <= 1e6 / service_us), 0.5 s each."""
    from support.fake_driver import synthetic_doc

    r = Row(client(name, gil=kw.pop("gil", None), **kw))
    for _ in range(repeats):
        doc = synthetic_doc("--workers", str(workers), "--rate", str(rate), "--duration", "0.5", "--service-us",
                            str(service_us))  # fmt: skip
        r.add(DriverRun(r.client, RunStatus.OK, raw=doc, stats=row_stats(doc), returncode=0))
    return r


def crashed_run(c: Client, reason: str = "driver exited with status 3: boom") -> DriverRun:
    return DriverRun(c, RunStatus.FAILED, reason=reason, returncode=3)


def row(
    name: str = "py-x",
    gil: str | None = "held",
    benches: tuple[float, ...] = (10.0, 12.0, 11.0),
    serial: bool = False,
    optional: bool = False,
) -> Row:
    """A row of one good run per Bench value (ms)."""
    r = Row(client(name, gil, optional))
    for i, b in enumerate(benches):
        r.add(good_run(r.client, seed=i, wall_ms=b, serial=serial))
    return r


def make_row(*runs: str, optional: bool = False) -> Row:
    """A row from run kinds: ok, crash (no document), errors (a document with failed requests), unavailable (not
    installed here), skipped (what older documents called an unavailable peer)."""
    r = Row(client(optional=optional))
    for i, kind in enumerate(runs):
        if kind == "ok":
            r.add(good_run(r.client, seed=i, wall_ms=10.0 + i))
        elif kind == "crash":
            r.add(crashed_run(r.client, reason=f"driver exited with status 3: boom {i}"))
        elif kind == "errors":
            run = good_run(r.client, seed=i)
            run.raw["workers"][0]["failures"] = [{"index": 0, "reason": "status 500", "status": 500}]
            run.stats = row_stats(run.raw)
            run.status, run.reason = RunStatus.FAILED, "1 of 100 requests failed: status 500"
            r.add(run)
        elif kind == "unavailable":
            r.add(DriverRun(r.client, RunStatus.UNAVAILABLE, reason="unavailable: x is not installed: pip install"))
        elif kind == "skipped":
            r.add(DriverRun(r.client, RunStatus.SKIPPED, reason="skipped: not installed"))
        else:
            raise ValueError(kind)
    return r


def results(rows: list[Row]) -> Results:
    """A results document of these rows (2 workers x 50 requests, 3 repeats, a new connection per request)."""
    env = {
        "command": ["clientbench"],
        "cpu": {"model": "x", "logical_cores": 2},
        "os": "Linux",
        "kernel": "6",
        "python": {"version": "3.11"},
        "toolchains": {"g++": "12", "rustc": "1", "cargo": "1", "cmake": "3"},
        "python_packages": {},
        "build": {},
        "git": {"commit": "abc"},
    }
    return Results(
        workload=Workload(workers=2, requests=50, warmup=0, repeat=3, connection="new"),
        rows=rows,
        created="2026-01-01T00:00:00+00:00",
        command=["clientbench", "run"],
        server={"url": "http://127.0.0.1:1", "started_by_clientbench": True, "threads": None},
        environment=env,
        version="0.1.0",
        phase="parallel",
    )
