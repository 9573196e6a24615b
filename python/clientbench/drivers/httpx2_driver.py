"""Python `httpx2` (the maintained fork of httpx): sync (`httpx2.Client` per thread) or async
(`httpx2.AsyncClient` per task)."""

from __future__ import annotations

import httpx2

from .httpx_family import plugins

SYNC, ASYNC = plugins(httpx2)
