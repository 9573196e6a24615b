import os
from collections.abc import Mapping
from types import TracebackType

__version__: str
boost_version: str

class ProtocolError(OSError):
    """The server sent a malformed HTTP response."""

class TLSError(ConnectionError):
    """A TLS failure: the server's certificate is untrusted, expired or not for this host name / IP address,
    or the handshake failed (no common protocol, an alert, an https:// URL to a plain-HTTP server)."""

class Response:
    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> dict[str, str]:
        """A new dict on each access: lower-case names, repeated fields joined with ', '."""
    @property
    def body(self) -> bytes: ...

class Client:
    def __init__(self, timeout: float = 30.0, verify: bool | str | os.PathLike[str] = True) -> None:
        """timeout: seconds for each whole request (connect, TLS handshake, send, receive the body), > 0.

        verify (https:// URLs), as in requests: True = the system's trust store; a path = trust the CA
        certificates in this PEM file (or c_rehash directory) instead; False = no verification (UNSAFE).
        Raises FileNotFoundError (or PermissionError, another OSError) when the CA bundle cannot be opened,
        ValueError when it holds no PEM certificate (or the path is empty), TypeError for another type.
        """
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
    def verify(self) -> bool | str | os.PathLike[str]:
        """The verify argument, as given."""
    @property
    def tls_info(self) -> dict[str, str] | None:
        """{'version': ..., 'cipher': ...} of the most recent connection (OpenSSL's names); None for http."""
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
