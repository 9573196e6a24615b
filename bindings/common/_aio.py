"""The asyncio layer of both bindings: AsyncClient and AsyncStreamResponse over the extension's raw async client
(`_core.RawAsyncClient`, `RawStream`, `Completer`), whose requests run on threads of the extension's own and come
back to the event loop through a pipe it watches (``loop.add_reader``).

One source for both: this file is bindings/common/_aio.py, and each binding's package holds a symbolic link to it
(beast_client/_aio.py, reqwest_client/_aio.py), which scikit-build-core and maturin follow: both wheels and both
sdists carry it as a file (bindings/tests/test_wheels.py checks they carry the same bytes). `from ._core import`
is each package's own extension. What differs between the bindings stays in their `__init__.py`: the
AsyncClient's docstring and `tls_info` (its type differs), reqwest's `http_version` of a streamed response, and
Beast's loop path (get, fetch_len, fetch over http:// on the loop's own thread).
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ._core import Completer, Headers, RawAsyncClient, RawStream, RawUpload, Response

if TYPE_CHECKING:
    from typing_extensions import Buffer, Self, Unpack

    from ._core import _AsyncBody, _ClientOptions, _HeadersArg, _Params

#: one Completer per event loop: its pipe is registered with loop.add_reader, and its drain() resolves the
#: loop's futures on the loop's own thread (no thread of the extension's ever touches Python)
_completers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Completer] = weakref.WeakKeyDictionary()

T = TypeVar("T")


def _completer() -> Completer:
    loop = asyncio.get_running_loop()
    c = _completers.get(loop)
    if c is None:
        c = Completer()
        loop.add_reader(c.fileno(), c.drain)
        _completers[loop] = c
    return c


async def _result(completer: Completer, future: Awaitable[T]) -> T:
    """`future`'s result (a future of `completer`'s). When the task awaiting it is cancelled, the extension abandons
    its request (stops it, closes its connection): asked here rather than by a done callback on every future, which
    would cost each request a callback the loop schedules and runs."""
    try:
        return await future
    except asyncio.CancelledError:
        completer.abandon(future)
        raise


def _upload(body: Any) -> tuple[Any, Any]:
    """AsyncClient's body and what feeds it: a bytes-like object as it is (nothing feeds it); an iterable of chunks,
    an async iterable of chunks or a binary file: a `RawUpload` that `_feed` fills from it on the loop's thread (the
    requests run on threads that never call Python)."""
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
            if not (queued if isinstance(queued, bool) else await _result(completer, queued)):
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


async def _sent(
    completer: Completer,
    pending: Awaitable[T],
    feeder: asyncio.Task[None] | None,
    *,
    stop: bool = True,
) -> T:
    """`pending`'s result (a future of `completer`'s); when it fails because the upload's source raised, the source's
    exception. `stop`: the feeder is cancelled once the result is in (a whole response: its body was sent), else it
    goes on (a streamed response, whose request body may still be on its way)."""
    if feeder is None:
        return await _result(completer, pending)
    try:
        result = await _result(completer, pending)
    except BaseException:
        raised = feeder.exception() if feeder.done() and not feeder.cancelled() else None
        if raised is not None:
            raise raised from None
        feeder.cancel()
        raise
    if stop:
        feeder.cancel()
    return result


class AsyncStreamResponse:
    """The response of `AsyncClient.stream`, an async context manager: ``async for chunk in r.aiter_bytes()``
    reads the body as it arrives; leaving the block closes it."""

    def __init__(self, raw: RawStream) -> None:
        self._raw = raw
        self._closed = False

    @property
    def status(self) -> int:
        return self._raw.status

    @property
    def url(self) -> str:
        return self._raw.url

    @property
    def reason(self) -> str:
        return self._raw.reason

    @property
    def headers(self) -> Headers:
        return self._raw.headers

    @property
    def closed(self) -> bool:
        return self._closed

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's chunks as they arrive (decoded when the client decompresses)."""
        while not self._closed:
            completer = _completer()
            chunk = await _result(completer, self._raw.next_chunk(completer))
            if chunk is None:
                return
            yield chunk

    async def aread(self) -> bytes:
        """The rest of the body."""
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    async def aclose(self) -> None:
        """Stop reading (the rest of the body is dropped with its connection). Idempotent."""
        self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._raw.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        self.close()
        return False

    def __repr__(self) -> str:
        return f"<AsyncStreamResponse [{self.status}]>"


#: the class of a client's streamed responses: AsyncStreamResponse, or reqwest's, which adds http_version
R = TypeVar("R", bound=AsyncStreamResponse)


