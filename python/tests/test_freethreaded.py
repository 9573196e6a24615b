"""The runner's Python rows on the free-threaded interpreter of `make freethreaded`: every row runs there with
the GIL off after importing its client (a C extension without free-threading support would re-enable it). The
bindings' own behaviour there is tested in bindings/tests/test_freethreaded.py.

`make test` builds the interpreters first; where the CPython source cannot be fetched, `make freethreaded`
records why in build/cpython/unavailable and these tests skip with that reason."""

from __future__ import annotations

import pytest
from clientbench.execution.driver_process import run_driver
from clientbench.model import RunStatus
from clientbench.registry.shipped import CLIENTS
from clientbench.workload import Workload
from support.freethreaded import interpreters, needs, unavailable

if why := unavailable():
    pytest.skip(why, allow_module_level=True)
FT, _ = interpreters()

ROWS = [
    "py-requests",
    "py-aiohttp",
    "py-httpx-sync",
    "py-urllib3",
    "py-pycurl",
    "py-beast-held",
    "py-beast-released",
    "py-reqwest-held",
    "py-reqwest-released",
    "py-reqwest-async",
]


@pytest.mark.parametrize("name", ROWS)
def test_rows_run_with_the_gil_off(name, server):
    spec = next(s for s in CLIENTS if s.name == name).under(FT)
    assert spec.needs_module
    needs(FT, spec.needs_module)
    run = run_driver(spec, server.url + "/", Workload(4, 20, 2, 10), row_timeout_s=120, expected_body_bytes=13)
    assert run.status is RunStatus.OK, run.reason
    python = run.raw["client"]["python"]
    assert python["free_threaded"] is True
    # after importing the client and running: a C extension without free-threading support re-enables it
    assert python["gil_enabled"] is False, python["extensions"]
