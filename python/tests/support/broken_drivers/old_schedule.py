"""The open loop of the Python harness before the contract named its generator: Poisson intervals from
random.Random(S + w).expovariate summed in float seconds, and the seed recorded for a uniform schedule too."""

import itertools
import random
from collections.abc import Iterator
from typing import Any

from base import main
from clientbench.harness import workers


def intended_ns(worker: int, count: int, rate: float, arrival: str, seed: int) -> Iterator[int]:
    if arrival == "uniform":
        for k in itertools.count():
            yield round((worker + k * count) / rate * 1e9)
    draw, t = random.Random(seed + worker).expovariate, 0.0
    while True:
        t += draw(rate / count)
        yield round(t * 1e9)


def seed_always(doc: dict[str, Any]) -> None:
    if doc["workload"]["loop"] == "open" and doc["workload"]["seed"] is None:
        doc["workload"]["seed"] = 1


workers.intended_ns = intended_ns  # type: ignore[assignment]
main(seed_always)
