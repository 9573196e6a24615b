"""What machine and software produced a run: recorded in every results.json."""

from __future__ import annotations

import os
import platform
import re
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from .binaries import checkout, native_version

PY_PACKAGES = (
    "numpy",
    "requests",
    "aiohttp",
    "beast-client",
    "reqwest-client",
    "matplotlib",
    "rich",
    "httpx",
    "urllib3",
    "pycurl",
    "uvloop",
    "pyreqwest",
    "rnet",
    "curl_cffi",
    "impit",
    "primp",
    "ry",
    "httpr",
    "aiosonic",
    "gevent",
    "geventhttpclient",
    "httpx-aiohttp",
    "rloop",
    "clientbench",
    "clientbench-native",
)


def _run(*cmd: str, cwd: Path | None = None) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if out.returncode == 0 and text else None


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _os_release() -> str | None:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return None
    m = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.M)
    return m.group(1) if m else None


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PY_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _cmake_cache(root: Path) -> dict[str, str]:
    flags = {}
    try:
        for line in (root / "build" / "cpp-beast" / "CMakeCache.txt").read_text().splitlines():
            key = line.split(":", 1)[0]
            if key in (
                "CMAKE_BUILD_TYPE",
                "CMAKE_CXX_COMPILER",
                "CMAKE_CXX_FLAGS",
                "CMAKE_CXX_FLAGS_RELEASE",
                "Boost_DIR",
                "Boost_INCLUDE_DIR",
            ):
                flags[key] = line.split("=", 1)[1] if "=" in line else ""
    except OSError:
        pass
    return flags


#: the kernel's UDP counters of a datagram it dropped on receipt (/proc/net/snmp): a full socket buffer, or worse
UDP_ERRORS = ("InErrors", "RcvbufErrors")


def udp_counters() -> dict[str, int] | None:
    """The kernel's UDP receive errors since boot, machine-wide (None where /proc/net/snmp cannot be read)."""
    try:
        lines = [ln.split() for ln in Path("/proc/net/snmp").read_text().splitlines() if ln.startswith("Udp:")]
        names, values = lines[0][1:], [int(v) for v in lines[1][1:]]
    except (OSError, IndexError, ValueError):
        return None
    counts = dict(zip(names, values, strict=False))
    return {k: counts[k] for k in UDP_ERRORS if k in counts}


def capture(argv: list[str]) -> dict[str, Any]:
    """A snapshot of the machine, toolchains, libraries and the exact command line."""
    root = checkout()
    git = {}
    if root is not None:
        git = {
            "commit": _run("git", "rev-parse", "HEAD", cwd=root),
            "dirty": bool(_run("git", "status", "--porcelain", "--untracked-files=no", cwd=root)),
        }
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "command": " ".join(shlex.quote(a) for a in argv),
        "cpu": {"model": _cpu_model(), "logical_cores": os.cpu_count(), "usable_cores": affinity},
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
        if hasattr(os, "sysconf")
        else None,
        "os": _os_release(),
        "kernel": platform.release(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "toolchains": {
            "g++": _run("g++", "--version"),
            "cmake": _run("cmake", "--version"),
            "rustc": _run("rustc", "--version"),
            "cargo": _run("cargo", "--version"),
        },
        "python_packages": _versions(),
        # where the native executables came from: this checkout's builds, or the clientbench-native wheel
        "build": {
            "cpp": _cmake_cache(root) if root else {},
            "rust_profile": "release",
            "native": f"checkout {root}" if root else f"clientbench-native {native_version()}",
        },
        "git": git,
    }
