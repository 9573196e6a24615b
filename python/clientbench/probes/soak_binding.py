"""Soak one of our bindings: W threads (or tasks) share R requests through one client each, bounded in time.

Stores no per-request samples (so memory growth means a leak, not data). Prints one JSON line
(`clientbench.soak/1`, docs/soak-format.md): requests, failures (with the most common reasons), RSS after
warm-up and at the end (KiB), elapsed s. https URLs take the drivers' --ca-file PATH / --insecure."""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import threading
import time
from typing import Any

from ..harness import add_tls_options, describe, verify


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Tally:
    def __init__(self, total: int, warmup: int, deadline: float):
        self.total, self.warmup, self.deadline = total, warmup, deadline
        self.issued = self.done = self.failures = 0
        self.reasons: collections.Counter[str] = collections.Counter()
        self.rss_warm: int | None = None
        self.lock = threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.issued >= self.total or time.monotonic() > self.deadline:
                return False
            self.issued += 1
            return True

    def record(self, ok: bool, reason: str | None = None) -> None:
        with self.lock:
            self.done += 1
            if not ok:
                self.failures += 1
                self.reasons[reason or "?"] += 1
            if self.rss_warm is None and self.done >= self.warmup:
                self.rss_warm = rss_kib()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--client", choices=["beast", "reqwest", "reqwest-async"], required=True)
    p.add_argument("--url", required=True)
    p.add_argument("--requests", type=int, default=1_000_000)
    p.add_argument("--workers", type=int, default=10)
    p.add_argument("--warmup", type=int, default=50_000, help="requests before the warm RSS sample")
    p.add_argument("--max-seconds", type=float, default=600)
    add_tls_options(p)
    args = p.parse_args()
    trust = verify(args)  # the CA file, False (--insecure), or True: the system's roots, the bindings' default
    t0 = time.monotonic()
    tally = Tally(args.requests, args.warmup, t0 + args.max_seconds)

    def check(status: int) -> tuple[bool, str | None]:
        return (True, None) if status == 200 else (False, f"status {status}")

    if args.client == "reqwest-async":
        import reqwest_client

        async def task() -> None:
            async with reqwest_client.AsyncClient(timeout=10, verify=trust) as c:
                while tally.take():
                    try:
                        tally.record(*check(await c.get(args.url)))
                    except Exception as exc:
                        tally.record(False, describe(exc))

        async def all_tasks() -> None:
            await asyncio.gather(*(task() for _ in range(args.workers)))

        asyncio.run(all_tasks())
    else:
        mod: Any = __import__("beast_client" if args.client == "beast" else "reqwest_client")

        def thread() -> None:
            with mod.Client(timeout=10, verify=trust) as c:
                while tally.take():
                    try:
                        tally.record(*check(c.get(args.url)))
                    except Exception as exc:
                        tally.record(False, describe(exc))

        threads = [threading.Thread(target=thread) for _ in range(args.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print(
        json.dumps(
            {
                "schema": "clientbench.soak/1",
                "requests": tally.done,
                "failures": tally.failures,
                "reasons": dict(tally.reasons.most_common(5)),
                "rss_warm_kib": tally.rss_warm,
                "rss_end_kib": rss_kib(),
                "elapsed_s": round(time.monotonic() - t0, 2),
                "stopped_by_time": tally.done < args.requests,
            }
        )
    )


if __name__ == "__main__":
    main()
