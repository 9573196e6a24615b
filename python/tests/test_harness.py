"""The Python drivers' harness (clientbench/harness.py): failure reasons are `<Class>: <message>` with the classes
shared by the three languages' harnesses (docs/raw-format.md, "Failure reasons")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import beast_client
import pytest
import reqwest_client
from clientbench.harness import FAILURE_CLASSES, describe, failure_class


def test_the_documented_classes_are_there():
    documented = {"TimeoutError", "ConnectionError", "ProtocolError", "InvalidUrl", "InvalidRequest", "Cancelled"}
    assert documented <= set(FAILURE_CLASSES) and FAILURE_CLASSES[-1] == "Error"  # the catch-all last


@pytest.mark.parametrize(
    "exc, reason",
    [
        (TimeoutError(), "TimeoutError"),
        (TimeoutError("timed out"), "TimeoutError: timed out"),  # the class's own name is not repeated
        (asyncio.TimeoutError(), "TimeoutError"),
        (ConnectionRefusedError(111, "refused"), "ConnectionError: ConnectionRefusedError: [Errno 111] refused"),
        (ConnectionResetError(), "ConnectionError: ConnectionResetError"),
        (beast_client.ProtocolError("malformed HTTP response"), "ProtocolError: malformed HTTP response"),
        (reqwest_client.ProtocolError("invalid HTTP version parsed"), "ProtocolError: invalid HTTP version parsed"),
        (ValueError("invalid header name"), "InvalidRequest: ValueError: invalid header name"),
        (asyncio.CancelledError(), "Cancelled: CancelledError"),
        (RuntimeError("boom"), "Error: RuntimeError: boom"),
        (KeyError("k"), "Error: KeyError: 'k'"),
        (RuntimeError("two\nlines"), "Error: RuntimeError: two lines"),  # one line
        (RuntimeError("  padded \n"), "Error: RuntimeError: padded"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)  # fmt: skip
def test_describe(exc, reason):
    assert describe(exc) == reason
    assert reason.split(":", 1)[0] == failure_class(exc) in FAILURE_CLASSES


def case(module: str, name: str, factory: Callable[[object], BaseException], cls: str):
    """`module.name(...)` (made by factory(module)) must be classified as `cls` (docs/raw-format.md)."""

    def make() -> BaseException:
        return factory(pytest.importorskip(module) if module != "builtins" else None)

    return pytest.param(make, cls, id=f"{module}.{name}")


LIBRARY_EXCEPTIONS = [
    case("requests", "ReadTimeout", lambda m: m.exceptions.ReadTimeout("read timed out"), "TimeoutError"),
    case("requests", "ConnectTimeout", lambda m: m.exceptions.ConnectTimeout("connect timed out"), "TimeoutError"),
    case("requests", "ConnectionError", lambda m: m.exceptions.ConnectionError("refused"), "ConnectionError"),
    case("requests", "InvalidURL", lambda m: m.exceptions.InvalidURL("bad"), "InvalidUrl"),
    case("requests", "MissingSchema", lambda m: m.exceptions.MissingSchema("no scheme"), "InvalidUrl"),
    case("requests", "InvalidSchema", lambda m: m.exceptions.InvalidSchema("ftp"), "InvalidUrl"),
    case("requests", "InvalidHeader", lambda m: m.exceptions.InvalidHeader("bad header"), "InvalidRequest"),
    case("aiohttp", "ServerDisconnectedError", lambda m: m.ServerDisconnectedError(), "ConnectionError"),
    case(
        "aiohttp", "InvalidUrlClientError", lambda m: m.InvalidUrlClientError("http://127.0.0.1:99999/"), "InvalidUrl"
    ),
    case("aiohttp", "ServerTimeoutError", lambda m: m.ServerTimeoutError("timeout"), "TimeoutError"),
    case("httpx", "ConnectError", lambda m: m.ConnectError("refused"), "ConnectionError"),
    case("httpx", "ReadTimeout", lambda m: m.ReadTimeout("timeout"), "TimeoutError"),
    case("httpx", "InvalidURL", lambda m: m.InvalidURL("bad"), "InvalidUrl"),
    case(
        "urllib3", "ReadTimeoutError", lambda m: m.exceptions.ReadTimeoutError(None, "/", "timed out"), "TimeoutError"
    ),
    case(
        "urllib3", "NewConnectionError", lambda m: m.exceptions.NewConnectionError(None, "refused"), "ConnectionError"
    ),
    # URL, reset and libcurl cases
    case(
        "aiohttp",
        "NonHttpUrlClientError",
        lambda m: m.NonHttpUrlClientError("ftp://127.0.0.1/"),
        "InvalidUrl",
    ),
    case(
        "aiohttp",
        "ClientOSError",
        lambda m: m.ClientOSError(104, "Connection reset by peer"),
        "ConnectionError",
    ),
    case(
        "httpx",
        "UnsupportedProtocol",
        lambda m: m.UnsupportedProtocol("unsupported protocol 'ftp://'"),
        "InvalidUrl",
    ),
    case("httpx", "ReadError", lambda m: m.ReadError("Connection reset by peer"), "ConnectionError"),
    case(
        "urllib3",
        "LocationParseError",
        lambda m: m.exceptions.LocationParseError("http://127.0.0.1:99999/"),
        "InvalidUrl",
    ),
    case("pycurl", "error-7", lambda m: m.error(7, "Failed to connect"), "ConnectionError"),
    case("pycurl", "error-28", lambda m: m.error(28, "Operation timed out"), "TimeoutError"),
    case("pycurl", "error-3", lambda m: m.error(3, "URL rejected"), "InvalidUrl"),
    # our bindings raise ValueError for a URL they cannot use (and for a bad method or header)
    case(
        "builtins",
        "ValueError-url",
        lambda m: ValueError("invalid URL 'ftp://127.0.0.1/': unsupported scheme 'ftp' (plain http:// only)"),
        "InvalidUrl",
    ),
]


@pytest.mark.parametrize("make, cls", LIBRARY_EXCEPTIONS)
def test_library_exceptions_are_classified(make, cls):
    exc = make()
    reason = describe(exc)
    assert reason.startswith(f"{cls}: "), reason
    name = type(exc).__name__
    if name != cls:  # the library's own exception name is kept in the message
        assert reason.startswith(f"{cls}: {name}"), reason


def test_every_exception_gets_a_class():
    for exc in (
        BaseException(),
        Exception(),
        OSError(5, "I/O error"),
        UnicodeEncodeError("utf-8", "\udc80", 0, 1, "x"),
        json.JSONDecodeError("x", "", 0),
    ):
        assert failure_class(exc) in FAILURE_CLASSES
        assert describe(exc).split(":", 1)[0] == failure_class(exc)
