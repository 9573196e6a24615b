"""Python `rnet` (Rust, from PyPI): sync (`BlockingClient` per thread) or async (`Client` per task)."""

from __future__ import annotations

from typing import Any

import rnet

from .. import sdk
from .rnet_family import aclosing, closing, config, plugins


def _config(opts: sdk.Options) -> dict[str, Any]:
    # rnet takes whole seconds
    return config(opts, timeout=int(max(1, round(opts.timeout))), verify_key="verify")


# rnet 2.4.2 segfaults in its runtime teardown at interpreter exit after async requests with larger bodies (seen
# with /bytes/1000000: ~80% of runs), after the document has been printed. Its clients have no close(): dropping
# one closes its pool; its responses are closed by close(), not as context managers.
SYNC, ASYNC = plugins(
    "rnet",
    rnet,
    rnet.BlockingClient,
    rnet.Client,
    make_config=_config,
    status=lambda r: int(r.status),
    opened=closing,
    aopened=aclosing,
    exit_after_document=True,
)
