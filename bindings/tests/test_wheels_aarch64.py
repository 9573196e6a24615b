"""The bindings' Linux aarch64 wheels (cross-built by `make wheels` into dist/) install and work on an arm64
CPython.

The interpreter is Debian bookworm's arm64 CPython 3.11, unpacked into build/arm64-sysroot by
scripts/arm64-sysroot.sh (the .debs cached in the per-user cache), run under Debian's qemu-user-static
(`qemu-aarch64-static -L SYSROOT`, called explicitly: no binfmt_misc, nothing of the system's Python or dpkg
changes). Each binding's aarch64 wheel is checked with `auditwheel show` (manylinux_2_28 or older, aarch64;
reqwest: cp39-abi3), installed by the arm64 interpreter's own pip (Debian's pip wheel, unpacked into the sysroot:
ensurepip would start an arm64 subprocess, which needs binfmt_misc) into a fresh venv, with no index and binaries
only, so that pip itself decides the wheel fits this interpreter, and used from that venv for an http and an https
request against the x86-64 axum server on loopback (the https one verified with its throw-away CA; verify=True
rejects that CA).

The runner's clientbench-native aarch64 wheel (the server, the drivers and probes, toxiproxy) is checked the same way
(auditwheel, an install by the arm64 pip), then its executables run from that venv under qemu: the server on
loopback, the Beast and reqwest drivers against it (their documents validated by the runner's schema), toxiproxy
giving its version.

Everything under emulation is slow (a few seconds per interpreter start): the venv has no pip of its own, and the
sysroot keeps the bytecode it compiles (the environment of these runs does not set PYTHONDONTWRITEBYTECODE).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import urllib.request
from pathlib import Path

import pytest
from clientbench import __version__
from clientbench.environment.binaries import EXECUTABLES
from clientbench.execution.server import Server
from clientbench.network import TOXIPROXY_VERSION
from clientbench.schema import parse_raw
from clientbench.workload import Workload
from packaging.utils import parse_wheel_filename
from support.wheels import (
    BINDINGS,
    MAX_GLIBC_MINOR,
    REPO,
    auditwheel_platform,
    check_documented_sizes,
    check_in_venv,
    manylinux_minor,
    newest,
)

QEMU = "qemu-aarch64-static"
SYSROOT_SCRIPT = REPO / "scripts" / "arm64-sysroot.sh"
# per interpreter start under emulation, generously: the machine may be busy
EMULATED_TIMEOUT = 300
ARCH = "import platform, sys; print(platform.machine(), '%d.%d' % sys.version_info[:2], sys.base_prefix)"


class Arm64:
    """The sysroot's arm64 CPython, run under qemu-user."""

    def __init__(self, sysroot: Path) -> None:
        self.sysroot = sysroot
        self.qemu = shutil.which(QEMU) or ""
        self.pip_path = sysroot / "opt" / "pip"

    def command(self, python: Path) -> list[str]:
        """The command that runs `python` (an arm64 interpreter: the sysroot's or a venv's) under qemu."""
        return [self.qemu, "-L", str(self.sysroot), str(python)]

    def env(self, home: Path, *, with_pip: bool = False) -> dict[str, str]:
        env = {"PATH": "/nonexistent", "HOME": str(home), "LANG": "C.UTF-8"}
        if with_pip:
            env["PYTHONPATH"] = str(self.pip_path)
        return env

    def run(self, python: Path, args: list[str], home: Path, *, with_pip: bool = False) -> str:
        out = subprocess.run(
            [*self.command(python), *args], capture_output=True, text=True, timeout=EMULATED_TIMEOUT,
            env=self.env(home, with_pip=with_pip),
        )  # fmt: skip
        assert out.returncode == 0, f"{args}: {out.stderr[-4000:]}"
        return out.stdout


@pytest.fixture(scope="session")
def arm64(tmp_path_factory: pytest.TempPathFactory) -> Arm64:
    if not shutil.which(QEMU):
        pytest.fail(f"{QEMU} not found: apt-get install qemu-user-static (`make test` installs it)")
    made = subprocess.run([str(SYSROOT_SCRIPT)], capture_output=True, text=True, timeout=1800)
    assert made.returncode == 0, made.stderr
    arm = Arm64(Path(made.stdout.strip()))
    home = tmp_path_factory.mktemp("arm64-home")
    # the interpreter really is an aarch64 one, and it is the sysroot's
    words = arm.run(arm.sysroot / "usr" / "bin" / "python3.11", ["-c", ARCH], home).split()
    assert words == ["aarch64", "3.11", str(arm.sysroot / "usr")], words
    return arm


@pytest.fixture(scope="session")
def arm64_tags(arm64: Arm64, tmp_path_factory: pytest.TempPathFactory) -> frozenset[str]:
    """The tags the arm64 interpreter's pip installs (its platform and glibc are the sysroot's)."""
    home = tmp_path_factory.mktemp("arm64-tags")
    code = "from pip._vendor.packaging.tags import sys_tags; print(*sys_tags())"
    tags = frozenset(arm64.run(arm64.sysroot / "usr" / "bin" / "python3.11", ["-c", code], home, with_pip=True).split())
    assert "cp39-abi3-manylinux_2_28_aarch64" in tags and "cp311-cp311-manylinux_2_28_aarch64" in tags
    return tags


