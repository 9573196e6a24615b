"""The two interpreters `make freethreaded` builds from one CPython source (with and without the GIL), for the
tests that run the bindings (bindings/tests/test_freethreaded.py) and the runner's Python rows
(python/tests/test_freethreaded.py) on them."""

from __future__ import annotations

import json
import subprocess
import textwrap
from typing import Any

import pytest
from clientbench.environment.binaries import repo_root
from clientbench.environment.interpreters import Interpreter, has_module, known

UNAVAILABLE = repo_root() / "build" / "cpython" / "unavailable"


def unavailable() -> str | None:
    """Why no free-threaded interpreter is there to test (a test module skips with it), or None: the reason
    `make freethreaded` recorded when the CPython source could not be fetched, else how to build it (`make
    test` does)."""
    if UNAVAILABLE.exists():
        return f"free-threaded CPython: {UNAVAILABLE.read_text().strip()}"
    if not {label for label in known() if label.endswith("t")}:
        return "no free-threaded interpreter built: run `make freethreaded`"
    return None


def interpreters() -> tuple[Interpreter, Interpreter | None]:
    """(the free-threaded interpreter, the GIL one or None); call it when unavailable() is None."""
    built = known()
    ft = next(Interpreter(k, v) for k, v in built.items() if k.endswith("t"))
    gil = next((Interpreter(k, v) for k, v in built.items() if not k.endswith("t")), None)
    return ft, gil


def run_python(interp: Interpreter, code: str, timeout: float = 120) -> Any:
    """Run code under interp (clientbench on its path); it prints one JSON line, returned parsed."""
    done = subprocess.run(
        [interp.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**interp.env(), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def needs(interp: Interpreter, module: str) -> None:
    """Fail (not skip) when `module` is missing from interp: `make freethreaded` installs every one used here."""
    if not has_module(interp.executable, module):
        pytest.fail(f"{module} is not installed in {interp.executable}: `make freethreaded` installs it")
