"""The bindings' wheels (built by `make wheels` into dist/) install into a new venv and work there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from clientbench.run.paths import repo_root
from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename

CHECK = r"""
import sys, importlib, pathlib
name, url = sys.argv[1], sys.argv[2]
m = importlib.import_module(name)
pkg = pathlib.Path(m.__file__).parent
assert (pkg / "py.typed").exists(), "py.typed missing"
assert any(pkg.glob("*.pyi")), "type stubs missing"
assert issubclass(m.ProtocolError, OSError)
with m.Client(timeout=5) as c:
    print(c.get(url + "/"), c.request("POST", url + "/echo", body=b"wheel").body.decode())
"""


def newest_wheel(dist: str) -> Path:
    """The newest wheel of `dist` that pip would install on this interpreter (dist/ may hold others, e.g. 3.13t)."""
    supported = set(sys_tags())
    wheels = [p for p in (repo_root() / "dist").glob(f"{dist}-*.whl") if parse_wheel_filename(p.name)[3] & supported]
    if not wheels:
        pytest.fail(f"no {dist} wheel for this interpreter in dist/: run `make wheels`")
    return max(wheels, key=lambda p: p.stat().st_mtime)


@pytest.mark.parametrize("dist, module", [("beast_client", "beast_client"), ("reqwest_client", "reqwest_client")])
def test_wheel_installs_into_a_new_venv_and_makes_a_request(tmp_path, server, dist, module):
    wheel = newest_wheel(dist)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)], check=True, timeout=120
    )
    out = subprocess.run([str(py), "-c", CHECK, module, server.url], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["200", "wheel"]
