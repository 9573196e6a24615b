import asyncio
import os
from collections.abc import (
    AsyncIterable,
    Awaitable,
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    Sequence,
    ValuesView,
)
from types import TracebackType
from typing import IO, Any, Protocol, TypedDict, final

from typing_extensions import Buffer

__version__: str
boost_version: str

class ProtocolError(OSError):
    """The server sent a malformed HTTP response, or a redirect whose Location cannot be followed."""

class BodyTooLarge(ProtocolError):
    """A response body larger than the client's max_body_size (decoded), or than 1 GiB; nothing of it is kept."""

class TLSError(ConnectionError):
    """A TLS failure: the server's certificate is untrusted, expired or not for this host name / IP address,
    or the handshake failed (no common protocol, an alert, an https:// URL to a plain-HTTP server)."""

class TooManyRedirects(OSError):
    """More redirects than max_redirects; the message names the last URL."""

class _SupportsRead(Protocol):
    def read(self, /) -> Buffer: ...

_ParamValue = str | int | float | None
_Params = Mapping[str, _ParamValue | Sequence[_ParamValue]] | Sequence[tuple[str, _ParamValue]]
_HeadersArg = Mapping[str, str] | Sequence[tuple[str, str]]
_Body = Buffer | Iterable[Buffer] | _SupportsRead | IO[bytes]
#: AsyncClient's body: Client's, or an async iterable of chunks
_AsyncBody = _Body | AsyncIterable[Buffer]

class _ClientOptions(TypedDict, total=False):
    """The constructor's keyword-only options (their defaults: Client's signature), taken as **options by
    beast_client.AsyncClient; RawAsyncClient and Client list them themselves."""

    connect_timeout: float | None
    read_timeout: float | None
    follow_redirects: bool
    max_redirects: int
    headers: _HeadersArg | None
    decompress: bool
    user_agent: str | None
    cookies: bool
    max_body_size: int | None
    max_connections: int | None
    trust_env: bool
    proxy: str | None

@final
class Headers:
    """Response headers: a case-insensitive, multi-valued Mapping[str, str] in the order received."""
    def __init__(self, items: _HeadersArg | None = None) -> None: ...
    def __getitem__(self, key: str, /) -> str: ...
    def get(self, key: str, default: Any = None) -> Any:
        """All values of the field joined with ', ', or default when it is absent."""
    def get_all(self, key: str) -> list[str]:
        """Every value of the field, in order, never joined (an empty list when absent)."""
    def multi_items(self) -> list[tuple[str, str]]:
        """Every field as (lower-case name, value), in the order received."""
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: object, /) -> bool: ...
    def keys(self) -> KeysView[str]: ...
    def values(self) -> ValuesView[str]: ...
    def items(self) -> ItemsView[str, str]: ...
    def __eq__(self, other: object, /) -> bool: ...
    __hash__: None  # type: ignore[assignment]

@final
class Response:
    @property
    def status(self) -> int: ...
    @property
    def reason(self) -> str: ...
    @property
    def url(self) -> str:
        """The final URL, after redirects (percent-encoded)."""
    @property
    def headers(self) -> Headers:
        """As received (Content-Encoding / Content-Length describe the encoded body); the same object each time."""
    @property
    def body(self) -> bytes:
        """The whole body, decoded when it was gzip / deflate / br / zstd compressed."""
    def text(self) -> str:
        """The body decoded with the Content-Type's charset (UTF-8 by default), errors replaced."""
    def json(self) -> Any:
        """json.loads(body)."""
    @property
    def phases(self) -> dict[str, float]:
        """Where the request's time went, in seconds: connect, tls, send, wait, receive (dns first when a host
        name was resolved); connect and tls are 0 on a re-used connection, redirects' exchanges add up."""

@final
class _BytesIterator:
    def __iter__(self) -> _BytesIterator: ...
    def __next__(self) -> bytes: ...

