"""The settings of the commands that take more than a workload and a testbed (soak, cost, profile), and the rules
between the flags of the others (serve's TLS, report's files, compare's gate): each a SetupError line naming the
flags."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SetupError
from .values import number


@dataclass(frozen=True)
class SoakSettings:
    """`clientbench soak`: requests per target, each target's time bound and its RSS limit."""

    requests: int = 1_000_000
    workers: int = 10
    warmup: int = 50_000  # requests before the warm RSS sample
    max_seconds: float = 600.0  # time bound per target
    max_rss_growth_mib: float = 20.0

    def __post_init__(self) -> None:
        # the growth is measured from the warm sample: it must be taken before the last request
        if self.warmup >= self.requests:
            raise SetupError(
                f"--warmup {self.warmup} must be below --requests {self.requests} (the warm RSS is sampled after it)"
            )

    @classmethod
    def checked(
        cls, *, requests: int, workers: int, warmup: int | None, max_seconds: float, max_rss_growth_mib: float
    ) -> SoakSettings:
        """Without --warmup: the default, or half of --requests when that is fewer."""
        warm = min(cls.warmup, requests // 2) if warmup is None else warmup
        return cls(requests, workers, warm, max_seconds, max_rss_growth_mib)


#: what `clientbench cost` counts
MEASURES = ("instructions", "syscalls", "allocations")
#: the runner's environment variables that change what a Python driver does per request, unset for every cost
#: measurement: e.g. with PYTHONUNBUFFERED every piece of the raw document is a write() of its own
UNSET = ("PYTHONUNBUFFERED", "PYTHONMALLOC", "PYTHONDEVMODE", "PYTHONTRACEMALLOC", "PYTHONASYNCIODEBUG")


@dataclass(frozen=True)
class CostSettings:
    """`clientbench cost`: the two request counts whose difference is one request's cost, and what to count."""

    requests: int = 2000  # N
    baseline: int = 200  # M
    path: str = "/"
    measures: tuple[str, ...] = MEASURES
    #: the drivers record each request's phases (--phases): what recording them costs
    phases: bool = False

    def __post_init__(self) -> None:
        if self.baseline >= self.requests:
            raise SetupError(
                f"--baseline {self.baseline} must be below --requests {self.requests} "
                "(the cost of a request is the difference between the two runs)"
            )
        unknown = [m for m in self.measures if m not in MEASURES]
        if unknown or not self.measures:
            raise SetupError(
                f"--measure: unknown {', '.join(map(repr, unknown)) or 'empty list'}; choose from {', '.join(MEASURES)}"
            )

    @staticmethod
    def parse_measures(text: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))


#: `clientbench profile --profiler`: auto is py-spy for the Python rows, perf for the others
PROFILERS = ("auto", "py-spy", "perf")
#: samples per second by default: py-spy stops the process for each sample (--native unwinds it), so fewer
DEFAULT_HZ = {"py-spy": 199, "perf": 2999}
MAX_HZ = 100_000  # perf's own ceiling (kernel.perf_event_max_sample_rate) by default
rate_hz = number(int, "a whole number of samples per second", strict=True, maximum=MAX_HZ)


@dataclass(frozen=True)
class ProfileSettings:
    """`clientbench profile`: how many requests each row's driver sends, and how its profiler samples them."""

    requests: int = 10_000  # per worker
    workers: int = 1
    path: str = "/"
    rate_hz: int | None = None  # None: each profiler's default
    profiler: str = "auto"  # or py-spy / perf for every row

    def tool(self, is_python: bool) -> str:
        """The profiler of a row (a Python row or another)."""
        if self.profiler != "auto":
            return self.profiler
        return "py-spy" if is_python else "perf"

    def rate(self, tool: str) -> int:
        return self.rate_hz or DEFAULT_HZ[tool]


def check_serve_tls(
    *,
    tls: bool,
    tls_version: str | None,
    tls_dir: Path | None,
    tls_names: Sequence[str],
    tls_cert: Path | None,
    tls_key: Path | None,
) -> None:
    """`clientbench serve`'s HTTPS flags together."""
    if (tls_cert is None) != (tls_key is None):
        raise SetupError("--tls-cert and --tls-key go together")
    if not tls and (tls_version or tls_dir or tls_names or tls_cert):
        raise SetupError("--tls-version, --tls-dir, --tls-name and --tls-cert go with --tls")
    if tls_cert is not None and (tls_dir or tls_names):
        raise SetupError("--tls-cert serves your certificate: --tls-dir and --tls-name are for the generated one")
    for given in (tls_cert, tls_key):
        if given is not None and not given.is_file():
            raise SetupError(f"{given}: no such file")


def report_file(results: Path, compare: Path | None, out: Path | None, default: Path) -> Path:
    """`clientbench report`: the folders read exist, and the page goes to a file in an existing folder (`-o`, else
    `default`)."""
    for given in (results, compare):
        if given is not None and not given.exists():
            raise SetupError(f"no such folder: {given}")
    target = out if out is not None else default
    if target.is_dir():
        raise SetupError(f"-o {target} is a folder: give the HTML file to write")
    if not target.parent.is_dir():
        raise SetupError(f"cannot write {target}: no folder {target.parent}")
    return target


def check_gate(thresholds: Sequence[Any], patterns: Sequence[str]) -> None:
    """`clientbench compare`: --rows chooses the rows the gate (--fail-on) judges."""
    if patterns and not thresholds:
        raise SetupError("--rows chooses the rows the gate judges: it goes with --fail-on")
