"""Streamed bodies and targets (docs/raw-format.md, "Streamed bodies", "Targets"): the chunks a streamed upload is
made of, the check of an upload's answer read in pieces, and the targets file each worker cycles through.

A plugin with streamed bodies gives the harness one more form of a request, `stream(client, method, url, content,
chunk_size)`: a context manager (an async one for an async library) of `(status, pieces)`, where `content` is
None (GET), the body's bytes, or an iterator (an async iterator) of chunks, and `pieces` iterates the response's
body, in chunks of at most `chunk_size` bytes, or whole (one piece) when `chunk_size` is None. The harness counts
and checks the pieces here, never keeping them."""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

from .. import contract
from .failures import DigestMismatch

ALPHABET = b"abcdefghijklmnopqrstuvwxyz"


class Pattern:
    """The contract's body (byte i is 'a' + i mod 26) in chunks of `chunk` bytes: the 26 chunks that can start a
    chunk are made once, so a streamed upload of any size allocates nothing per chunk."""

    def __init__(self, chunk: int):
        self.chunk = chunk
        self._text = ALPHABET * (chunk // len(ALPHABET) + 2)
        self._starts: dict[int, bytes] = {}

    def at(self, offset: int, size: int) -> bytes:
        """`size` (at most the chunk size) bytes of the body from `offset`."""
        phase = offset % len(ALPHABET)
        if size == self.chunk:
            cached = self._starts.get(phase)
            if cached is None:
                cached = self._starts[phase] = self._text[phase : phase + size]
            return cached
        return self._text[phase : phase + size]

    def chunks(self, size: int) -> Iterator[bytes]:
        """A body of `size` bytes, chunk after chunk, each made when the client asks for it."""
        for offset in range(0, size, self.chunk):
            yield self.at(offset, min(self.chunk, size - offset))

    async def achunks(self, size: int) -> AsyncIterator[bytes]:
        for piece in self.chunks(size):
            yield piece


def body_chunks(body: bytes, chunk: int) -> Iterator[bytes]:
    """A target's body (read from its file) as chunks: slices of the bytes the driver holds already."""
    view = memoryview(body)
    for offset in range(0, len(body), chunk):
        yield bytes(view[offset : offset + chunk])


async def abody_chunks(body: bytes, chunk: int) -> AsyncIterator[bytes]:
    for piece in body_chunks(body, chunk):
        yield piece


class Answer:
    """An upload's answer, fed in pieces: right when it is the `/upload` line of the body or, byte for byte, the
    body itself (an echo). Both are followed at once; which one it is, the answer's length says at the end."""

    __slots__ = ("line", "size", "pattern", "body", "nbytes", "line_ok", "echo_ok", "head")

    def __init__(self, line: bytes, size: int, pattern: Pattern | None, body: bytes | None):
        self.line, self.size, self.pattern, self.body = line, size, pattern, body
        self.nbytes = 0
        self.line_ok = self.echo_ok = True
        self.head = b""  # the answer's first bytes, for the failure's message

    def feed(self, piece: bytes) -> None:
        offset, n = self.nbytes, len(piece)
        self.nbytes += n
        if len(self.head) < 100:
            self.head += piece[: 100 - len(self.head)]
        if self.line_ok:
            self.line_ok = offset + n <= len(self.line) and piece == self.line[offset : offset + n]
        if self.echo_ok:
            if offset + n > self.size:
                self.echo_ok = False
            elif self.body is not None:
                self.echo_ok = piece == self.body[offset : offset + n]
            else:
                assert self.pattern is not None
                self.echo_ok = all(
                    piece[i : i + self.pattern.chunk] == self.pattern.at(offset + i, min(self.pattern.chunk, n - i))
                    for i in range(0, n, self.pattern.chunk)
                )

    def check(self) -> None:
        """Raise DigestMismatch unless the whole answer was the line or the echo."""
        if (self.line_ok and self.nbytes == len(self.line)) or (self.echo_ok and self.nbytes == self.size):
            return
        raise DigestMismatch(self.head, self.line, nbytes=self.nbytes)


@dataclass(frozen=True)
class Target:
    method: str
    url: str
    body: bytes | None  # None: a GET's (no body); a POST's or PUT's is b"" without a body file


def load_targets(
    p: argparse.ArgumentParser, path: str, url_problem: Callable[[str], str | None], max_body: int
) -> list[Target]:
    """The drivers' targets file: `METHOD URL` or `METHOD URL @BODYFILE` per line (BODYFILE an absolute path, at
    most `max_body` bytes); blank lines, lines of whitespace and lines whose first word starts with `#` are
    skipped. A file that cannot be read, with no target, or with a line that is not one is bad usage, in the
    contract's wording (schema/contract.json)."""
    rule = contract.rule
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        p.error(f"{rule('targets-unreadable').text(path=path)} ({exc})")
    targets: list[Target] = []
    bodies: dict[str, bytes] = {}  # a body file named by several targets is read once
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        at = f"--targets {path}, line {number}: "
        if fields[0] not in ("GET", "POST", "PUT") or len(fields) not in (2, 3):
            p.error(f"{at}expected 'METHOD URL [@BODYFILE]', got {line[:80]!r}")
        if (problem := url_problem(fields[1])) is not None:
            p.error(at + "the URL " + problem.removeprefix("--url: "))
        body = None if fields[0] == "GET" else b""  # a POST or PUT without a body file sends an empty body
        if len(fields) == 3:
            if fields[0] == "GET":
                p.error(rule("targets-get-body").text(path=path, line=number))
            name = fields[2][1:]
            if not fields[2].startswith("@") or not os.path.isabs(name):
                p.error(f"{rule('targets-relative-body').text(path=path, line=number)}, got {fields[2]!r}")
            if name not in bodies:
                try:
                    if os.stat(name).st_size > max_body:
                        p.error(f"{at}the body file {name} is above {max_body} bytes (1 GiB)")
                    with open(name, "rb") as f:
                        bodies[name] = f.read()
                except OSError as exc:
                    p.error(f"{rule('targets-body-unreadable').text(path=path, line=number, body=name)} ({exc})")
            body = bodies[name]
        targets.append(Target(fields[0], fields[1], body))
    if not targets:
        p.error(rule("targets-empty").text(path=path))
    return targets
