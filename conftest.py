"""Registers the fixtures every test suite shares, from python/tests/support (importable as `support` through
pytest.ini's `pythonpath`): `server`, `tls_server`, `http_app`, `closed_port_url`, `raw_server`,
`dual_server` (support/fixtures.py) and the toxiproxy ones, `toxiproxy`, `proxied`, `axum`, `started_pids`
(support/toxiproxy.py).

Strict mode: under CI (CI=true) or with CLIENTBENCH_STRICT=1, a skip is a failure. Every skip in these suites
says that something the tests need is missing here (a tool, an interpreter, a peer library: `make test` sets
them all up), so where everything must be there, a skipped test would be a test that silently did not run.
The hooks below turn each skip, however it was raised (pytest.skip() in a test or a fixture, a skipif mark,
pytest.importorskip, or a test module's own pytest.skip(..., allow_module_level=True)) into a failure that
says what is missing. On a developer's machine the skips stay skips, with their reasons (-rs)."""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

pytest_plugins = ("support.fixtures", "support.toxiproxy")

STRICT = os.environ.get("CI") == "true" or os.environ.get("CLIENTBENCH_STRICT") == "1"
WHY = "strict mode (CI=true or CLIENTBENCH_STRICT=1): a test may not skip, and this one would have: "


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
