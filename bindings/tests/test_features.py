"""The reqwest wheel and the native executables (scripts/build-native-wheel.sh) build in one cargo target folder
per architecture: a crate both use is compiled once only when both builds give it the same features, and one
that differs recompiles everything on it. The native-share feature of bindings/reqwest/Cargo.toml (the wheels')
names the native build's features; this test fails when the two builds part again (read from cargo's unit
graph, nothing compiled). So does the venv's binding (scripts/install-binding enables native-share there too) beside
`cargo test`'s build of the workspace: the workspace's tests add no feature to a shared crate (tokio's test-util
did, and recompiled tokio, hyper, h2, quinn and reqwest for the tests)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: as scripts/build-reqwest-wheel.sh and scripts/build-native-wheel.sh select them
WHEEL = ["-p", "reqwest-client", "--features", "abi3,native-share", "--lib"]
NATIVE = [
    *("-p", "clientbench-server", "-p", "reqwest-drivers", "-p", "reqwest-probes", "-p", "udp-relay"),
    *("--bin", "clientbench-server", "--bin", "reqwest-driver", "--bin", "reqwest-soak", "--bin", "udp-relay"),
]


def _features(selection: list[str], target: str | None, command: str = "build") -> dict[str, set[str]]:
    """Each compiled crate of the build (a build script apart) and its features."""
    # --unit-graph is unstable: RUSTC_BOOTSTRAP lets this stable cargo print it (it only reads the graph)
    where = ["--target", target] if target else []
    out = subprocess.run(
        ["cargo", command, "--release", *where, "--unit-graph", "-Z", "unstable-options", *selection],
        cwd=REPO,
        env={**os.environ, "RUSTC_BOOTSTRAP": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    crates: dict[str, set[str]] = defaultdict(set)
    for unit in json.loads(out.stdout)["units"]:
        if unit["mode"] == "build":
            crates[f"{unit['pkg_id']} {unit['target']['name']}"].update(unit["features"])
    return crates


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not on PATH")
@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_wheel_and_the_native_build_give_shared_crates_the_same_features(arch: str) -> None:
    target = f"{arch}-unknown-linux-gnu"
    wheel, native = _features(WHEEL, target), _features(NATIVE, target)
    shared = set(wheel) & set(native)
    assert len(shared) > 100  # tokio, hyper, rustls, quinn, reqwest and what they stand on
    parted = {
        crate: {"wheel only": sorted(wheel[crate] - native[crate]), "native only": sorted(native[crate] - wheel[crate])}
        for crate in sorted(shared)
        if wheel[crate] != native[crate]
    }
    assert parted == {}


def _parted(one: dict[str, set[str]], other: dict[str, set[str]]) -> dict[str, dict[str, list[str]]]:
    return {
        crate: {"only one": sorted(one[crate] - other[crate]), "only other": sorted(other[crate] - one[crate])}
        for crate in sorted(set(one) & set(other))
        if one[crate] != other[crate]
    }


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not on PATH")
def test_the_venvs_binding_and_the_workspace_tests_give_shared_crates_the_same_features() -> None:
    venv = _features(["-p", "reqwest-client", "--features", "native-share", "--lib"], None)
    tests = _features(["--workspace", "--no-run"], None, command="test")
    assert len(set(venv) & set(tests)) > 100
    assert _parted(venv, tests) == {}
