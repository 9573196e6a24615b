"""The workload's flags, resolved once into a `Workload` (workload.py, whose own checks are the limits the drivers
keep): explicit values win, else --reference's method, else the defaults; the rules between the workload's flags;
and the points of a sweep (--values, --rates), each checked against the workload it makes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..dimensions import DIMENSIONS, Dimension
from ..errors import SetupError
from ..workload import DEFAULT, OPEN, REFERENCE, SWEEP_RATE, UPLOAD_PATH, Workload, WorkloadError, number


def resolve(options: Mapping[str, Any], *, reference: bool = False, open_base: Workload | None = None) -> Workload:
    """The workload from command-line values: a value given (not None) wins, else --reference's method
    (when asked for), else the defaults: `open_base` for a command that runs open loops of its own (sweep
    rate), OPEN when a --rate is given, DEFAULT otherwise. Raises WorkloadError naming the flag for
    combinations that cannot run."""
    given = {f.name: options[f.name] for f in dataclasses.fields(Workload) if options.get(f.name) is not None}
    if given.get("client_scope") == "per-request":  # a client per request is what --connection new makes
        if given.get("connection", "new") != "new":
            raise WorkloadError(
                "--client-scope per-request makes a new connection for every request: not with --connection keep-alive"
            )
        given["client_scope"], given["connection"] = "per-worker", "new"
    is_open = open_base is not None or "rate" in given
    if "duration_s" in given and "requests" in given:
        raise WorkloadError("--duration and --requests exclude each other: an open loop lasts a time or a count")
    if "duration_s" in given and not is_open:
        raise WorkloadError("--duration goes with --rate (an open loop); a closed loop sends --requests")
    if reference and is_open:
        raise WorkloadError("--reference is the closed-loop reference method: it does not go with --rate")
    base = REFERENCE if reference else open_base or (OPEN if is_open else DEFAULT)
    if "requests" in given:  # an open loop of N requests per worker
        base = base.replace(duration_s=None)
    if given.get("upload") == "stream" and "method" not in given and "targets" not in given:
        given["method"] = "POST"  # a streamed upload needs a body to stream
    if given.get("method", "GET") != "GET" and "path" not in given:
        given["path"] = UPLOAD_PATH
    return dataclasses.replace(base, **given)


def command_workload(
    command: str, given: Mapping[str, Any], *, reference: bool = False, own_rates: bool = False
) -> Workload:
    """The workload of `command`, resolved once (resolve): explicit flags, else --reference's method, else the
    defaults (an open loop's with --rate; `own_rates`: a command that runs open loops at rates of its own, sweep
    rate or the GIL report's open-loop phase, whose defaults are SWEEP_RATE's)."""
    if given.get("rate") is not None and own_rates:
        raise SetupError(f"--rate: {command} runs its own rates (--rates)")
    try:
        return resolve(given, reference=reference, open_base=SWEEP_RATE if own_rates and command == "sweep" else None)
    except WorkloadError as exc:
        raise SetupError(str(exc)) from None


def sweep_points(dim: Dimension, values: str | None, rates: str | None, base: Workload) -> list[Any]:
    """The points of `sweep DIM`: --values (or `--rates`, sweep rate's name for them), else the defaults; each point
    checked against the workload it makes (e.g. a rate too fine for the workers)."""
    if rates is not None and not dim.ladder:
        raise SetupError("--rates goes with `sweep rate` (other dimensions take --values)")
    if rates is not None and values is not None:
        raise SetupError("--rates and --values: give the rates once")
    flag = "--rates" if rates is not None else "--values"
    points = dim.points(rates if rates is not None else values, flag)
    for value in points:
        try:
            dim.workload(base, value)
        except WorkloadError as exc:
            raise SetupError(f"{flag} {number(value) if isinstance(value, float) else value}: {exc}") from None
    return points


def rate_points(text: str | None, base: Workload) -> list[float]:
    """The GIL report's open-loop phase: `--rates` (or the default ladder), as for `sweep rate`."""
    return sweep_points(DIMENSIONS["rate"], None, text, base)


def sweep_target(dim: Dimension, target: str | None) -> None:
    """A dimension whose points start servers of their own (sweep tls) cannot measure a --target."""
    if dim.own_servers and target:
        raise SetupError(f"sweep {dim.name} starts servers of its own: drop --target")