def _install(arm64: Arm64, wheel: Path, tmp_path: Path) -> Path:
    """A fresh venv of the arm64 interpreter with the wheel installed by its pip (no index, binaries only)."""
    venv = tmp_path / "venv"
    arm64.run(arm64.sysroot / "usr" / "bin" / "python3.11", ["-m", "venv", "--without-pip", str(venv)], tmp_path)
    pip = ["-m", "pip", "install", "-q", "--no-index", "--no-deps", "--only-binary=:all:", "--no-cache-dir",
           "--disable-pip-version-check", str(wheel)]  # fmt: skip
    arm64.run(venv / "bin" / "python", pip, tmp_path, with_pip=True)
    return venv / "bin" / "python"


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("dist, module", BINDINGS)
def test_aarch64_wheel_is_manylinux_and_works_under_qemu(
    tmp_path: Path, arm64: Arm64, arm64_tags: frozenset[str], server: Server, tls_server: Server, dist: str, module: str
) -> None:
    wheel = newest(f"{dist}-*_aarch64.whl", arm64_tags, "arm64 CPython 3.11")
    tags = parse_wheel_filename(wheel.name)[3]

    # the tags: manylinux_2_28 or older, aarch64; reqwest is abi3, beast (pybind11) is for CPython 3.11
    assert all(manylinux_minor(t.platform, "aarch64") <= MAX_GLIBC_MINOR for t in tags), wheel.name
    abis = {(t.interpreter, t.abi) for t in tags}
    assert abis == ({("cp39", "abi3")} if dist == "reqwest_client" else {("cp311", "cp311")}), wheel.name
    assert manylinux_minor(auditwheel_platform(wheel), "aarch64") <= MAX_GLIBC_MINOR, wheel.name

    # the install: a fresh venv of the arm64 interpreter, the wheel installed by its pip, no index, binaries only
    py = _install(arm64, wheel, tmp_path)
    site = py.parent.parent / "lib" / "python3.11" / "site-packages"
    assert (site / module).is_dir(), sorted(p.name for p in site.iterdir())

    # under qemu an https request took over 5 s once (the reqwest wheel, in a whole make test): 60 s for each
    words = check_in_venv(
        arm64.command(py), module, arm64.env(tmp_path), server, tls_server, EMULATED_TIMEOUT, client_timeout=60
    )
    assert words == ["200", "wheel", "200", "rejected", "gil-on"]


@pytest.mark.timeout(1800)
def test_aarch64_native_wheel_runs_the_server_and_the_drivers_under_qemu(
    tmp_path: Path, arm64: Arm64, arm64_tags: frozenset[str]
) -> None:
    wheel = newest(f"clientbench_native-{__version__}-*_aarch64.whl", arm64_tags, "arm64 CPython 3.11")
    tags = parse_wheel_filename(wheel.name)[3]
    assert {(t.interpreter, t.abi) for t in tags} == {("py3", "none")}, wheel.name
    assert all(manylinux_minor(t.platform, "aarch64") <= MAX_GLIBC_MINOR for t in tags), wheel.name
    assert manylinux_minor(auditwheel_platform(wheel), "aarch64") <= MAX_GLIBC_MINOR, wheel.name

    py = _install(arm64, wheel, tmp_path)
    code = "import clientbench_native as n; print(n.__version__, n.bin_dir())"
    version, folder = arm64.run(py, ["-c", code], tmp_path).split()
    bin_dir = Path(folder)
    assert version == __version__ and tmp_path in bin_dir.parents
    assert sorted(p.name for p in bin_dir.iterdir()) == sorted(EXECUTABLES)

    # the server under emulation, on loopback: its first line names its URL (execution/server.py)
    with open(tmp_path / "server.log", "wb") as log:
        server = subprocess.Popen(
            [*arm64.command(bin_dir / "clientbench-server"), "--host", "127.0.0.1", "--port", "0"],
            stdout=subprocess.PIPE, stderr=log, env=arm64.env(tmp_path), start_new_session=True,
        )  # fmt: skip
    try:
        assert server.stdout is not None
        stdout, first = server.stdout, []
        reader = threading.Thread(target=lambda: first.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(EMULATED_TIMEOUT)
        assert first and first[0], f"the emulated server printed nothing: {(tmp_path / 'server.log').read_text()}"
        url = json.loads(first[0])["url"].rstrip("/")
        with urllib.request.urlopen(url + "/", timeout=30) as r:
            assert r.read() == b"Hello, World!"
        for driver in ("beast-driver", "reqwest-driver"):
            flags = Workload(workers=2, requests=20, warmup=2).flags(url + "/")
            doc = parse_raw(arm64.run(bin_dir / driver, flags, tmp_path))
            counts = [(w["count"], w["failures"]) for w in doc["workers"]]
            assert counts == [(20, []), (20, [])], (driver, counts)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
    # stamped with its release's version, as `make toxiproxy`'s is not ("git")
    shown = subprocess.run(
        [*arm64.command(bin_dir / "toxiproxy-server"), "--version"], capture_output=True, text=True,
        timeout=EMULATED_TIMEOUT, env=arm64.env(tmp_path),
    )  # fmt: skip
    assert shown.returncode == 0 and TOXIPROXY_VERSION.removeprefix("v") in shown.stdout + shown.stderr


def test_the_aarch64_wheels_are_the_sizes_docs_install_gives() -> None:
    assert check_documented_sizes("aarch64") == []