class _StreamContext(Generic[R]):
    """What `AsyncClient.stream(...)` returns: ``async with client.stream(...) as r`` (or ``await`` it)."""

    def __init__(self, opening: Callable[[], Awaitable[RawStream]], response: type[R]) -> None:
        self._opening = opening
        self._wrap = response
        self._response: R | None = None

    def __await__(self) -> Any:
        return self._open().__await__()

    async def _open(self) -> R:
        self._response = self._wrap(await self._opening())
        return self._response

    async def __aenter__(self) -> R:
        return await self._open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if self._response is not None:
            self._response.close()
        return False


class BaseAsyncClient(Generic[R]):
    """What the AsyncClients of both bindings share: each package's AsyncClient is this with its docstring, its
    `tls_info` and the class of its streamed responses (`_response`)."""

    _response: type[R]

    def __init__(
        self,
        timeout: float | None = None,
        verify: bool | str | os.PathLike[str] = True,
        **options: Unpack[_ClientOptions],
    ) -> None:
        # the keyword options are RawAsyncClient's, checked as Client's (beast: src/settings.cpp, reqwest:
        # src/config.rs); their types are _core.pyi's _ClientOptions
        self._raw = RawAsyncClient(timeout, verify, **options)

    # get, fetch_len and fetch: _result's work written out (a coroutine less per request)
    async def get(self, url: str) -> int:
        """GET `url`, read the whole body, return the status (the lean benchmark path)."""
        completer = _completer()
        future = self._raw.get(url, completer)
        try:
            return await future
        except asyncio.CancelledError:
            completer.abandon(future)
            raise

    async def fetch_len(self, url: str) -> tuple[int, int]:
        """GET `url`, read the whole body, return ``(status, body bytes)``."""
        completer = _completer()
        future = self._raw.fetch_len(url, completer)
        try:
            return await future
        except asyncio.CancelledError:
            completer.abandon(future)
            raise

    async def fetch(self, url: str, *, method: str = "GET", body: Buffer | None = None) -> tuple[int, bytes]:
        """`method` `url` with `body` (bytes-like) if any, read the whole body, return ``(status, body)``
        (the lean benchmark path: no redirects, no decoding, no default headers)."""
        completer = _completer()
        future = self._raw.fetch(url, completer, method=method, body=body)
        try:
            return await future
        except asyncio.CancelledError:
            completer.abandon(future)
            raise

    # request and stream: a body that is an iterable, an async iterable or a file is streamed (chunked): read on the
    # loop's thread by a feeder task (_feed) into a RawUpload, which the request takes its chunks from
    async def request(
        self,
        method: str,
        url: str,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: _AsyncBody | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> Response:
        """As `Client.request`; an iterable, async iterable or file body is streamed (chunked), read on the loop."""
        raw, source = _upload(body)
        completer = _completer()
        pending = self._raw.request(
            method,
            url,
            completer,
            params=params,
            headers=headers,
            body=raw,
            json=json,
            timeout=timeout,
            follow_redirects=follow_redirects,
        )
        return await _sent(completer, pending, None if source is None else _start_feeding(raw, source))

    def stream(
        self,
        method: str,
        url: str,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: _AsyncBody | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> _StreamContext[R]:
        """``async with client.stream("GET", url) as r: async for chunk in r.aiter_bytes(): ...``"""

        async def opening() -> RawStream:
            raw, source = _upload(body)
            completer = _completer()
            pending: Awaitable[RawStream] = self._raw.stream(
                method,
                url,
                completer,
                params=params,
                headers=headers,
                body=raw,
                json=json,
                timeout=timeout,
                follow_redirects=follow_redirects,
            )
            return await _sent(
                completer,
                pending,
                None if source is None else _start_feeding(raw, source),
                stop=False,
            )

        return _StreamContext(opening, self._response)

    @property
    def timeout(self) -> float | None:
        return self._raw.timeout

    @property
    def connect_timeout(self) -> float | None:
        return self._raw.connect_timeout

    @property
    def read_timeout(self) -> float | None:
        return self._raw.read_timeout

    @property
    def verify(self) -> bool | str | os.PathLike[str]:
        """The verify argument, as given (True when omitted)."""
        return self._raw.verify

    @property
    def closed(self) -> bool:
        return self._raw.closed

    def close(self) -> None:
        """Close the connection pool (requests already running finish first). Idempotent."""
        self._raw.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        self.close()
        return False

    def __repr__(self) -> str:
        cls = type(self)
        return f"<{cls.__module__}.{cls.__qualname__} timeout={self.timeout}{' closed' if self.closed else ''}>"
