"""Failure reasons: `<Class>: <message>`, the classes shared by the three languages' harnesses
(docs/raw-format.md, "Failure reasons"), from the exceptions of any Python client library."""

from __future__ import annotations

import errno
import ssl

#: The failure classes, the same in every language's harness (docs/raw-format.md, "Failure reasons").
#: TLSError: an untrusted or expired certificate, a wrong host name, a failed handshake.
FAILURE_CLASSES = (
    "TimeoutError",
    "TLSError",
    "ConnectionError",
    "ProtocolError",
    "InvalidUrl",
    "InvalidRequest",
    "Cancelled",
    "Error",
)


class DigestMismatch(Exception):
    """An upload's answer is not the length and digest of the body sent (a counted failure, `Error: upload
    digest mismatch: ...`); `nbytes` is the length of the answer, which still counts as received."""

    def __init__(self, got: bytes, expected: bytes, nbytes: int | None = None):
        shown = got if len(got) <= 100 and nbytes in (None, len(got)) else got[:100] + b"..."
        super().__init__(f"upload digest mismatch: got {shown.decode('latin-1')!r}, expected {expected.decode()!r}")
        self.nbytes = len(got) if nbytes is None else nbytes


class Overtime(TimeoutError):
    """A request that ended after --timeout (docs/raw-format.md: the timeout bounds the whole request): a
    library whose own timeout bounds each socket operation can return one later; it is a TimeoutError all the
    same. `nbytes`: the body bytes it received, which still count as received."""

    def __init__(self, took_ns: int, timeout_s: float, nbytes: int):
        super().__init__(f"the request took {took_ns / 1e9:.3f} s, past --timeout {timeout_s:g} s")
        self.nbytes = nbytes


#: libcurl's error codes (pycurl raises them as `error(code, message)`)
_CURL_CLASSES = {
    1: "InvalidUrl",
    3: "InvalidUrl",
    5: "ConnectionError",
    6: "ConnectionError",
    7: "ConnectionError",
    8: "ProtocolError",
    18: "ConnectionError",
    28: "TimeoutError",
    35: "TLSError",
    51: "TLSError",
    52: "ConnectionError",
    55: "ConnectionError",
    56: "ConnectionError",
    60: "TLSError",
}
#: exception class names (of the exception or a base class) that mean "this URL cannot be used"; whole names:
#: a substring test would take curl_cffi's CurlError for a URLError
_URL_NAMES = frozenset(
    {
        "invalidurl",
        "urlerror",
        "missingschema",
        "invalidschema",
        "locationparseerror",
        "locationvalueerror",
        "unsupportedprotocol",
        "nonhttpurlclienterror",
        "invalidurlclienterror",
        "invalidurlredirectclienterror",
    }
)
_CONNECTION_ERRNOS = (errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.EPIPE)
#: a body cut short by a reset or a close is a ConnectionError (docs/raw-format.md), whatever the library
#: calls it: words of requests', aiohttp's, httpx's, curl's and hyper's (pyreqwest, rnet) messages
_SHORT_BODY = (
    "connection reset",
    "incompleteread",
    "incompletebody",
    "unexpectedeof",
    "end of file before message length",
    "not enough data to satisfy content length",
    "without sending complete message body",
)


def failure_class(exc: BaseException) -> str:
    """The failure class of an exception from any Python client library (they do not share a hierarchy)."""
    if isinstance(exc, DigestMismatch):
        return "Error"
    name = type(exc).__name__.lower()
    names = {c.__name__.lower() for c in type(exc).__mro__}  # base classes too
    # the exception's own name: urllib3's NewConnectionError derives from ConnectTimeoutError
    if isinstance(exc, TimeoutError) or "timeout" in name:
        return "TimeoutError"
    if type(exc).__module__ == "pycurl" and exc.args and isinstance(exc.args[0], int):
        return _CURL_CLASSES.get(exc.args[0], "Error")
    text = str(exc).lower()
    # a timeout that a library reports as a body or decoding error, saying so only in its text (rnet's and
    # wreq's "wreq::Error { kind: Body, source: TimedOut }" when --timeout ends a request mid-body)
    if "timedout" in text.replace(" ", "").replace("_", ""):
        return "TimeoutError"
    # certificate, host name and handshake failures: by type where the library has one, else by its text
    # (Rust clients report them as connect errors whose message names the TLS cause; not a bare "ssl":
    # aiohttp writes "ssl:default" into every connection error)
    if (
        isinstance(exc, ssl.SSLError)
        or type(exc).__name__ == "TLSError"
        or any(k in name for k in ("ssl", "certificate", "tls"))
        or any(
            k in text for k in ("certificate", "ssl handshake", "tls handshake", "invalidcertificate", "unknownissuer")
        )
    ):
        return "TLSError"
    if names & _URL_NAMES or (isinstance(exc, ValueError) and text.startswith(("invalid url", "unsupported url"))):
        return "InvalidUrl"
    if (
        isinstance(exc, ConnectionError)
        or any(k in text or k in name for k in _SHORT_BODY)
        or "connect" in name
        or name == "readerror"
        or getattr(exc, "errno", None) in _CONNECTION_ERRNOS
    ):
        return "ConnectionError"
    if any(k in name for k in ("protocol", "payload", "incomplete", "badstatus", "parse", "decod")):
        return "ProtocolError"
    if isinstance(exc, ValueError):
        return "InvalidRequest"
    if "cancel" in name:
        return "Cancelled"
    return "Error"


def describe(exc: BaseException) -> str:
    """`<class>: <message>`; the library's own exception name is kept in the message when it differs."""
    text = str(exc).strip().replace("\n", " ")
    if isinstance(exc, DigestMismatch):  # the harness's own checks: no library exception to name
        return f"Error: {text}"
    if isinstance(exc, Overtime):
        return f"TimeoutError: {text}"
    name, cls = type(exc).__name__, failure_class(exc)
    detail = text if name == cls else f"{name}: {text}" if text else name
    return f"{cls}: {detail}" if detail else cls
