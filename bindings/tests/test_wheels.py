"""The bindings' wheels and sdists (built by `make wheels` into dist/) install and work where a user gets them.

Wheels: for this interpreter, and for the free-threaded one of `make freethreaded` (build/cpython/interpreters.json)
when it was built, each binding's wheel is checked with `auditwheel show` (manylinux_2_28 or older; reqwest:
cp39-abi3 on a GIL build, cp313t on the free-threaded one), installed into a fresh venv with no compiler and no
cargo on PATH and no package index, and used for an http and an https request (against the axum server, the
https one verified with its throw-away CA; verify=True rejects that CA).

Sdists: each one, copied into a temporary directory outside the checkout, builds and installs into a clean
venv (reqwest with `cargo --locked`, its Cargo.lock checked exact first) and makes the same requests.

The Python both bindings share, written once in bindings/common/_aio.py, is in both wheels and both sdists as a
file of its own with the same bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from clientbench.execution.server import Server
from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename
from support.wheels import BINDINGS, MAX_GLIBC_MINOR, REPO, auditwheel_platform, check_in_venv, manylinux_minor, newest

INTERPRETERS = REPO / "build" / "cpython" / "interpreters.json"
UNAVAILABLE = REPO / "build" / "cpython" / "unavailable"
# the reqwest sdist builds into the workspace's cargo output, with the crates.io dependencies `make bindings`
# compiled (in cargo's build-dir, the Makefile's CARGO_BUILD_BUILD_DIR, when run through make): the sdist's own two
# path crates (their package ids name the sdist's copy) always compile anew
SDIST_CARGO_TARGET = REPO / "target"
#: the Python both bindings ship, written once: each package's _aio.py is a link to it
SHARED = REPO / "bindings" / "common" / "_aio.py"
# what must not be reachable while a wheel is installed and used
TOOLCHAIN = ("cc", "gcc", "c++", "g++", "clang", "clang++", "ld", "cargo", "rustc", "zig", "cmake", "make")


@dataclass(frozen=True)
class Interp:
    label: str
    python: str
    tags: frozenset[str]
    free_threaded: bool


def _interp(label: str) -> Interp:
    if label == "this":
        return Interp("this", sys.executable, frozenset(str(t) for t in sys_tags()), False)
    if not INTERPRETERS.exists():
        why = UNAVAILABLE.read_text().strip() if UNAVAILABLE.exists() else "not built (run `make freethreaded`)"
        pytest.skip(f"free-threaded CPython: {why}")
    python = json.loads(INTERPRETERS.read_text()).get(label)
    if not python or not Path(python).exists():
        pytest.skip(f"{INTERPRETERS} names no {label} interpreter")
    # pip, in every venv, carries packaging: the interpreter's own tags
    out = subprocess.run(
        [python, "-c", "from pip._vendor.packaging.tags import sys_tags; print(*sys_tags())"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return Interp(label, python, frozenset(out.stdout.split()), label.endswith("t"))


def make_venv(python: str, where: Path) -> Path:
    subprocess.run([python, "-m", "venv", str(where)], check=True, capture_output=True, timeout=300)
    return where / "bin" / "python"


@pytest.mark.long(12)
@pytest.mark.timeout(600)
@pytest.mark.parametrize("label", ["this", "3.13t"])
@pytest.mark.parametrize("dist, module", BINDINGS)
def test_wheel_is_manylinux_and_works_without_a_toolchain(
    tmp_path: Path, server: Server, tls_server: Server, dist: str, module: str, label: str
) -> None:
    interp = _interp(label)
    wheel = newest(f"{dist}-*_x86_64.whl", interp.tags, interp.label)
    tags = parse_wheel_filename(wheel.name)[3]

    # the tags: manylinux_2_28 or older; reqwest is abi3 (one wheel for CPython >= 3.9) except free-threaded
    assert all(manylinux_minor(t.platform) <= MAX_GLIBC_MINOR for t in tags), wheel.name
    abis = {(t.interpreter, t.abi) for t in tags}
    if dist == "reqwest_client" and not interp.free_threaded:
        assert abis == {("cp39", "abi3")}, wheel.name
    else:
        assert all(t.abi.startswith("cp3") and t.abi.endswith("t") == interp.free_threaded for t in tags), wheel.name
    assert manylinux_minor(auditwheel_platform(wheel)) <= MAX_GLIBC_MINOR, wheel.name

    # the install: a fresh venv; on PATH only its bin/ and an empty directory; no index, binaries only
    py = make_venv(interp.python, tmp_path / "venv")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {"PATH": f"{py.parent}:{empty}", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    reachable = [t for t in TOOLCHAIN if shutil.which(t, path=env["PATH"])]
    assert not reachable, f"a toolchain is reachable on the test PATH: {reachable}"
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--only-binary=:all:",
         "--disable-pip-version-check", str(wheel)],
        check=True, timeout=300, env=env,
    )  # fmt: skip
    gil = "gil-off" if interp.free_threaded else "gil-on"
    assert check_in_venv([str(py)], module, env, server, tls_server) == ["200", "wheel", "200", "rejected", gil]


@pytest.mark.long(80)
@pytest.mark.timeout(3600)  # a full release build of the extension (reqwest: ~10 min on 2 cores, cold)
@pytest.mark.parametrize("dist, module", BINDINGS)
def test_sdist_builds_outside_the_checkout_in_a_clean_venv(
    tmp_path: Path, server: Server, tls_server: Server, dist: str, module: str
) -> None:
    sdist = newest(f"{dist}-*.tar.gz")
    assert REPO not in tmp_path.resolve().parents
    copy = tmp_path / sdist.name
    shutil.copy(sdist, copy)
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    for var in ("CLIENTBENCH_ROOT", "PYTHONPATH"):  # nothing may lead back into the checkout
        env.pop(var, None)
    if dist == "reqwest_client":
        # its Cargo.lock is exactly the binding's own dependency graph: cargo changes nothing with --locked
        unpacked = tmp_path / "unpacked"
        with tarfile.open(copy) as tar:
            tar.extractall(unpacked, filter="data")
        (top,) = unpacked.iterdir()
        assert 'name = "clientbench-server"' not in (top / "Cargo.lock").read_text()
        meta = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked", "--offline"],
            cwd=top, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert meta.returncode == 0, meta.stderr
        env["MATURIN_PEP517_ARGS"] = "--locked"
        env["CARGO_TARGET_DIR"] = str(SDIST_CARGO_TARGET)
    target = copy  # what pip installs: the sdist, as users get it
    if dist == "beast_client" and (where := os.environ.get("CLIENTBENCH_SDIST_BUILD")):
        # unpacked where the Makefile told the compiler cache it would be (SCCACHE_BASEDIRS), still outside the
        # checkout: beast_client's objects are then those of the checkout's builds, not compiled once more
        target = Path(where)
        assert REPO not in target.resolve().parents
        shutil.rmtree(target, ignore_errors=True)
        with tarfile.open(copy) as tar:
            tar.extractall(tmp_path / "unpacked", filter="data")
        (top,) = (tmp_path / "unpacked").iterdir()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(top, target)
    py = make_venv(sys.executable, tmp_path / "venv")
    built = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check", str(target)],
        cwd=tmp_path, capture_output=True, text=True, timeout=3500, env=env,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-4000:]
    run_env = {"PATH": f"{py.parent}", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    words = check_in_venv([str(py)], module, run_env, server, tls_server)
    assert words == ["200", "wheel", "200", "rejected", "gil-on"]


@pytest.mark.parametrize("form", ["wheel", "sdist"])
def test_both_bindings_ship_the_same_bytes_of_their_shared_python(form: str) -> None:
    """Each package's _aio.py, in this interpreter's wheel and in the sdist of each binding, is a file (not a link
    that leads out of the archive) holding bindings/common/_aio.py's bytes: the same in both."""
    shipped: dict[str, bytes] = {}
    for dist, module in BINDINGS:
        if form == "wheel":
            with zipfile.ZipFile(newest(f"{dist}-*_x86_64.whl", _interp("this").tags, "this")) as whl:
                shipped[dist] = whl.read(f"{module}/_aio.py")
        else:
            sdist = newest(f"{dist}-*.tar.gz")
            with tarfile.open(sdist) as tar:
                member = tar.getmember(f"{sdist.name.removesuffix('.tar.gz')}/python/{module}/_aio.py")
                assert member.isfile(), f"{sdist.name}: {member.name} is not a file"
                data = tar.extractfile(member)
                assert data is not None
                shipped[dist] = data.read()
    assert shipped["beast_client"] == shipped["reqwest_client"] == SHARED.read_bytes()
