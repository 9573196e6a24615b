//! The module's exception classes and the mapping of a [`ClientError`] to the Python exception it raises
//! (docs/binding-api.md, "Errors"): invalid URL / method / header → `ValueError`; too many redirects →
//! `TooManyRedirects`; timeout → `TimeoutError`; TLS failures → `TLSError` (a `ConnectionError`);
//! connection failures → `ConnectionError` (`ConnectionRefusedError` / `ConnectionResetError` where clear);
//! malformed HTTP or a redirect that cannot be followed → `ProtocolError` (an `OSError`); a body over
//! `max_body_size` → `BodyTooLarge` (a `ProtocolError`). Non-2xx statuses are returned, never raised.

use pyo3::create_exception;
use pyo3::exceptions::{
    PyConnectionError, PyConnectionRefusedError, PyConnectionResetError, PyOSError, PyRuntimeError, PyTimeoutError,
    PyValueError,
};
use pyo3::prelude::*;
use reqwest_bench::{ClientError, ConnectionKind};

create_exception!(
    reqwest_client,
    ProtocolError,
    PyOSError,
    "The server's response is not valid HTTP/1.1 (bad status line, headers or framing), or a redirect's \
     Location cannot be followed."
);

create_exception!(
    reqwest_client,
    BodyTooLarge,
    ProtocolError,
    "A response body larger than the client's max_body_size (decoded); nothing of it is kept."
);

create_exception!(
    reqwest_client,
    TooManyRedirects,
    PyOSError,
    "More redirects than the client's max_redirects; the message names the last URL."
);

create_exception!(
    reqwest_client,
    TLSError,
    PyConnectionError,
    "TLS failed: the server's certificate is untrusted, expired or for another name, the handshake failed, \
     or the server does not speak TLS."
);

pub(crate) fn to_py_err(e: ClientError) -> PyErr {
    let msg = e.message().to_string();
    match e {
        ClientError::InvalidUrl(_) | ClientError::InvalidRequest(_) => PyValueError::new_err(msg),
        ClientError::Timeout(_) => PyTimeoutError::new_err(msg),
        ClientError::Tls(_) => TLSError::new_err(msg),
        ClientError::Connection(ConnectionKind::Refused, _) => PyConnectionRefusedError::new_err(msg),
        ClientError::Connection(ConnectionKind::Reset, _) => PyConnectionResetError::new_err(msg),
        ClientError::Connection(..) => PyConnectionError::new_err(msg),
        ClientError::Protocol(_) => ProtocolError::new_err(msg),
        ClientError::BodyTooLarge(_) => BodyTooLarge::new_err(msg),
        ClientError::TooManyRedirects(_) => TooManyRedirects::new_err(msg),
        ClientError::Cancelled | ClientError::Usage(_) => PyRuntimeError::new_err(msg),
    }
}
