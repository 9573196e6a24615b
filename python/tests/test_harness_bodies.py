"""The Python harness's streamed bodies and targets (harness/bodies.py, harness/forms.py; docs/raw-format.md,
"Streamed bodies" and "Targets"): the chunks, an answer checked in pieces, the flags' usage errors, and the
documents of fake drivers whose streamed form plays the server's /upload, /echo and /bytes/N."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from clientbench import harness
from clientbench.harness.bodies import Answer, Pattern, body_chunks
from clientbench.harness.failures import DigestMismatch
from clientbench.schema import validate_raw

URL = "http://127.0.0.1:1"
INFO = {"language": "Python", "library": "fake", "library_version": "0", "mode": "sync", "gil": None}


def parse(argv: list[str]) -> argparse.Namespace:
    args: argparse.Namespace = harness.parser("test driver").parse_args(["--url", URL + "/", *argv])
    return args


def test_the_pattern_in_chunks_is_the_contract_body() -> None:
    for size, chunk in ((0, 7), (1, 7), (100_003, 4096), (26 * 5, 26), (70, 1)):
        pattern = Pattern(chunk)
        pieces = list(pattern.chunks(size))
        assert b"".join(pieces) == harness.upload_body(size)
        assert all(len(p) == chunk for p in pieces[:-1])
    pattern = Pattern(1000)
    assert pattern.at(2000, 1000) is pattern.at(2000 + 26 * 1000, 1000)  # the same phase: made once
    assert harness.upload_answer(Pattern(10).chunks(100)) == harness.upload_answer(harness.upload_body(100))
    assert list(body_chunks(b"abcdefg", 3)) == [b"abc", b"def", b"g"]


@pytest.mark.parametrize("piece", [1, 5, 64, 10_000])
def test_an_answer_in_pieces_is_the_line_or_the_echo(piece: int) -> None:
    body = harness.upload_body(300)
    line = harness.upload_answer(body)

    def fed(answer_bytes: bytes, pattern: Pattern | None, whole: bytes | None) -> Answer:
        answer = Answer(line, len(body), pattern, whole)
        for i in range(0, len(answer_bytes), piece):
            answer.feed(answer_bytes[i : i + piece])
        return answer

    for pattern, whole in ((Pattern(16), None), (None, body)):  # a streamed upload's, a whole one's
        fed(line, pattern, whole).check()  # the /upload line
        fed(body, pattern, whole).check()  # the echo
        for wrong in (line[:-1], line + b"x", body[:-1], body[:-1] + b"!", b"", b"x" * len(line)):
            with pytest.raises(DigestMismatch) as info:
                fed(wrong, pattern, whole).check()
            assert info.value.nbytes == len(wrong)  # what arrived still counts as received


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["--chunk-size", "0"], "--chunk-size"),
        (["--chunk-size", str((16 << 20) + 1)], "--chunk-size"),
        (["--upload", "stream"], "--upload"),  # with GET and no --targets
        (["--download", "sometimes"], "--download"),
        (["--targets", "/no/such/file"], "--targets"),
        (["--http", "4"], "--http"),
    ],
)
def test_bad_usage_names_the_flag(argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parse(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err, err


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no targets"),
        ("DELETE http://h/\n", "line 1"),
        ("GET http://h/ @body\n", "line 1"),
        ("GET /relative\n", "--targets"),  # the drivers' form has absolute URLs only
        ("POST http://h/ @/no/such/body\n", "line 1: cannot read the body file"),
    ],
)
def test_a_bad_targets_file_is_bad_usage(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.txt"
    path.write_text(text)
    with pytest.raises(SystemExit) as info:
        parse(["--targets", str(path)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    with pytest.raises(SystemExit):
        parse(["--targets", str(path), "--method", "POST"])


# -- fake drivers whose streamed form plays the server ----------------------------------------------------------


def _answer(path: str, body: bytes) -> bytes:
    if path == "/echo":
        return body
    if path == "/upload":
        return f"{len(body)} {hashlib.sha256(body).hexdigest()}".encode()
    if path.startswith("/bytes/"):
        return harness.upload_body(int(path.removeprefix("/bytes/")))
    return b"Hello, World!"


class Seen:
    """What the fake server saw: each request's method, path, body length, and whether it came in chunks."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, int, bool]] = []
        self.largest_piece = 0


def _pieces(data: bytes, chunk: int | None, seen: Seen) -> Iterator[bytes]:
    size = chunk or max(len(data), 1)
    for i in range(0, len(data), size):
        seen.largest_piece = max(seen.largest_piece, len(data[i : i + size]))
        yield data[i : i + size]


