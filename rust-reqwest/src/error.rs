//! `ClientError`: the failure classes every clientbench client reports (docs/raw-format.md, "Failure
//! reasons"), and the classification of `reqwest::Error` into them.

use std::error::Error as StdError;
use std::fmt;
use std::io;

/// Which kind of connection failure, where it is clear (the Python binding maps these onto
/// `ConnectionRefusedError` / `ConnectionResetError` / `ConnectionError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionKind {
    /// Nobody listens on the port (ECONNREFUSED).
    Refused,
    /// The peer reset or aborted the connection (ECONNRESET, ECONNABORTED, EPIPE).
    Reset,
    /// The connection was closed before the response was complete (EOF mid-message).
    Closed,
    /// Anything else on the transport: unresolvable host, unreachable network, ...
    Other,
}

/// Everything that can go wrong with one request. Non-2xx statuses are *not* errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// The URL does not parse, is not `http://`, or has no host / port 0 (checked before any I/O).
    InvalidUrl(String),
    /// A bad method name, header name or header value (checked before any I/O).
    InvalidRequest(String),
    /// The per-request timeout (connect + TLS handshake + send + response + whole body) expired.
    Timeout(String),
    /// TLS failed: the certificate is untrusted, expired or for another name, the handshake failed (no
    /// common version or cipher, an alert, the server closed the connection during it), or the server
    /// does not speak TLS (`https://` to a plain-HTTP server).
    Tls(String),
    /// Refused, reset, unresolvable host, closed before the response was complete, ...
    Connection(ConnectionKind, String),
    /// The server's bytes are not valid HTTP/1.1 (bad status line, bad headers, bad chunked framing), or a
    /// redirect's `Location` cannot be followed (it does not parse, or is not `http(s)://`).
    Protocol(String),
    /// A body larger than [`crate::ClientOptions::max_body_size`] (decoded); its failure class is
    /// `ProtocolError`.
    BodyTooLarge(String),
    /// More redirects than the request allows ([`crate::api::Request::max_redirects`]); the message names
    /// the last URL. Its failure class is the catch-all `Error` (the benchmark never follows redirects).
    TooManyRedirects(String),
    /// The caller's cancel callback asked to stop (BlockingClient only); the request was dropped.
    Cancelled,
    /// The client cannot be built or used this way (closed, or called from inside a tokio runtime);
    /// its failure class is the catch-all `Error`.
    Usage(String),
}

/// The failure classes, the same in every language's harness (cpp-beast's `beast_client::Error::type_name`,
/// python/clientbench/drivers/harness.py): a failed request's reason is `<Class>: <message>`.
pub const FAILURE_CLASSES: [&str; 8] = [
    "TimeoutError",
    "TLSError",
    "ConnectionError",
    "ProtocolError",
    "InvalidUrl",
    "InvalidRequest",
    "Cancelled",
    "Error",
];

impl ClientError {
    /// The failure class (one of [`FAILURE_CLASSES`]): the prefix of driver failure reasons.
    /// A [`ClientError::Usage`] error (the client used the wrong way) is the catch-all `Error`.
    pub fn kind(&self) -> &'static str {
        match self {
            ClientError::InvalidUrl(_) => "InvalidUrl",
            ClientError::InvalidRequest(_) => "InvalidRequest",
            ClientError::Timeout(_) => "TimeoutError",
            ClientError::Tls(_) => "TLSError",
            ClientError::Connection(..) => "ConnectionError",
            ClientError::Protocol(_) | ClientError::BodyTooLarge(_) => "ProtocolError",
            ClientError::Cancelled => "Cancelled",
            ClientError::Usage(_) | ClientError::TooManyRedirects(_) => "Error",
        }
    }

    /// The human-readable message (with the error's whole source chain), without the class name.
    pub fn message(&self) -> &str {
        match self {
            ClientError::InvalidUrl(m)
            | ClientError::InvalidRequest(m)
            | ClientError::Timeout(m)
            | ClientError::Tls(m)
            | ClientError::Connection(_, m)
            | ClientError::Protocol(m)
            | ClientError::BodyTooLarge(m)
            | ClientError::Usage(m)
            | ClientError::TooManyRedirects(m) => m,
            ClientError::Cancelled => "request cancelled",
        }
    }
}

/// `<Class>: <message>`, the canonical failure reason.
impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl StdError for ClientError {}

/// `err` and its `source()` chain as one line: "a: b: c", skipping a source whose text the previous
/// level already contains.
pub fn chain_text(err: &(dyn StdError + 'static)) -> String {
    let mut out = err.to_string();
    let mut last = out.clone();
    let mut source = err.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !text.is_empty() && !last.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        last = text;
        source = e.source();
    }
    out
}

