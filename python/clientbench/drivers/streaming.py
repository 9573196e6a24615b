"""What the drivers' streamed forms (`stream=`, docs/raw-format.md "Streamed bodies") share: a body read whole
(`--download whole`) given to the harness as its one piece."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable


def whole(body: bytes) -> tuple[bytes]:
    """The body read whole, the one piece of `--download whole`."""
    return (body,)


async def awhole(read: Callable[[], Awaitable[bytes]]) -> AsyncIterator[bytes]:
    """`whole()` for an async library: the body read, `await read()`, when the harness asks for its piece."""
    yield await read()
