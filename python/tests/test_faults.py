"""The fault catalogue for the native drivers (cpp-beast, rust-reqwest, rust-reqwest-sync): every request a
counted failure whose reason starts with the failure class the harnesses share, exit status 0 and a valid
document, never a crash; the valid variants (chunked, empty, Connection: close, an idle close) succeed.

The bindings meet the same catalogue in bindings/tests/test_faults.py."""

from __future__ import annotations

import pytest
from clientbench.execution.driver_process import run_driver
from clientbench.model import RunStatus
from clientbench.options.rows import RowFlags, select
from clientbench.registry.shipped import CLIENTS
from clientbench.workload import Workload
from support import rawserver as rs

TIMEOUT = 1.0

NATIVE = select(RowFlags(("cpp-beast", "rust-reqwest", "rust-reqwest-sync")), CLIENTS)


@pytest.mark.parametrize("spec", NATIVE, ids=[s.name for s in NATIVE])
@pytest.mark.parametrize(
    "handler, expect",
    [
        (rs.never_answer, "TimeoutError: "),
        (rs.close_after_accept, "ConnectionError: "),
        (rs.close_mid_status, "ConnectionError: "),
        (rs.close_mid_body, "ConnectionError: "),  # a short body is a ConnectionError (docs/raw-format.md)
        (rs.garbage_status, "ProtocolError: "),
        (rs.huge_headers, "ProtocolError: "),
        (rs.status_500, "status 500"),
    ],
    ids=lambda v: v.rstrip(": ") if isinstance(v, str) else v.__name__,
)
def test_native_driver_counts_faults(spec, raw_server, handler, expect):
    """Every request a counted failure, its reason in the failure class shared by the harnesses."""
    srv = raw_server(handler)
    run = run_driver(spec, srv.url + "/", Workload(2, 2, 0, TIMEOUT), row_timeout_s=60)
    assert run.returncode == 0 and not run.crashed, run.reason  # exit 0 and a valid document
    assert run.status is RunStatus.FAILED
    assert run.stats.errors == run.stats.requests == 4
    reasons = [f["reason"] for w in run.raw["workers"] for f in w["failures"]]
    assert len(reasons) == 4
    if expect == "status 500":
        assert reasons == ["status 500"] * 4
    else:
        assert all(r.startswith(expect) and r[len(expect) :].strip() for r in reasons), reasons


@pytest.mark.parametrize("spec", NATIVE, ids=[s.name for s in NATIVE])
@pytest.mark.parametrize(
    "handler, body",
    [(rs.chunked, rs.CHUNKED_BODY), (rs.empty_body, b""), (rs.connection_close, rs.HELLO), (rs.close_idle, rs.HELLO)],
    ids=lambda v: getattr(v, "__name__", "body"),
)
def test_native_driver_handles_valid_variants(spec, raw_server, handler, body):
    srv = raw_server(handler)
    run = run_driver(spec, srv.url + "/", Workload(1, 3, 0, TIMEOUT), row_timeout_s=60, expected_body_bytes=len(body))
    assert run.status is RunStatus.OK, run.reason


@pytest.mark.parametrize("spec", NATIVE, ids=[s.name for s in NATIVE])
@pytest.mark.parametrize("url", ["not a url", "https://127.0.0.1:1/", "http://127.0.0.1:99999/"])
def test_native_driver_bad_url(spec, url):
    run = run_driver(spec, url, Workload(1, 2, 0, TIMEOUT), row_timeout_s=60)
    # the URL refused when it is parsed (exit status 2, no document) or each request a counted failure
    assert (run.crashed and run.returncode == 2) or (run.stats is not None and run.stats.errors == 2), run.reason
