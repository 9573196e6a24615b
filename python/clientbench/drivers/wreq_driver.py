"""Python `wreq` (Rust, from PyPI; rnet's successor under its new name): sync (`wreq.blocking.Client` per thread)
or async (`wreq.Client` per task)."""

from __future__ import annotations

import datetime
from typing import Any

import wreq
import wreq.blocking

from .. import sdk
from .rnet_family import config, plugins


def _config(opts: sdk.Options) -> dict[str, Any]:
    timeout = datetime.timedelta(seconds=opts.timeout)  # connect to the end of the body
    return config(opts, timeout=timeout, verify_key="tls_verify")


SYNC, ASYNC = plugins(
    "wreq",
    wreq,
    wreq.blocking.Client,
    wreq.Client,
    make_config=_config,
    status=lambda r: int(r.status.as_int()),
    close=wreq.blocking.Client.close,
    aclose=wreq.Client.close,
)
