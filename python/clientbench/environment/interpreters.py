"""Other Python interpreters for the Python rows (`--interpreters system,3.13,3.13t`, `--python PATH`).

`make freethreaded` builds a default and a free-threaded CPython from one source and writes their venvs'
pythons to build/cpython/interpreters.json ({"3.13": ".../bin/python", "3.13t": ...}); a label from there, a
path to a python, or `system` (the runner's own interpreter) names an interpreter. A Python row then runs
once per interpreter, its name suffixed `@<label>` (py-requests@3.13t), with the runner's own `clientbench`
package on PYTHONPATH, alone (its drivers, harness and probes need nothing but the standard library and their
client; the runner's site-packages, built for its own Python, must not leak into another).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import SetupError
from .binaries import checkout


@dataclass(frozen=True)
class Interpreter:
    label: str  # "3.13t": version, and t for a free-threaded build
    executable: str

    def env(self) -> dict[str, str]:
        """What a driver process needs on top of the runner's environment."""
        path = str(package_path())
        old = os.environ.get("PYTHONPATH")
        return {"PYTHONPATH": f"{path}{os.pathsep}{old}" if old else path}


@cache
def package_path() -> Path:
    """A folder that holds the runner's `clientbench` package and nothing else: a checkout's python/, or a
    temporary folder with a link to the installed package (removed when the runner exits)."""
    package = Path(__file__).resolve().parents[1]
    root = checkout()
    if root is not None and package.parent == root / "python":
        return package.parent
    folder = Path(tempfile.mkdtemp(prefix="clientbench-pythonpath-"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "clientbench").symlink_to(package, target_is_directory=True)
    return folder


def known() -> dict[str, str]:
    """label -> python of the interpreters `make freethreaded` built in the checkout (none for an installed
    runner, or before it has run)."""
    root = checkout()
    if root is None:
        return {}
    file = root / "build" / "cpython" / "interpreters.json"
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, dict) else {}


@cache
def probe(executable: str) -> str:
    """The label of a python: its major.minor, plus t when it is a free-threaded build."""
    code = (
        "import sys, sysconfig; v = sys.version_info; "
        "print(f'{v[0]}.{v[1]}' + ('t' if sysconfig.get_config_var('Py_GIL_DISABLED') else ''))"
    )
    try:
        out = subprocess.run([executable, "-c", code], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SetupError(f"cannot run {executable}: {exc}") from None
    if out.returncode != 0 or not out.stdout.strip():
        raise SetupError(f"{executable} is not a working python: {out.stderr.strip()[-200:]}")
    return out.stdout.strip()


@cache
def has_module(executable: str, module: str) -> bool:
    code = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)"
    try:
        return subprocess.run([executable, "-c", code, module], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def resolve(items: list[str]) -> list[Interpreter | None]:
    """None stands for `system` (the runner's own interpreter, rows keep their names)."""
    table = known()
    out: list[Interpreter | None] = []
    for item in items:
        if item == "system":
            out.append(None)
        elif item in table:
            out.append(Interpreter(item, table[item]))
        elif os.sep in item or Path(item).exists():
            path = Path(item).expanduser()
            if not (path.is_file() and os.access(path, os.X_OK)):
                raise SetupError(f"--interpreters/--python {item}: not an executable file")
            out.append(Interpreter(probe(str(path)), str(path)))
        else:
            built = ", ".join(table) or "none yet: run `make freethreaded`"
            raise SetupError(f"unknown interpreter {item!r}; use system, a path, or one built here ({built})")
    labels = [i.label if i else "system" for i in out]
    if len(set(labels)) != len(labels):
        raise SetupError(f"--interpreters names the same interpreter twice: {', '.join(labels)}")
    if any(i is not None and i.executable == sys.executable for i in out):
        raise SetupError("that is the runner's own interpreter: call it `system`")
    return out
