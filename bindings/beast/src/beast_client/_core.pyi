from collections.abc import Mapping
from types import TracebackType

__version__: str
boost_version: str

class ProtocolError(OSError):
    """The server sent a malformed HTTP response."""

class Response:
    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> dict[str, str]:
        """A new dict on each access: lower-case names, repeated fields joined with ', '."""
    @property
    def body(self) -> bytes: ...

class Client:
    def __init__(self, timeout: float = 30.0) -> None: ...
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
        body: bytes | bytearray | memoryview | None = None,
        release_gil: bool = True,
    ) -> Response: ...
    @property
    def last_body_bytes(self) -> int: ...
    @property
    def timeout(self) -> float: ...
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
    @property
    def _connections_opened(self) -> int: ...
