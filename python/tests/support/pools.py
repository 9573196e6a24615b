"""Which clients may open one connection more than their workers on a keep-alive run."""

from __future__ import annotations

from clientbench.registry.spec import ClientSpec

#: The clients on hyper's pool (reqwest and the libraries built on it) hand a connection back to their pool on
#: their runtime's thread once the response is done: now and then a worker's next request goes out first and
#: opens one more connection (2-4% of the requests on 2 cores, more under load). hyper promises reuse, not a
#: count: their keep-alive count is W plus those, bounded over more requests.
HYPER_POOLS = frozenset({"reqwest", "pyreqwest", "wreq", "rnet", "pyqwest", "impit", "ry", "primp", "httpr"})


def pool_race(spec: ClientSpec) -> bool:
    """True for a row whose client is on hyper's pool (reqwest+uvloop: the library, not its loop)."""
    return spec.client.library.split("+", 1)[0] in HYPER_POOLS
