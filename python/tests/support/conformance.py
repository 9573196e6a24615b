"""Which shipped rows test_check_driver.py puts through the whole conformance suite (check-driver): the tests in
test_drivers.py that the suite repeats run only for the rows it leaves out."""

from __future__ import annotations

import importlib.util

from clientbench.registry.spec import ClientSpec

#: A peer's loop variants (-uvloop, -rloop) run its plugin on another event loop: here two of them stand for the
#: rest (each row still meets the contract in test_drivers.py, and runs in run-all; our bindings' all run here)
LOOP_SAMPLES = {"py-httpx-uvloop", "py-pyreqwest-rloop"}


def installed(spec: ClientSpec) -> bool:
    return not spec.client.optional or importlib.util.find_spec(spec.needs_module or "") is not None


def checked(spec: ClientSpec) -> bool:
    """test_check_driver.py runs every check of check-driver against this row (when installed)."""
    peer_loop = spec.client.optional and spec.name.endswith(("-uvloop", "-rloop"))
    return not peer_loop or spec.name in LOOP_SAMPLES
