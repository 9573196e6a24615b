"""The AsyncClient's streamed uploads (reqwest's own: the shared layer, _aio.py, reads a body whole): an iterable, an
async iterable or a binary file is read on the event loop's thread, a chunk at a time, into a `RawUpload` the request
on a tokio thread takes its chunks from (those threads never call Python)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

from ._aio import _completer
from ._core import RawUpload

T = TypeVar("T")


def _upload(body: Any) -> tuple[Any, Any]:
    """AsyncClient's body and what feeds it: a bytes-like object as it is (nothing feeds it); an iterable of chunks,
    an async iterable of chunks or a binary file: a `RawUpload` that `_feed` fills from it on the loop's thread (the
    requests run on tokio threads that never call Python)."""
    if body is None or isinstance(body, (bytes, bytearray, memoryview)):
        return body, None
    if isinstance(body, str):
        raise TypeError("body must be bytes-like, not str (encode it first)")
    try:
        memoryview(body)
    except TypeError:
        pass
    else:
        return body, None
    if hasattr(body, "read") or hasattr(body, "__aiter__"):
        return RawUpload(), body
    try:
        return RawUpload(), iter(body)
    except TypeError:
        raise TypeError(
            "body must be bytes-like, an iterable or async iterable of bytes-like chunks or a binary file, "
            f"not {type(body).__name__}"
        ) from None


async def _feed(upload: RawUpload, source: Any) -> None:
    """Send `source`'s chunks (a file read 64 KiB at a time, as `Client` reads one) into `upload` until it ends or the
    request stops reading; what the source raises fails the request, and is raised here."""
    completer = _completer()

    async def chunks() -> AsyncIterator[Any]:
        if hasattr(source, "__aiter__"):
            async for chunk in source:
                yield chunk
        elif hasattr(source, "read"):
            while chunk := source.read(65536):  # b"" at the end; None (a non-blocking file with nothing now) too
                yield chunk
        else:
            for chunk in source:
                yield chunk

    try:
        async for chunk in chunks():
            queued = upload.send(chunk, completer)
            if not (queued if isinstance(queued, bool) else await queued):
                return  # the request no longer reads its body
    except BaseException as exc:
        upload.fail(str(exc) or type(exc).__name__)
        raise
    upload.finish()


#: the feeders of streamed uploads still running (asyncio keeps only weak references to tasks)
_feeders: set[asyncio.Task[None]] = set()


def _start_feeding(upload: RawUpload, source: Any) -> asyncio.Task[None]:
    feeder = asyncio.ensure_future(_feed(upload, source))
    _feeders.add(feeder)
    feeder.add_done_callback(_fed)
    return feeder


def _fed(feeder: asyncio.Task[None]) -> None:
    _feeders.discard(feeder)
    if not feeder.cancelled():
        # retrieved: the request it failed raises it (`_sent`), or its error once the response has come
        feeder.exception()


async def _sent(pending: Awaitable[T], feeder: asyncio.Task[None] | None, *, stop: bool = True) -> T:
    """`pending`'s result; when it fails because the upload's source raised, the source's exception. `stop`: the
    feeder is cancelled once the result is in (a whole response: its body was sent), else it goes on (a streamed
    response, whose request body may still be on its way)."""
    if feeder is None:
        return await pending
    try:
        result = await pending
    except BaseException:
        raised = feeder.exception() if feeder.done() and not feeder.cancelled() else None
        if raised is not None:
            raise raised from None
        feeder.cancel()
        raise
    if stop:
        feeder.cancel()
    return result
