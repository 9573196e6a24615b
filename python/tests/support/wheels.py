"""What the wheel tests share (bindings/tests/test_wheels.py for x86-64, test_wheels_aarch64.py under qemu):
the wheels of dist/, their manylinux tags as auditwheel reads them, and the script that uses an installed
binding for an http and an https request."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import pytest
from clientbench.environment.binaries import repo_root
from clientbench.execution.server import Server
from packaging.utils import parse_wheel_filename

REPO = repo_root()
DIST = REPO / "dist"
MAX_GLIBC_MINOR = 28
#: (distribution, module) of each binding
BINDINGS = [("beast_client", "beast_client"), ("reqwest_client", "reqwest_client")]

#: run by the interpreter a wheel was installed for: imports the binding from that venv, makes an http GET, an
#: http POST echoed back, an https GET verified with the test CA, and an https GET that verify=True must reject
CHECK = r"""
import importlib, pathlib, sys
name, http_url, https_url, ca_file = sys.argv[1:]
m = importlib.import_module(name)
pkg = pathlib.Path(m.__file__).resolve().parent
assert str(pkg).startswith(str(pathlib.Path(sys.prefix).resolve())), f"{name} imported from {pkg}, not the venv"
assert (pkg / "py.typed").exists(), "py.typed missing"
assert any(pkg.glob("*.pyi")), "type stubs missing"
assert issubclass(m.ProtocolError, OSError) and issubclass(m.TLSError, ConnectionError)
with m.Client(timeout=5) as c:
    status = c.get(http_url + "/")
    echo = c.request("POST", http_url + "/echo", body=b"wheel").body.decode()
with m.Client(timeout=5, verify=ca_file) as c:
    tls_status = c.get(https_url + "/")
try:
    with m.Client(timeout=5) as c:
        c.get(https_url + "/")
    untrusted = "accepted"
except m.TLSError:
    untrusted = "rejected"
gil = "gil-on" if getattr(sys, "_is_gil_enabled", lambda: True)() else "gil-off"
print(status, echo, tls_status, untrusted, gil)
"""


def newest(pattern: str, tags: Collection[str] | None = None, label: str = "") -> Path:
    """The newest file of dist/ matching `pattern`; for wheels given `tags` (an interpreter's supported tags,
    named `label`), one that pip would install there."""
    files = list(DIST.glob(pattern))
    if tags is not None:
        files = [p for p in files if {str(t) for t in parse_wheel_filename(p.name)[3]} & set(tags)]
    if not files:
        where = f" for the {label} interpreter" if label else ""
        pytest.fail(f"no dist/{pattern}{where}: run `make wheels`")
    return max(files, key=lambda p: p.stat().st_mtime)


def manylinux_minor(platform: str, arch: str = "x86_64") -> int:
    """The glibc minor version of a manylinux_2_x tag for `arch`."""
    m = re.fullmatch(rf"manylinux_2_(\d+)_{arch}", platform)
    assert m, f"not a manylinux_2_x {arch} tag: {platform}"
    return int(m.group(1))


def auditwheel_platform(wheel: Path) -> str:
    """The platform tag `auditwheel show` finds the wheel consistent with, by the pinned auditwheel of the wheel
    scripts' tools venv in the per-user cache (`make wheels` made it)."""
    tools = subprocess.run([str(REPO / "scripts" / "wheel-tools.sh")], capture_output=True, text=True, timeout=600)
    assert tools.returncode == 0, tools.stderr
    auditwheel = Path(tools.stdout.strip()) / "bin" / "auditwheel"
    shown = subprocess.run([str(auditwheel), "show", str(wheel)], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    consistent = re.search(r'consistent with the following platform tag: "([^"]+)"', text)
    assert consistent, text
    return consistent.group(1)


def check_in_venv(
    python: Sequence[str], module: str, env: Mapping[str, str], server: Server, tls_server: Server, timeout: float = 120
) -> list[str]:
    """Runs CHECK with `python` (a command: the venv's interpreter, or an emulator and its arguments before
    it) and returns its words: status, echoed body, https status, untrusted verdict, GIL state."""
    assert tls_server.ca_file
    out = subprocess.run(
        [*python, "-c", CHECK, module, server.url, tls_server.url, tls_server.ca_file],
        capture_output=True, text=True, timeout=timeout, env=dict(env),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


#: docs/install.md's table of the distributions and their sizes
INSTALL_DOC = REPO / "docs" / "install.md"
#: how far a wheel of dist/ may be from the size the docs give (a dependency's update moves it a little)
SIZE_TOLERANCE = 0.25


def documented_sizes() -> dict[tuple[str, str], float]:
    """docs/install.md's sizes in MB, by (distribution as the wheel's file name spells it, the platform tag or
    "any"), e.g. ("clientbench_native", "manylinux_2_28_x86_64")."""
    sizes: dict[tuple[str, str], float] = {}
    for line in INSTALL_DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        found = re.fullmatch(r"`([a-z-]+)` \((.*)\)", cells[0]) if len(cells) == 3 else None
        if found:
            platform = next((t for t in re.findall(r"`([^`]+)`", found[2]) if t.startswith("manylinux")), "any")
            sizes[(found[1].replace("-", "_"), platform)] = float(cells[2])
    return sizes


def check_documented_sizes(arch: str | None) -> list[str]:
    """The wheels of dist/ for `arch` (and the pure ones with None) against docs/install.md: one line per wheel
    whose size is off by more than SIZE_TOLERANCE (or that the docs do not list)."""
    wanted = {k: v for k, v in documented_sizes().items() if (k[1] == "any") == (arch is None)}
    if arch is not None:
        wanted = {k: v for k, v in wanted.items() if k[1].endswith(arch)}
    problems = []
    for (dist, platform), mb in sorted(wanted.items()):
        pattern = f"{dist}-*-py3-none-any.whl" if platform == "any" else f"{dist}-*{platform}.whl"
        wheels = [w for w in DIST.glob(pattern) if "cp313t" not in w.name]
        if not wheels:
            problems.append(f"no dist/{pattern} for docs/install.md's {dist} ({platform})")
            continue
        actual = max(w.stat().st_size for w in wheels) / 1e6
        if abs(actual - mb) > max(SIZE_TOLERANCE * mb, 0.1):
            problems.append(f"{dist} ({platform}): {actual:.1f} MB in dist/, {mb:.1f} in docs/install.md")
    if not wanted:
        problems.append(f"docs/install.md lists no wheel for {arch or 'any platform'}")
    return problems
