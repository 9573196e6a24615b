"""Headless Chromium (Debian's `chromium`) driven by Playwright, with the network cut off: a page opened here
can reach nothing but its own file, and every console message, page error and request it tried is kept."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
#: the closed network refuses Chromium's own background connections: none are tried
FLAGS = [
    "--no-sandbox",  # root in a container
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-gpu",
]


def skip_reason() -> str | None:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        return "no chromium (make test-deps installs Debian's chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "no playwright (make venv installs python/requirements.txt)"
    return None


@dataclass
class Visit:
    page: Any  # playwright.sync_api.Page
    console: list[str] = field(default_factory=list)  # "type: text" of every console message
    errors: list[str] = field(default_factory=list)  # uncaught page errors
    requests: list[str] = field(default_factory=list)  # every URL the page asked for

    @property
    def console_errors(self) -> list[str]:
        return [m for m in self.console if m.startswith(("error:", "warning:"))] + self.errors

    @property
    def outside(self) -> list[str]:
        """The requests that left the page's own file."""
        return [u for u in self.requests if not u.startswith(("file:", "data:", "blob:", "about:"))]


@contextmanager
def chromium(profile: Path, width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A fresh Chromium profile in `profile`, offline: a context to open pages in."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            args=FLAGS,
            headless=True,
            offline=True,
            viewport={"width": width, "height": height},
        )
        try:
            context.route(lambda url: not url.startswith("file:"), lambda route: route.abort())
            yield context
        finally:
            context.close()


def visit(context: Any, file: Path, ready: str = "body[data-charts-drawn]", timeout_ms: int = 60_000) -> Visit:
    """Open a local file and wait for `ready` (the report sets data-charts-drawn when every chart has drawn)."""
    page = context.new_page()
    v = Visit(page)
    page.on("console", lambda m: v.console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: v.errors.append(f"pageerror: {e}"))
    page.on("request", lambda r: v.requests.append(r.url))
    page.goto(file.resolve().as_uri())
    page.wait_for_selector(ready, state="attached", timeout=timeout_ms)
    return v
