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
name, http_url, https_url, ca_file, limit = sys.argv[1:]
limit = float(limit)
m = importlib.import_module(name)
pkg = pathlib.Path(m.__file__).resolve().parent
assert str(pkg).startswith(str(pathlib.Path(sys.prefix).resolve())), f"{name} imported from {pkg}, not the venv"
assert (pkg / "py.typed").exists(), "py.typed missing"
assert any(pkg.glob("*.pyi")), "type stubs missing"
assert issubclass(m.ProtocolError, OSError) and issubclass(m.TLSError, ConnectionError)
with m.Client(timeout=limit) as c:
    status = c.get(http_url + "/")
    echo = c.request("POST", http_url + "/echo", body=b"wheel").body.decode()
with m.Client(timeout=limit, verify=ca_file) as c:
    tls_status = c.get(https_url + "/")
try:
    with m.Client(timeout=limit) as c:
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
    python: Sequence[str],
    module: str,
    env: Mapping[str, str],
    server: Server,
    tls_server: Server,
    timeout: float = 120,
    client_timeout: float = 5,
) -> list[str]:
    """Runs CHECK with `python` (a command: the venv's interpreter, or an emulator and its arguments before
    it) and returns its words: status, echoed body, https status, untrusted verdict, GIL state. `client_timeout`:
    each of its clients' (an emulated TLS handshake beside a loaded machine needs more than 5 s)."""
    assert tls_server.ca_file
    out = subprocess.run(
        [*python, "-c", CHECK, module, server.url, tls_server.url, tls_server.ca_file, str(client_timeout)],
        capture_output=True, text=True, timeout=timeout, env=dict(env),
    )  # fmt: skip
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr}"  # a signal leaves stderr empty
    return out.stdout.split()


#: the wheel sizes docs/install.md quotes: `make dist`'s dist/sizes.md (scripts/wheel-sizes.py), kept
SIZES = REPO / "results" / "reference" / "wheel-sizes" / "sizes.md"
#: how far a wheel of dist/ may be from the size recorded there (a dependency's update moves it a little)
SIZE_TOLERANCE = 0.25


def documented_sizes() -> dict[str, float]:
    """results/reference/wheel-sizes/sizes.md: MB by wheel file name."""
    sizes: dict[str, float] = {}
    for line in SIZES.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].endswith(".whl"):
            sizes[cells[0]] = float(cells[1])
    return sizes


def check_documented_sizes(arch: str | None) -> list[str]:
    """The wheels of dist/ for `arch` (the pure ones with None) against the recorded sizes: one line per wheel
    whose size is off by more than SIZE_TOLERANCE, or that is missing (a free-threaded wheel may be: it is built
    only where the free-threaded interpreter is)."""
    wanted = {
        name: mb
        for name, mb in documented_sizes().items()
        if (name.endswith("-any.whl") if arch is None else name.endswith(f"_{arch}.whl"))
    }
    problems = [] if wanted else [f"{SIZES.name} lists no wheel for {arch or 'any platform'}"]
    for name, mb in sorted(wanted.items()):
        wheel = DIST / name
        if not wheel.is_file():
            if "cp313t" not in name:
                problems.append(f"no dist/{name}, which {SIZES.relative_to(REPO)} lists")
            continue
        actual = wheel.stat().st_size / 1e6
        if abs(actual - mb) > max(SIZE_TOLERANCE * mb, 0.1):
            problems.append(f"{name}: {actual:.1f} MB in dist/, {mb:.1f} in {SIZES.relative_to(REPO)}")
    return problems
