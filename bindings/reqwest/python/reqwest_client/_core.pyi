import os
from collections.abc import Awaitable, Mapping
from types import TracebackType
from typing import final

__all__ = [
    "Client",
    "RawAsyncClient",
    "Completer",
    "Response",
    "ProtocolError",
    "TLSError",
    "__version__",
    "reqwest_version",
]

__version__: str
reqwest_version: str

class ProtocolError(OSError):
    """The server's response is not valid HTTP/1.1 (bad status line, headers or framing)."""

class TLSError(ConnectionError):
    """TLS failed: the server's certificate is untrusted, expired or for another name, the handshake failed,
    or the server does not speak TLS."""

@final
class Response:
    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> dict[str, str]:
        """A new dict on each access: lower-case names, repeated headers joined with ", "."""
    @property
    def body(self) -> bytes: ...

@final
class Client:
    """Synchronous HTTP/1.1 client (http:// and https://) with a keep-alive connection pool.

    `verify`: True (the system's roots), False (no certificate check: unsafe) or the path of a CA bundle
    (PEM), as requests' `verify=`."""
    def __new__(cls, timeout: float = 30.0, verify: bool | str | os.PathLike[str] = True) -> Client: ...
    def get(self, url: str, *, release_gil: bool = True) -> int:
        """GET url, read the whole body, return the status (body size: last_body_bytes)."""
    def fetch_len(self, url: str, *, release_gil: bool = True) -> tuple[int, int]:
        """GET url, read the whole body, return (status, body bytes)."""
    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | bytearray | None = None,
        release_gil: bool = True,
    ) -> Response: ...
    @property
    def last_body_bytes(self) -> int: ...
    @property
    def timeout(self) -> float: ...
    @property
    def verify(self) -> bool | str | os.PathLike[str]:
        """The verify argument, as given (True when omitted)."""
    @property
    def tls_info(self) -> dict[str, str | None] | None:
        """{'version': 'TLSv1.3', 'cipher': None} of the most recent response's connection; None for http."""
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> Client: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool: ...

@final
class Completer:
    """Internal: resolves one event loop's futures (register fileno() with loop.add_reader(fd, drain))."""
    def __init__(self) -> None: ...
    def fileno(self) -> int: ...
    def drain(self) -> None: ...

@final
class RawAsyncClient:
    """Internal: methods return futures of the running loop. Use reqwest_client.AsyncClient."""
    def __new__(cls, timeout: float = 30.0, verify: bool | str | os.PathLike[str] = True) -> RawAsyncClient: ...
    def get(self, url: str, completer: Completer) -> Awaitable[int]: ...
    def fetch_len(self, url: str, completer: Completer) -> Awaitable[tuple[int, int]]: ...
    def request(
        self,
        method: str,
        url: str,
        completer: Completer,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | bytearray | None = None,
    ) -> Awaitable[Response]: ...
    @property
    def timeout(self) -> float: ...
    @property
    def verify(self) -> bool | str | os.PathLike[str]: ...
    @property
    def tls_info(self) -> dict[str, str | None] | None: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
