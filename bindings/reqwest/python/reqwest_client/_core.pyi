from types import TracebackType
from typing import Awaitable, Mapping, Optional, Tuple, Type

__version__: str
reqwest_version: str

class ProtocolError(OSError):
    """The server's response is not valid HTTP/1.1 (bad status line, headers or framing)."""

class Response:
    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> dict[str, str]:
        """A new dict on each access: lower-case names, repeated headers joined with ", "."""
    @property
    def body(self) -> bytes: ...

class Client:
    def __init__(self, timeout: float = 30.0) -> None: ...
    def get(self, url: str, *, release_gil: bool = True) -> int:
        """GET url, read the whole body, return the status (body size: last_body_bytes)."""
    def fetch_len(self, url: str, *, release_gil: bool = True) -> Tuple[int, int]:
        """GET url, read the whole body, return (status, body bytes)."""
    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Optional[Mapping[str, str]] = None,
        body: Optional[bytes | bytearray] = None,
        release_gil: bool = True,
    ) -> Response: ...
    @property
    def last_body_bytes(self) -> int: ...
    @property
    def timeout(self) -> float: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Client": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

class Completer:
    """Internal: resolves one event loop's futures (register fileno() with loop.add_reader(fd, drain))."""
    def __init__(self) -> None: ...
    def fileno(self) -> int: ...
    def drain(self) -> None: ...

class RawAsyncClient:
    """Internal: methods return futures of the running loop. Use reqwest_client.AsyncClient."""
    def __init__(self, timeout: float = 30.0) -> None: ...
    def get(self, url: str, completer: Completer) -> Awaitable[int]: ...
    def fetch_len(self, url: str, completer: Completer) -> Awaitable[Tuple[int, int]]: ...
    def request(
        self,
        method: str,
        url: str,
        completer: Completer,
        *,
        headers: Optional[Mapping[str, str]] = None,
        body: Optional[bytes | bytearray] = None,
    ) -> Awaitable[Response]: ...
    @property
    def timeout(self) -> float: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
