"""The request a worker sends, from the driver's forms and the flags: its lean GET, its upload with the answer
checked, its streamed form (docs/raw-format.md, "Streamed bodies"), or a cycle of targets ("Targets"). Each is a
`request(client, url) -> (status, body bytes)` (a coroutine function for an async driver), made once per worker
(`for_worker(index)`), so that the hot loop is the same whatever the flags."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, Generic, TypeVar

from .bodies import Answer, abody_chunks, body_chunks
from .failures import DigestMismatch
from .options import unsupported

C = TypeVar("C")
R = TypeVar("R")
U = TypeVar("U")
S = TypeVar("S")

SyncRequest = Callable[[C, str], "tuple[int, int]"]
AsyncRequest = Callable[[C, str], Awaitable["tuple[int, int]"]]
#: do one upload (client, url, method, body): returns (status, the whole response body); raises likewise
SyncUpload = Callable[[C, str, str, bytes], "tuple[int, bytes]"]
AsyncUpload = Callable[[C, str, str, bytes], Awaitable["tuple[int, bytes]"]]
#: the streamed form (client, method, url, content, chunk size or None): a context manager of (status, pieces)
SyncStream = Callable[
    [C, str, str, "bytes | Iterable[bytes] | None", "int | None"],
    AbstractContextManager["tuple[int, Iterable[bytes]]"],
]
AsyncStream = Callable[
    [C, str, str, "bytes | AsyncIterable[bytes] | None", "int | None"],
    AbstractAsyncContextManager["tuple[int, AsyncIterable[bytes]]"],
]
#: the directions a streamed form streams, unless its plugin says fewer
BOTH = ("upload", "download")


def _right(got: bytes, expected: bytes, body: bytes) -> bool:
    """An upload's whole answer: the /upload line of the body, or the body itself (POST /echo)."""
    return got == expected or (len(got) == len(body) and got == body)


def checked(upload: SyncUpload[C], method: str, body: bytes, expected: bytes) -> SyncRequest[C]:
    """A request that uploads `body` and checks the answer (a 200 with another body is a DigestMismatch)."""

    def request(client: C, url: str) -> tuple[int, int]:
        status, got = upload(client, url, method, body)
        if status == 200 and not _right(got, expected, body):
            raise DigestMismatch(got, expected)
        return status, len(got)

    return request


def checked_async(upload: AsyncUpload[C], method: str, body: bytes, expected: bytes) -> AsyncRequest[C]:
    async def request(client: C, url: str) -> tuple[int, int]:
        status, got = await upload(client, url, method, body)
        if status == 200 and not _right(got, expected, body):
            raise DigestMismatch(got, expected)
        return status, len(got)

    return request


def unchecked(upload: SyncUpload[C], method: str, body: bytes) -> SyncRequest[C]:
    """A target's upload: its answer counted, not compared (a target may go anywhere)."""

    def request(client: C, url: str) -> tuple[int, int]:
        status, got = upload(client, url, method, body)
        return status, len(got)

    return request


def unchecked_async(upload: AsyncUpload[C], method: str, body: bytes) -> AsyncRequest[C]:
    async def request(client: C, url: str) -> tuple[int, int]:
        status, got = await upload(client, url, method, body)
        return status, len(got)

    return request


def _refuse(args: argparse.Namespace, has_upload: bool, stream: object, streams: tuple[str, ...]) -> None:
    """What the driver's forms cannot do: exit 3, `unsupported: ...` (docs/raw-format.md, "Exit status")."""
    targets = args.target_list or ()
    uploads = args.method != "GET" or any(t.method != "GET" for t in targets)
    # a streamed form sends a body too (whole, with --download stream alone)
    if uploads and not has_upload and not (stream is not None and _streamed(args)):
        what = f"--method {args.method}" if args.method != "GET" else "--targets with POST or PUT targets"
        unsupported(f"{what} (this driver sends GET only)")
    for direction in BOTH:
        if getattr(args, direction, "whole") == "stream" and (stream is None or direction not in streams):
            unsupported(f"--{direction} stream (this driver has no streamed {direction}s)")


def _streamed(args: argparse.Namespace) -> bool:
    return "stream" in (getattr(args, "upload", "whole"), getattr(args, "download", "whole"))


class _Cycle:
    """Worker `index`'s cycle of targets: request k goes to target (index + k) mod T."""

    def __init__(self, forms: list[tuple[str, Any]], index: int):
        self.forms, self.k = forms, index % len(forms)

    def next(self) -> tuple[str, Any]:
        url, form = self.forms[self.k]
        self.k = (self.k + 1) % len(self.forms)
        return url, form


