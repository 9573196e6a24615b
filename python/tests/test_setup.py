"""The set-up's strict mode, run as make runs it: a peer that does not install is a warning on a developer's
machine (its rows and tests then skip, saying why) and fails `make peers` under CI, naming it, so that CI
cannot stay green with a peer's suites silently gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv of this module's own (the runner's install in it is not what these tests are about)."""
    venv = tmp_path_factory.mktemp("setup") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    (venv / ".installed").touch()
    return venv


def make_peers(venv: Path, tmp_path: Path, *, ci: bool) -> tuple[subprocess.CompletedProcess[str], Path, str]:
    """`make peers` into VENV from a requirements file whose one peer cannot install (a wheel that does not exist:
    no network involved)."""
    missing = str(tmp_path / "no_such_peer-1.0-py3-none-any.whl")
    peers = tmp_path / "requirements-peers.txt"
    peers.write_text(f"# one peer that cannot install\n{missing}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CLIENTBENCH_STRICT", "MAKEFLAGS", "MFLAGS")}
    if ci:
        env["CI"] = "true"
    done = subprocess.run(
        ["make", "--no-print-directory", "peers", f"VENV={venv}", f"PEERS={peers}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return done, venv / ".peers", missing


@pytest.mark.parametrize("ci", [True, False], ids=["ci", "developer"])
def test_a_peer_that_does_not_install_fails_the_set_up_under_ci_and_is_named(
    venv: Path, tmp_path: Path, ci: bool
) -> None:
    done, stamp, missing = make_peers(venv, tmp_path, ci=ci)
    assert "[step] peers" in done.stderr and "(failed)" in done.stderr
    assert not stamp.exists()  # tried again at the next make
    if ci:
        assert done.returncode != 0, done.stderr
        assert f"make peers: could not install: {missing} (strict mode" in done.stderr
    else:
        assert done.returncode == 0, done.stderr
        assert f"make peers: warning: could not install: {missing}" in done.stderr