def fake_stream_sync(seen: Seen, wrong: bool = False) -> harness.SyncDriver[Any]:
    @contextlib.contextmanager
    def stream(
        client: object, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
    ) -> Iterator[tuple[int, Iterable[bytes]]]:
        body = content if isinstance(content, bytes) or content is None else b"".join(content)
        path = url.removeprefix(URL)
        seen.requests.append((method, path, len(body or b""), not isinstance(content, bytes | None)))
        yield 200, _pieces(b"not it" if wrong else _answer(path, body or b""), chunk, seen)

    def request(client: object, url: str) -> tuple[int, int]:
        seen.requests.append(("GET", url.removeprefix(URL), 0, False))
        return 200, len(_answer(url.removeprefix(URL), b""))

    def upload(client: object, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        seen.requests.append((method, url.removeprefix(URL), len(body), False))
        return 200, _answer(url.removeprefix(URL), body)

    return harness.SyncDriver(lambda a: object(), request, upload=upload, stream=stream)


def fake_stream_async(seen: Seen) -> harness.AsyncDriver[Any]:
    @contextlib.asynccontextmanager
    async def stream(
        client: object, method: str, url: str, content: bytes | AsyncIterable[bytes] | None, chunk: int | None
    ) -> AsyncIterator[tuple[int, AsyncIterable[bytes]]]:
        if content is None or isinstance(content, bytes):
            body = content or b""
        else:
            body = b"".join([piece async for piece in content])
        path = url.removeprefix(URL)
        seen.requests.append((method, path, len(body), not isinstance(content, bytes | None)))

        async def pieces() -> AsyncIterator[bytes]:
            for piece in _pieces(_answer(path, body), chunk, seen):
                await asyncio.sleep(0)
                yield piece

        yield 200, pieces()

    async def make(a: argparse.Namespace) -> object:
        return object()

    async def request(client: object, url: str) -> tuple[int, int]:
        seen.requests.append(("GET", url.removeprefix(URL), 0, False))
        return 200, len(_answer(url.removeprefix(URL), b""))

    async def close(client: object) -> None:
        return None

    return harness.AsyncDriver(make, request, close, stream=stream)


def run(driver: Any, argv: list[str], url: str = URL + "/") -> dict[str, Any]:
    args = harness.parser("test driver").parse_args(["--url", url, *argv])
    doc: dict[str, Any] = driver.run(args, INFO)
    validate_raw(doc)
    return doc


@pytest.mark.parametrize("path, size", [("/upload", 70), ("/echo", 100_000)])
def test_streamed_uploads_and_downloads_are_checked_and_counted(path: str, size: int) -> None:
    seen = Seen()
    argv = ["--workers", "2", "--requests", "3", "--method", "POST", "--body-size", str(size)]
    doc = run(fake_stream_sync(seen), [*argv, "--upload", "stream", "--download", "stream", "--chunk-size", "16"],
              URL + path)  # fmt: skip
    answer = len(_answer(path, harness.upload_body(size)))
    assert all(w["failure_count"] == 0 and w["bytes"] == 3 * answer for w in doc["workers"]), doc["workers"]
    assert seen.requests == [("POST", path, size, True)] * 6 and seen.largest_piece == 16
    wl = doc["workload"]
    assert (wl["upload"], wl["download"], wl["chunk_size"]) == ("stream", "stream", 16)
    doc = run(fake_stream_sync(Seen(), wrong=True), [*argv, "--download", "stream"], URL + path)
    failures = [f for w in doc["workers"] for f in w["failures"]]
    assert len(failures) == 6 and all(f["reason"].startswith("Error: upload digest mismatch") for f in failures)


def test_an_echoed_whole_upload_is_right() -> None:
    doc = run(fake_stream_sync(Seen()), ["--workers", "1", "--requests", "2", "--method", "PUT", "--body-size", "99"],
              URL + "/echo")  # fmt: skip
    assert doc["workers"][0]["failure_count"] == 0 and doc["workers"][0]["bytes"] == 2 * 99


def test_a_streamed_download_async() -> None:
    seen = Seen()
    doc = run(fake_stream_async(seen), ["--workers", "2", "--requests", "2", "--download", "stream", "--chunk-size",
              "1000"], URL + "/bytes/5000")  # fmt: skip
    assert all(w["failure_count"] == 0 and w["bytes"] == 2 * 5000 for w in doc["workers"])
    assert seen.largest_piece == 1000 and seen.requests == [("GET", "/bytes/5000", 0, False)] * 4


def test_a_driver_without_a_streamed_form_is_unsupported(capsys: pytest.CaptureFixture[str]) -> None:
    plain = harness.SyncDriver(lambda a: object(), lambda c, u: (200, 13))
    with pytest.raises(SystemExit) as info:
        run(plain, ["--download", "stream"])
    assert info.value.code == 3
    assert capsys.readouterr().err.startswith("unsupported: --download stream")


@pytest.mark.parametrize("make", [fake_stream_sync, fake_stream_async], ids=["sync", "async"])
def test_targets_are_cycled_from_each_workers_own(make: Any, tmp_path: Path) -> None:
    body = tmp_path / "body.bin"
    body.write_bytes(b"x" * 7)
    targets = tmp_path / "targets.txt"
    targets.write_text(f"GET {URL}/bytes/10\n\n# a comment\nGET {URL}/bytes/200\nPOST {URL}/upload @{body}\n")
    seen = Seen()
    argv = ["--workers", "2", "--requests", "4", "--warmup", "1", "--targets", str(targets)]
    if make is fake_stream_async:
        argv += ["--download", "stream"]  # its only upload form is the streamed one
    doc = run(make(seen), argv)
    assert doc["workload"]["targets"] == str(targets)
    line = len(_answer("/upload", b"x" * 7))
    sizes = [10, 200, line]
    for w, worker in enumerate(doc["workers"]):
        assert worker["failure_count"] == 0
        assert worker["bytes"] == sum(sizes[(w + k) % 3] for k in range(4))  # from target w, k = 0 again
    paths = sorted(p for _, p, _, _ in seen.requests)
    # warm-up: worker 0 from target 0, worker 1 from target 1; timed: targets 0, 1, 2, 0 and 1, 2, 0, 1
    assert paths.count("/bytes/10") == 1 + 2 + 1 and paths.count("/upload") == 1 + 1
    assert ("POST", "/upload", 7, False) in seen.requests  # the body file's bytes, whole