class _Forms(Generic[C, R, U, S]):
    """A driver's request per worker (R: its request's type, sync or async; U, S: its upload's and stream's): the
    one request of every worker, or worker `index`'s cycle of targets."""

    def __init__(self, args: argparse.Namespace, request: R, upload: U | None, stream: S | None,
                 streams: tuple[str, ...] = BOTH):  # fmt: skip
        _refuse(args, upload is not None, stream, streams)
        self.args, self.get, self.upload, self.stream = args, request, upload, stream
        targets = args.target_list
        if targets is None:
            self.one: R | None = self._form(args.method, args.body, args.expected, args.body_size)
        else:
            self.one = None
            self.forms = [(t.url, self._form(t.method, t.body, None, len(t.body or b""))) for t in targets]

    def for_worker(self, index: int) -> R:
        return self.one if self.one is not None else self._cycled(_Cycle(self.forms, index))

    def _cycled(self, cycle: _Cycle) -> R:
        raise NotImplementedError

    def _form(self, method: str, body: bytes | None, expected: bytes | None, size: int) -> R:
        raise NotImplementedError


class SyncForms(_Forms[C, SyncRequest[C], SyncUpload[C], SyncStream[C]]):
    """A sync driver's request per worker."""

    def _cycled(self, cycle: _Cycle) -> SyncRequest[C]:
        def request(client: C, url: str) -> tuple[int, int]:
            target, form = cycle.next()
            return form(client, target)  # type: ignore[no-any-return]

        return request

    def _form(self, method: str, body: bytes | None, expected: bytes | None, size: int) -> SyncRequest[C]:
        args = self.args
        if not _streamed(args):
            if method == "GET":
                return self.get
            assert self.upload is not None
            if expected is None:
                assert body is not None
                return unchecked(self.upload, method, body)
            return checked(self.upload, method, body if body is not None else b"", expected)
        stream = self.stream
        assert stream is not None
        pattern, chunk = args.pattern, args.chunk_size
        down = chunk if args.download == "stream" else None
        up = args.upload == "stream"

        def request(client: C, url: str) -> tuple[int, int]:
            content: bytes | Iterable[bytes] | None = None
            if method != "GET":
                if not up:
                    content = body
                else:
                    content = pattern.chunks(size) if body is None else body_chunks(body, chunk)
            with stream(client, method, url, content, down) as (status, pieces):
                if expected is not None and status == 200:
                    answer = Answer(expected, size, pattern, body)
                    for piece in pieces:
                        answer.feed(piece)
                    answer.check()
                    return status, answer.nbytes
                nbytes = 0
                for piece in pieces:
                    nbytes += len(piece)
                return status, nbytes

        return request


class AsyncForms(_Forms[C, AsyncRequest[C], AsyncUpload[C], AsyncStream[C]]):
    """An async driver's request per worker."""

    def _cycled(self, cycle: _Cycle) -> AsyncRequest[C]:
        async def request(client: C, url: str) -> tuple[int, int]:
            target, form = cycle.next()
            return await form(client, target)  # type: ignore[no-any-return]

        return request

    def _form(self, method: str, body: bytes | None, expected: bytes | None, size: int) -> AsyncRequest[C]:
        args = self.args
        if not _streamed(args):
            if method == "GET":
                return self.get
            assert self.upload is not None
            if expected is None:
                assert body is not None
                return unchecked_async(self.upload, method, body)
            return checked_async(self.upload, method, body if body is not None else b"", expected)
        stream = self.stream
        assert stream is not None
        pattern, chunk = args.pattern, args.chunk_size
        down = chunk if args.download == "stream" else None
        up = args.upload == "stream"

        async def request(client: C, url: str) -> tuple[int, int]:
            content: bytes | AsyncIterable[bytes] | None = None
            if method != "GET":
                if not up:
                    content = body
                else:
                    content = pattern.achunks(size) if body is None else abody_chunks(body, chunk)
            async with stream(client, method, url, content, down) as (status, pieces):
                if expected is not None and status == 200:
                    answer = Answer(expected, size, pattern, body)
                    async for piece in pieces:
                        answer.feed(piece)
                    answer.check()
                    return status, answer.nbytes
                nbytes = 0
                async for piece in pieces:
                    nbytes += len(piece)
                return status, nbytes

        return request
