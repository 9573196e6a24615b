"""The runner's extras, computed from the files that hold their versions (pyproject.toml declares
`optional-dependencies` dynamic; everything else about the distribution is there):

- native (clientbench-native) and bindings (beast-client, reqwest-client): each at exactly the runner's version,
  clientbench/__init__.py's __version__ (`make dist` builds them all at it);
- peers: the pins of requirements-peers.txt, the file `make peers` installs (one pin per version), less the
  clients that `make peers` builds from source: urllib3-future must be built from its sdist with
  URLLIB3_NO_OVERRIDE=1 (its wheel overwrites urllib3 at every interpreter start, so requests and urllib3 would
  be measured on the fork), which an extra cannot ask pip for, and niquests would bring that wheel;
- all: the three; test: what the runner's own tests import first.
"""

from __future__ import annotations

import re
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
#: what `make peers` builds from source (the Makefile's `--no-binary urllib3-future`) and what depends on it
FROM_SOURCE = {"urllib3-future", "niquests"}


def _version() -> str:
    found = re.search(r'^__version__ = "([^"]+)"$', (HERE / "clientbench" / "__init__.py").read_text(), re.M)
    if found is None:
        raise RuntimeError("clientbench/__init__.py has no __version__")
    return found[1]


def _name(requirement: str) -> str:
    """A requirement's project name, normalized (PEP 503)."""
    found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    if found is None:
        raise RuntimeError(f"requirements-peers.txt: not a requirement: {requirement!r}")
    return re.sub(r"[-_.]+", "-", found[0]).lower()


def _peers() -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in (HERE / "requirements-peers.txt").read_text().splitlines())
    return [line for line in lines if line and _name(line) not in FROM_SOURCE]


version = _version()
native = [f"clientbench-native=={version}"]
bindings = [f"beast-client=={version}", f"reqwest-client=={version}"]
peers = _peers()
setup(
    extras_require={
        "native": native,
        "bindings": bindings,
        "peers": peers,
        "all": native + bindings + peers,
        "test": ["pytest>=7", "pytest-timeout>=2"],
    }
)
