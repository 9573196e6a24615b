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
# one closes its pool; its responses are closed by close(), not as context managers. Its async client sends an
# async generator body only in part, without an error (180224 of 1048576 bytes in 16 KiB chunks, every time):
# its async row streams downloads only (wreq, its successor, sends it whole).
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
    async_streams=("download",),
)
