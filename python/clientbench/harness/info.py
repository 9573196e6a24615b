"""What a driver says about itself next to its measurements: library versions, the interpreter, its peak
memory; and printing the document."""

from __future__ import annotations

import gc
import json
import os
import sys
import sysconfig
from typing import Any


def version(distribution: str) -> str | None:
    """An installed package's version (not every library exports a typed `__version__`)."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def peak_rss_kib() -> int | None:
    """Peak resident set of this process image (VmHWM: reset at exec, unlike getrusage's ru_maxrss, which
    also counts the forked parent's pages before exec)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def interpreter() -> dict[str, Any]:
    """The interpreter the driver ran on, as measured at the end of the run: free-threaded build or not,
    whether the GIL was enabled at run time (a C extension without free-threading support re-enables it when
    imported), and which client packages ran with compiled extension modules (the others ran pure Python)."""
    extensions: dict[str, list[str]] = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        # The module's own name, not its sys.modules key: requests.packages.* are aliases of other packages.
        real = getattr(module, "__name__", None) or name
        top = real.split(".", 1)[0]
        if file.endswith((".so", ".pyd")) and top not in sys.stdlib_module_names:
            extensions.setdefault(top, []).append(real)
    is_gil_enabled = getattr(sys, "_is_gil_enabled", None)
    return {
        "implementation": sys.implementation.name,
        "version": ".".join(map(str, sys.version_info[:3])),
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "gil_enabled": bool(is_gil_enabled()) if is_gil_enabled is not None else True,
        "executable": sys.executable,
        "extensions": {k: sorted(set(v)) for k, v in sorted(extensions.items())},
    }


class GcCount:
    """What the garbage collector did during the timed group: its collections and the objects they freed, counted
    by gc.callbacks. The callback only adds integers, in the thread that collects; a collection that lands in a
    request is part of that request's time, as it is for an application."""

    def __init__(self) -> None:
        self.collections = 0
        self.collected = 0
        self.uncollectable = 0
        self._on = False

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if self._on and phase == "stop":
            self.collections += 1
            self.collected += int(info.get("collected", 0))
            self.uncollectable += int(info.get("uncollectable", 0))

    def start(self) -> None:
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)
        self._on = True

    def stop(self) -> dict[str, int]:
        self._on = False
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)
        return {"collections": self.collections, "collected": self.collected, "uncollectable": self.uncollectable}


def emit(doc: dict[str, Any]) -> None:
    rss = peak_rss_kib()
    if rss is not None:
        doc["peak_rss_kib"] = rss
    doc["client"]["python"] = interpreter()
    json.dump(doc, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    sys.stdout.flush()


def skip_teardown() -> None:
    """End the process once the document is out, without the interpreter's teardown: for libraries whose
    runtime crashes at interpreter exit (a bug of theirs that would fail a row whose figures are complete).
    Only drivers of other people's libraries use it, each saying which crash it avoids."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
