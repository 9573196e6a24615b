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
from typing import IO, Any, Literal, Protocol, TypedDict, final

from typing_extensions import Buffer, Unpack

__all__ = [
    "Client",
    "RawAsyncClient",
    "RawStream",
    "RawUpload",
    "Completer",
    "Headers",
    "Response",
    "StreamResponse",
    "ProtocolError",
    "BodyTooLarge",
    "TLSError",
    "TooManyRedirects",
    "__version__",
    "reqwest_version",
]

__version__: str
reqwest_version: str

class ProtocolError(OSError):
    """The server's response is not valid HTTP/1.1 (bad status line, headers or framing), or a redirect's
    Location cannot be followed."""

class BodyTooLarge(ProtocolError):
    """A response body larger than the client's max_body_size (decoded); nothing of it is kept."""

class TLSError(ConnectionError):
    """TLS failed: the server's certificate is untrusted, expired or for another name, the handshake failed,
    or the server does not speak TLS."""

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
    RawAsyncClient and reqwest_client.AsyncClient. Client lists them itself: bindings/tests/test_api.py compares
    its stub's text with beast_client's; tests/test_signatures.py checks this list is Client's."""

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
    http2: Literal[False, "alpn", "prior_knowledge"]
    http3: bool

@final
class Headers:
    """Response headers: a case-insensitive, multi-valued Mapping[str, str] in the order received."""
    def __new__(cls, items: _HeadersArg | None = None) -> Headers: ...
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
    def http_version(self) -> str:
        """The response's HTTP version: "HTTP/1.1", "HTTP/2" or "HTTP/3" (of the last hop after redirects)."""
    @property
    def url(self) -> str:
        """The final URL, after redirects (percent-encoded)."""
    @property
    def headers(self) -> Headers:
        """The same object each time. When the body was decoded, reqwest has removed Content-Encoding and
        Content-Length."""
    @property
    def body(self) -> bytes:
        """The whole body, decoded when it was gzip / deflate / br / zstd compressed."""
    def text(self) -> str:
        """The body decoded with the Content-Type's charset (UTF-8 by default), errors replaced."""
    def json(self) -> Any:
        """json.loads(body)."""
    @property
    def phases(self) -> dict[str, float]:
        """The exchange's phases in seconds: connect+tls (dns+connect+tls for a host name; 0 on a reused
        connection), send+wait, receive; over HTTP/3 connect+tls+send+wait and receive."""

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
    def http_version(self) -> str: ...
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

@final
class Client:
    """Synchronous HTTP/1.1 (and HTTP/2) client (http:// and https://) with a keep-alive connection pool."""
    # the options spelled out, not **options: bindings/tests/test_api.py compares this text with beast_client's
    # stub (tests/test_signatures.py: they are _ClientOptions)
    def __new__(
        cls,
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
        http2: Literal[False, "alpn", "prior_knowledge"] = False,
        http3: bool = False,
    ) -> Client: ...
    def get(self, url: str, *, release_gil: bool = True) -> int:
        """GET url, read the whole body, return the status (body size: last_body_bytes)."""
    def fetch_len(self, url: str, *, release_gil: bool = True) -> tuple[int, int]:
        """GET url, read the whole body, return (status, body bytes)."""
    def fetch_phases(self, url: str, *, release_gil: bool = True) -> tuple[int, int, dict[str, int]]:
        """fetch_len, with the request's phases: (status, body bytes, {phase key: ns}) (keys: Response.phases)."""
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
    def abandon(self, future: asyncio.Future[Any]) -> bool: ...

@final
class RawStream:
    """Internal: the response of RawAsyncClient.stream. Use reqwest_client.AsyncClient.stream."""
    @property
    def status(self) -> int: ...
    @property
    def url(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def http_version(self) -> str: ...
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
    """Internal: methods return futures of the running loop. Use reqwest_client.AsyncClient."""
    def __new__(
        cls,
        timeout: float | None = None,
        verify: bool | str | os.PathLike[str] = True,
        **options: Unpack[_ClientOptions],
    ) -> RawAsyncClient: ...
    def get(self, url: str, completer: Completer) -> Awaitable[int]: ...
    def fetch_len(self, url: str, completer: Completer) -> Awaitable[tuple[int, int]]: ...
    def fetch_phases(self, url: str, completer: Completer) -> Awaitable[tuple[int, int, dict[str, int]]]: ...
    def fetch(
        self, url: str, completer: Completer, *, method: str = "GET", body: Buffer | None = None
    ) -> Awaitable[tuple[int, bytes]]: ...
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
    def tls_info(self) -> dict[str, str | None] | None: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
