"""The open loop's checks (docs/raw-format.md, "Open loop"): the uniform and the Poisson schedule to the contract's
formulas, late starts as the contract counts them, --duration."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator

from ..model import DriverRun
from ..workload import Workload
from .suite import FAIL, PASS, Outcome, Suite, _document, _failures, _ok, _refused, _workers

HELLO = 13  # the body of the server's `/`
#: the open loop's --duration check
OPEN_DURATION_S = 0.5
#: the Poisson check's seed; the late-start check's service time (ms) on a schedule of one request per 20 ms
POISSON_SEED, LATE_DELAY_MS = 7, 30
#: how close to a request's intended start the previous one may end for either count of late starts to pass (ns)
LATE_SLACK_NS = 100_000


def open_loop(s: Suite) -> Iterator[Outcome]:
    """--rate R --requests N: every worker on its schedule, uniform and Poisson, late starts counted as the
    contract says; --rate with --duration D: it stops by itself. The open loop came with raw/2 (its outcomes are of
    raw/2's rules, or raw/3's where a check says so)."""
    for outcome in _open_loop(s):
        yield outcome if outcome.since >= 2 else dataclasses.replace(outcome, since=2)


def _open_loop(s: Suite) -> Iterator[Outcome]:
    w, n, rate = _workers(s.spec, 2), 4, 200.0
    name = f"open loop: --rate {rate:g} --requests {n}"
    uniform = Workload(workers=2, requests=n, warmup=0, timeout_s=10, rate=rate)
    run, lines = s.run_logged(s.bed.http.url + "/", uniform)
    refused = _refused(name, run, lines)
    poisson_name = f"open loop: --arrival poisson --seed {POISSON_SEED}"
    names = (poisson_name, LATE_CHECK, f"open loop: --duration {OPEN_DURATION_S:g}")
    if refused is not None:
        yield refused
        yield from (Outcome(other, refused.status, "no open loop") for other in names)
        return
    yield _document(name, run) or _on_schedule(name, run, w, uniform) or _ok(name, run, HELLO)
    on_time = run
    poisson = uniform.replace(arrival="poisson", seed=POISSON_SEED)
    run = s.run(s.bed.http.url + "/", poisson)
    yield _document(poisson_name, run) or _on_schedule(poisson_name, run, w, poisson) or _ok(poisson_name, run, HELLO)
    # a request of each worker every 20 ms, each taking 30: all but a worker's first start late; and none of
    # the uniform run's, whose requests end long before the next is due (its wake-ups come after I, not late)
    delayed = s.run(f"{s.bed.http.url}/delay/{LATE_DELAY_MS}", uniform.replace(rate=100.0))
    yield _document(LATE_CHECK, on_time) or _document(LATE_CHECK, delayed) or _late_starts(on_time, delayed)
    yield _duration(s, w)


LATE_CHECK = "open loop: late starts"


def _duration(s: Suite, w: int) -> Outcome:
    duration = OPEN_DURATION_S
    name = f"open loop: --duration {duration:g}"
    run = s.run(s.bed.http.url + "/", Workload(2, 1, 0, 5, rate=40.0, duration_s=duration))
    bad = _document(name, run)
    if bad is not None:
        return bad
    assert run.raw is not None
    wrong = []
    for i, worker in enumerate(run.raw["workers"]):
        due = sum(1 for k in range(1000) if (i + k * w) / 40.0 < duration)
        if worker["count"] + worker["missed"] != due:
            wrong.append(f"worker {i} sent {worker['count']} and missed {worker['missed']} of {due} due")
    if wrong:
        return Outcome(name, FAIL, "; ".join(wrong[:2]))
    if run.raw["wall_ns"] > (duration + 5) * 1e9:
        return Outcome(name, FAIL, f"ran {run.raw['wall_ns'] / 1e9:.2f} s: past D plus one timeout")
    return _ok(name, run, HELLO)


def _on_schedule(name: str, run: DriverRun, w: int, asked: Workload) -> Outcome | None:
    """The document says the open loop asked for (its seed only for Poisson arrivals, the one schedule that draws
    from it); every worker's intended starts are the contract's (to the µs), none started early."""
    from ..harness.schedule import intended_ns

    assert run.raw is not None and asked.rate is not None
    wl, rate = run.raw["workload"], asked.rate
    seed = asked.seed if asked.arrival == "poisson" else None
    said = (wl.get("loop"), wl.get("rate"), wl.get("arrival"), wl.get("seed"))
    if said != ("open", rate, asked.arrival, seed):
        # raw/2 wrote the seed of every open loop; raw/3 of a Poisson one only (the one schedule that draws)
        seed_only = said[:3] == ("open", rate, asked.arrival) and said[3] == asked.seed
        return Outcome(
            name,
            FAIL,
            f"loop, rate, arrival, seed: the document says {said}, expected {('open', rate, asked.arrival, seed)}",
            3 if seed_only else 2,
        )
    for i, worker in enumerate(run.raw["workers"]):
        intended = worker.get("intended_ns", [])
        due = intended_ns(i, w, rate, asked.arrival, asked.seed)
        if any(not math.isclose(a, b, abs_tol=1000) for a, b in zip(intended, due, strict=False)):
            return Outcome(
                name,
                FAIL,
                f"worker {i}'s intended starts {intended[:3]} are not the contract's {asked.arrival} schedule",
                3 if asked.arrival == "poisson" else 2,  # raw/2 named no generator; raw/3 is SplitMix64's draw
            )
        if any(st < it for st, it in zip(worker.get("start_ns", []), intended, strict=False)):
            return Outcome(name, FAIL, f"worker {i} started a request before its intended time", 2)
    return None


def _late_starts(*runs: DriverRun) -> Outcome:
    """`late` counts the requests k >= 1 whose previous one ended (start + service time) after I(w, k); requests
    that end within LATE_SLACK_NS of it may count either way."""
    counted = []
    for run in runs:
        outcome = _late_of(run)
        if outcome is not None:
            return outcome
        assert run.raw is not None
        counted.append([w["late"] for w in run.raw["workers"]])
    return Outcome(LATE_CHECK, PASS, f"late starts per worker {' and '.join(map(str, counted))}, as the samples say")


def _late_of(run: DriverRun) -> Outcome | None:
    assert run.raw is not None
    for i, w in enumerate(run.raw["workers"]):
        ends = [st + lat for st, lat in zip(w["start_ns"], w["latencies_ns"], strict=True)]
        gaps = [end - due for end, due in zip(ends, w["intended_ns"][1:], strict=False)]
        surely, maybe = sum(g > LATE_SLACK_NS for g in gaps), sum(g > -LATE_SLACK_NS for g in gaps)
        if not surely <= w["late"] <= maybe:
            return Outcome(
                LATE_CHECK,
                FAIL,
                f"worker {i} counts {w['late']} late starts, its samples {surely}: late "
                "is a request whose previous one ended after its intended start",
            )
    if run.stats is not None and run.stats.errors:
        reasons = sorted({f["reason"] for f in _failures(run)})
        return Outcome(LATE_CHECK, FAIL, f"{run.stats.errors} requests failed: {reasons[0][:160]}")
    return None