@final
class StreamResponse:
    @property
    def status(self) -> int: ...
    @property
    def reason(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def headers(self) -> Headers: ...
    @property
    def closed(self) -> bool: ...
    def iter_bytes(self) -> Iterator[bytes]:
        """The body's chunks as they arrive (decoded when compressed); the GIL is released while waiting."""
    def read(self) -> bytes:
        """The rest of the body."""
    def close(self) -> None: ...
    def __enter__(self) -> StreamResponse: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool: ...

class Client:
    def __init__(
        self,
        timeout: float | None = None,
        verify: bool | str | os.PathLike[str] = True,
        *,
        connect_timeout: float | None = 10.0,
        read_timeout: float | None = 30.0,
        follow_redirects: bool = True,
        max_redirects: int = 10,
        headers: _HeadersArg | None = None,
        decompress: bool = True,
        user_agent: str | None = None,
        cookies: bool = False,
        max_body_size: int | None = None,
        max_connections: int | None = None,
        trust_env: bool = True,
        proxy: str | None = None,
    ) -> None:
        """timeout: seconds for each whole request (connect, TLS handshake, send, receive the body), > 0;
        None: no total limit. connect_timeout: resolve + TCP connect + TLS handshake. read_timeout: the
        longest wait for the next bytes of the response.

        verify (https:// URLs), as in requests: True = the system's trust store; a path = trust the CA
        certificates in this PEM file (or c_rehash directory) instead; False = no verification (UNSAFE).
        Raises FileNotFoundError (or PermissionError, another OSError) when the CA bundle cannot be opened,
        ValueError when it holds no PEM certificate (or the path is empty), TypeError for another type.

        cookies=True: a cookie jar for request() and stream(). max_body_size: the largest body request()
        keeps, decoded, in bytes (BodyTooLarge beyond it).

        The client may be shared by threads: each request takes a connection of its own from the pool.
        max_connections: the most connections open or in use per origin (None: no bound); a request that
        finds them all busy waits for one, at most connect_timeout and what is left of its timeout.

        trust_env: proxies from HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY (and the lower-case forms), read
        now. proxy: "http://[user:password@]host:port" for every URL, winning over the environment (ValueError for
        another scheme or a bad URL).
        """
    def get(self, url: str, *, release_gil: bool = True) -> int:
        """GET url, read the whole body, return the status (body size: last_body_bytes)."""
    def fetch_len(self, url: str, *, release_gil: bool = True) -> tuple[int, int]:
        """GET url, read the whole body, return (status, body bytes)."""
    def fetch_phases(self, url: str, *, release_gil: bool = True) -> tuple[int, int, dict[str, int]]:
        """fetch_len(url), also returning where the request's time went: (status, body bytes, {phase: ns})."""
    def fetch(
        self, url: str, *, method: str = "GET", body: Buffer | None = None, release_gil: bool = True
    ) -> tuple[int, bytes]:
        """method url exactly as given, with body (bytes-like) if any; read the whole body, return (status, body)."""
    def request(
        self,
        method: str,
        url: str,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: _Body | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
        release_gil: bool = True,
    ) -> Response: ...
    def stream(
        self,
        method: str,
        url: str,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: _Body | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> StreamResponse: ...
    @property
    def last_body_bytes(self) -> int: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def connect_timeout(self) -> float | None: ...
    @property
    def read_timeout(self) -> float | None: ...
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

@final
class Completer:
    """Internal: resolves one event loop's futures (register fileno() with loop.add_reader(fd, drain))."""
    def __init__(self) -> None: ...
    def fileno(self) -> int: ...
    def drain(self) -> None: ...
    def abandon(self, future: asyncio.Future[Any]) -> bool: ...

@final
class RawStream:
    """Internal: the response of RawAsyncClient.stream. Use beast_client.AsyncClient.stream."""
    @property
    def status(self) -> int: ...
    @property
    def url(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def headers(self) -> Headers: ...
    def next_chunk(self, completer: Completer) -> Awaitable[bytes | None]: ...
    def close(self) -> None: ...

@final
class RawUpload:
    """Internal: an AsyncClient request's streamed body, fed chunk by chunk from the loop's thread."""
    def __init__(self) -> None: ...
    def send(self, chunk: Buffer, completer: Completer) -> bool | Awaitable[bool]: ...
    def finish(self) -> None: ...
    def fail(self, message: str) -> None: ...

@final
class RawAsyncClient:
    """Internal: methods return futures of the running loop. Use beast_client.AsyncClient."""
    def __init__(
        self,
        timeout: float | None = None,
        verify: bool | str | os.PathLike[str] = True,
        *,
        connect_timeout: float | None = 10.0,
        read_timeout: float | None = 30.0,
        follow_redirects: bool = True,
        max_redirects: int = 10,
        headers: _HeadersArg | None = None,
        decompress: bool = True,
        user_agent: str | None = None,
        cookies: bool = False,
        max_body_size: int | None = None,
        max_connections: int | None = None,
        trust_env: bool = True,
        proxy: str | None = None,
    ) -> None: ...
    def get(self, url: str, completer: Completer) -> Awaitable[int]: ...
    def fetch_len(self, url: str, completer: Completer) -> Awaitable[tuple[int, int]]: ...
    def fetch_phases(self, url: str, completer: Completer) -> Awaitable[tuple[int, int, dict[str, int]]]: ...
    def fetch(
        self, url: str, completer: Completer, *, method: str = "GET", body: Buffer | None = None
    ) -> Awaitable[tuple[int, bytes]]: ...
    # the loop path: a future of the running loop, or None when the I/O thread's methods above take the request
    def loop_get(self, url: str, /) -> asyncio.Future[int] | None: ...
    def loop_fetch_len(self, url: str, /) -> asyncio.Future[tuple[int, int]] | None: ...
    def loop_fetch(self, url: str, method: str, body: Buffer | None, /) -> asyncio.Future[tuple[int, bytes]] | None: ...
    def loop_fetch_phases(self, url: str, /) -> asyncio.Future[tuple[int, int, dict[str, int]]] | None: ...
    def abandon(self, future: asyncio.Future[Any]) -> bool: ...
    @property
    def _loop_requests(self) -> int: ...
    def request(
        self,
        method: str,
        url: str,
        completer: Completer,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: Buffer | RawUpload | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> Awaitable[Response]: ...
    def stream(
        self,
        method: str,
        url: str,
        completer: Completer,
        *,
        params: _Params | None = None,
        headers: _HeadersArg | None = None,
        body: Buffer | RawUpload | None = None,
        json: Any = None,
        timeout: float | None = None,
        follow_redirects: bool | None = None,
    ) -> Awaitable[RawStream]: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def connect_timeout(self) -> float | None: ...
    @property
    def read_timeout(self) -> float | None: ...
    @property
    def verify(self) -> bool | str | os.PathLike[str]: ...
    @property
    def tls_info(self) -> dict[str, str] | None: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