fn sources<'a>(err: &'a reqwest::Error) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(err.source(), |e: &&'a (dyn StdError + 'static)| (*e).source())
}

/// True when `e` is a rustls error, or an `io::Error` wrapping one, however deep: tokio-rustls reports a
/// failed handshake as `io::Error(InvalidData, rustls::Error)`, which the connector wraps in another
/// `io::Error` (and `io::Error::source` skips the wrapped error itself).
fn is_rustls(mut e: &(dyn StdError + 'static)) -> bool {
    loop {
        if e.is::<rustls::Error>() {
            return true;
        }
        match e.downcast_ref::<io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => e = inner,
            None => return false,
        }
    }
}

/// The kind of the innermost `io::Error` that `io` wraps (the connector wraps the TLS stream's errors in
/// another `io::Error`), or its own.
fn innermost_kind(mut io: &io::Error) -> io::ErrorKind {
    while let Some(inner) = io.get_ref().and_then(|e| e.downcast_ref::<io::Error>()) {
        io = inner;
    }
    io.kind()
}

/// What the innermost recognisable cause says, if anything.
fn classify_chain(err: &reqwest::Error) -> Option<Class> {
    if sources(err).any(is_rustls) {
        return Some(Class::Tls);
    }
    for e in sources(err) {
        if let Some(h) = e.downcast_ref::<hyper::Error>() {
            if h.is_parse() || h.is_parse_status() {
                return Some(Class::Protocol);
            }
            if h.is_timeout() {
                return Some(Class::Timeout);
            }
            if h.is_incomplete_message() {
                return Some(Class::Connection(ConnectionKind::Closed));
            }
            // is_closed / is_canceled / Io / Body: look further down for the io::Error, if any
        }
        if let Some(io) = e.downcast_ref::<io::Error>() {
            match innermost_kind(io) {
                io::ErrorKind::ConnectionRefused => return Some(Class::Connection(ConnectionKind::Refused)),
                io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted | io::ErrorKind::BrokenPipe => {
                    return Some(Class::Connection(ConnectionKind::Reset))
                }
                // While connecting, only the TLS handshake reads (there is no proxy): the server closed the
                // connection during the handshake ("tls handshake eof").
                io::ErrorKind::UnexpectedEof if err.is_connect() => return Some(Class::Tls),
                io::ErrorKind::UnexpectedEof => return Some(Class::Connection(ConnectionKind::Closed)),
                io::ErrorKind::TimedOut => return Some(Class::Timeout),
                io::ErrorKind::InvalidData => return Some(Class::Protocol),
                _ => {}
            }
        }
    }
    None
}

enum Class {
    Timeout,
    Tls,
    Connection(ConnectionKind),
    Protocol,
}

/// Classify a `reqwest::Error` (from sending the request or from reading the body).
pub fn classify(err: &reqwest::Error) -> ClientError {
    let msg = chain_text(err);
    if err.is_builder() {
        return ClientError::InvalidRequest(msg);
    }
    if err.is_timeout() {
        return ClientError::Timeout(msg);
    }
    match classify_chain(err) {
        Some(Class::Timeout) => ClientError::Timeout(msg),
        Some(Class::Tls) => ClientError::Tls(msg),
        Some(Class::Protocol) => ClientError::Protocol(msg),
        Some(Class::Connection(kind)) => ClientError::Connection(kind, msg),
        None if err.is_decode() => ClientError::Protocol(msg),
        // is_connect (incl. DNS), is_request, is_body and anything unforeseen: a transport failure
        None => ClientError::Connection(ConnectionKind::Other, msg),
    }
}

/// True when `err` (from `send()`, i.e. before any response head arrived) means the connection was
/// closed or reset under the request — the signature of a keep-alive connection the server closed while
/// it sat idle in the pool. Connect errors (refused, DNS) and timeouts are never retryable.
pub(crate) fn is_stale_connection(err: &reqwest::Error) -> bool {
    if err.is_builder() || err.is_timeout() || err.is_connect() {
        return false;
    }
    for e in sources(err) {
        if let Some(h) = e.downcast_ref::<hyper::Error>() {
            if h.is_parse() || h.is_parse_status() || h.is_timeout() {
                return false;
            }
            if h.is_incomplete_message() || h.is_canceled() || h.is_closed() {
                return true;
            }
        }
        if let Some(io) = e.downcast_ref::<io::Error>() {
            return matches!(
                innermost_kind(io),
                io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::UnexpectedEof
            );
        }
    }
    false
}
