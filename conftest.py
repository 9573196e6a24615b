"""Registers the fixtures every test suite shares, from python/tests/support (importable as `support` through
pytest.ini's `pythonpath`): `server`, `tls_server`, `http_app`, `closed_port_url`, `raw_server`,
`dual_server` (support/fixtures.py) and the toxiproxy ones, `toxiproxy`, `proxied`, `axum`, `started_pids`
(support/toxiproxy.py).

Strict mode: under CI (CI=true) or with CLIENTBENCH_STRICT=1, a skip is a failure. Every skip in these suites
says that something the tests need is missing here (a tool, an interpreter, a peer library: `make test` sets
them all up), so where everything must be there, a skipped test would be a test that silently did not run.
The hooks below turn each skip, however it was raised (pytest.skip() in a test or a fixture, a skipif mark,
pytest.importorskip, or a test module's own pytest.skip(..., allow_module_level=True)) into a failure that
says what is missing. On a developer's machine the skips stay skips, with their reasons (-rs).

Order: the tests marked `long(seconds)` (a build, every row, every check) are spread over the first half of the
run, longest first. pytest-xdist hands out consecutive tests in chunks, so a long test collected near the end ran
on one worker after the others had finished (the bindings suite: 159 s for 97 s of tests per worker, the sdist
build last), and long tests collected side by side would land on one worker together."""

from __future__ import annotations

import itertools
import os
from collections.abc import Generator
from typing import Any

import pytest

pytest_plugins = ("support.fixtures", "support.toxiproxy")

STRICT = os.environ.get("CI") == "true" or os.environ.get("CLIENTBENCH_STRICT") == "1"
WHY = "strict mode (CI=true or CLIENTBENCH_STRICT=1): a test may not skip, and this one would have: "


#: The modules `make check` (the two-minute loop: `-m "not slow"`) leaves out as a whole: each runs every row's
#: driver, builds wheels or installs packages, or needs what only `make test` sets up (a browser, the free-threaded
#: CPython, toxiproxy, nginx, Hypercorn over QUIC, valgrind, perf, hyperfine, the Go and Node.js examples).
#: A single slow test elsewhere (a whole `clientbench run`, sweep or gil end to end) carries @pytest.mark.slow.
SLOW_MODULES = frozenset(
    {
        # python/tests
        "test_bench_gate.py", "test_check_driver.py", "test_client_scope.py", "test_cold.py", "test_connections.py",
        "test_cost.py", "test_drivers.py", "test_examples.py", "test_freethreaded.py", "test_html_browser.py",
        "test_http3_rows.py", "test_installed.py", "test_network_faults.py", "test_outside_protocols.py",
        "test_outside_quic.py", "test_pin.py", "test_profile.py", "test_setup.py", "test_stdlib_server.py",
        "test_tls.py", "test_two_hosts.py", "test_udp_relay.py",
        # bindings/tests (their own test_freethreaded.py and test_network_faults.py are named above)
        "test_fuzz.py", "test_nginx.py", "test_wheels.py", "test_wheels_aarch64.py",
    }
)  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "long(seconds): runs for tens of seconds; conftest.py spreads these early")
    config.addinivalue_line("markers", "slow: left out of `make check` (the fast loop); `make test` runs it")


@pytest.hookimpl(tryfirst=True)  # before pytest's own, which deselects by -m
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_MODULES or item.get_closest_marker("long"):
            item.add_marker(pytest.mark.slow)

    def seconds(item: pytest.Item) -> float:
        marker = item.get_closest_marker("long")
        return float(marker.args[0]) if marker and marker.args else 0.0

    long = sorted((item for item in items if seconds(item)), key=seconds, reverse=True)
    if not long:
        return
    rest = iter([item for item in items if not seconds(item)])
    spacing = max(1, len(items) // 2 // len(long))
    ordered: list[pytest.Item] = []
    for item in long:
        ordered.append(item)
        ordered.extend(itertools.islice(rest, spacing - 1))
    items[:] = [*ordered, *rest]


def _reason(longrepr: Any) -> str:
    """The reason of a skip report: pytest keeps it as (path, line, "Skipped: reason")."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if STRICT and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = WHY + _reason(report.longrepr)
    return report


class ModuleSkipped(pytest.Item):
    """Stands for a test module that skipped itself at import: under strict mode, one failing test in its place
    (not a collection error, which would stop the whole run before any test)."""

    def __init__(self, *, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        pytest.fail(WHY + self.reason, pytrace=False)

    def reportinfo(self) -> tuple[str, int, str]:
        return str(self.path), 0, f"{self.path.name}: the whole module"


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    report = yield
    if STRICT and report.skipped and isinstance(collector, pytest.Module):
        report.outcome = "passed"
        report.result = [ModuleSkipped.from_parent(collector, name="module_skipped", reason=_reason(report.longrepr))]
        report.longrepr = None
    return report
