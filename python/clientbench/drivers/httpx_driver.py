"""Python `httpx`: sync (`httpx.Client` per thread) or async (`httpx.AsyncClient` per task)."""

from __future__ import annotations

import httpx

from .httpx_family import plugins

SYNC, ASYNC = plugins(httpx)
