//! `ClientError`: the failure classes every clientbench client reports (docs/raw-format.md, "Failure
//! reasons"), and the classification of `reqwest::Error` into them: over TCP from hyper's errors and the
//! `io::Error`s under them, over QUIC (HTTP/3) from h3's stream and connection errors and quinn's connection
//! errors ([`h3_class`]).

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
    /// The server's bytes are not valid HTTP/1.1 (bad status line, bad headers, bad chunked framing), it broke
    /// HTTP/3's or QUIC's rules (an h3 protocol error code, a body that does not add up to its
    /// `Content-Length`), or a redirect's `Location` cannot be followed (it does not parse, or is not
    /// `http(s)://`).
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
        if let Some(class) = h3_class(e) {
            return Some(class);
        }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Timeout,
    Tls,
    Connection(ConnectionKind),
    Protocol,
}

/// An HTTP/3 body whose DATA frames do not add up to its `Content-Length` (RFC 9114 §4.1.2: malformed),
/// which neither h3 nor reqwest 0.13 checks ([`crate::h3_checked`]).
#[derive(Debug)]
pub(crate) struct LengthMismatch(pub String);

impl fmt::Display for LengthMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for LengthMismatch {}

/// The class of an error of the HTTP/3 stack (h3, quinn), or `None` for any other error. reqwest puts them
/// boxed in its source chain; h3's errors have no `source()`, so what they carry is looked into here.
fn h3_class(e: &(dyn StdError + 'static)) -> Option<Class> {
    use h3::error::StreamError;
    if e.is::<LengthMismatch>() {
        return Some(Class::Protocol);
    }
    if let Some(q) = e.downcast_ref::<quinn::ConnectionError>() {
        return Some(quic_class(q));
    }
    if e.is::<quinn::ConnectError>() {
        // the connection could not even start (no usable address, a name QUIC cannot carry, ...)
        return Some(Class::Connection(ConnectionKind::Other));
    }
    if let Some(c) = e.downcast_ref::<h3::error::ConnectionError>() {
        return Some(h3_connection_class(c));
    }
    let s = e.downcast_ref::<StreamError>()?;
    Some(match s {
        // the request was never sent: the server's GOAWAY closes the connection to new requests
        StreamError::RemoteClosing { .. } => Class::Connection(ConnectionKind::Closed),
        StreamError::ConnectionError { 0: c, .. } => h3_connection_class(c),
        // the server reset the stream (RESET_STREAM or STOP_SENDING), with a code that says why
        StreamError::RemoteTerminate { code, .. } => code_class(code.value(), ConnectionKind::Reset),
        // h3 found the stream's frames malformed (or gave up on it); a header block over the peer's limit
        StreamError::StreamError { code, .. } => code_class(code.value(), ConnectionKind::Other),
        StreamError::HeaderTooBig { .. } => Class::Protocol,
        StreamError::Undefined { 0: inner, .. } => {
            h3_class(inner.as_ref()).unwrap_or(Class::Connection(ConnectionKind::Other))
        }
        _ => Class::Connection(ConnectionKind::Other),
    })
}

/// An h3 connection error: its HTTP/3 error code, a timeout, or quinn's error under it.
fn h3_connection_class(c: &h3::error::ConnectionError) -> Class {
    use h3::error::{ConnectionError, LocalError};
    use h3::quic::ConnectionErrorIncoming as Incoming;
    match c {
        ConnectionError::Timeout { .. } => Class::Timeout,
        ConnectionError::Local { error: LocalError::Application { code, .. }, .. } => {
            code_class(code.value(), ConnectionKind::Closed)
        }
        ConnectionError::Local { .. } => Class::Connection(ConnectionKind::Closed),
        ConnectionError::Remote { 0: incoming, .. } => match incoming {
            Incoming::ApplicationClose { error_code } => code_class(*error_code, ConnectionKind::Closed),
            Incoming::Timeout => Class::Timeout,
            Incoming::Undefined(inner) => h3_class(inner.as_ref()).unwrap_or(Class::Connection(ConnectionKind::Other)),
            _ => Class::Connection(ConnectionKind::Other),
        },
        _ => Class::Connection(ConnectionKind::Other),
    }
}

/// An HTTP/3 error code (RFC 9114 §8.1, RFC 9204 §6): H3_NO_ERROR is a connection closed (`closed`, or a
/// stream reset); the codes of a malformed message, frame, stream or setting (and QPACK's) are protocol
/// errors; the others (internal error, excessive load, request rejected or cancelled, ...) say that the
/// server gave up on the request: `closed`, the kind of connection failure the caller reports.
fn code_class(code: u64, closed: ConnectionKind) -> Class {
    match code {
        // H3_GENERAL_PROTOCOL_ERROR, H3_STREAM_CREATION_ERROR, H3_CLOSED_CRITICAL_STREAM, H3_FRAME_UNEXPECTED,
        // H3_FRAME_ERROR, H3_ID_ERROR, H3_SETTINGS_ERROR, H3_MISSING_SETTINGS, H3_MESSAGE_ERROR; QPACK's
        0x101 | 0x103..=0x106 | 0x108..=0x10a | 0x10e | 0x200..=0x202 => Class::Protocol,
        _ => Class::Connection(closed),
    }
}

/// How a QUIC connection (quinn) ended: timed out (the handshake or an idle connection: no packet from the
/// peer for quinn's idle timeout, as when nothing answers on the UDP port, which no ICMP error tells an
/// unconnected socket), a TLS alert (QUIC's CRYPTO_ERROR codes 0x100-0x1ff, RFC 9001 §4.8, from either
/// side), a protocol violation, or closed or reset by the peer.
fn quic_class(q: &quinn::ConnectionError) -> Class {
    use quinn::ConnectionError as Q;
    let crypto = |code: quinn::TransportErrorCode| (0x100..=0x1ff).contains(&u64::from(code));
    match q {
        Q::TimedOut => Class::Timeout,
        Q::TransportError(t) if crypto(t.code) => Class::Tls,
        Q::ConnectionClosed(c) if crypto(c.error_code) => Class::Tls,
        Q::ConnectionClosed(c) if c.error_code == quinn::TransportErrorCode::NO_ERROR => {
            Class::Connection(ConnectionKind::Closed)
        }
        Q::VersionMismatch | Q::TransportError(_) | Q::ConnectionClosed(_) => Class::Protocol,
        Q::ApplicationClosed(c) => code_class(c.error_code.into_inner(), ConnectionKind::Closed),
        Q::Reset => Class::Connection(ConnectionKind::Reset),
        Q::LocallyClosed => Class::Connection(ConnectionKind::Closed),
        Q::CidsExhausted => Class::Connection(ConnectionKind::Other),
    }
}

/// True when `err` (from sending, before any response head) says that the server did not process the
/// request, so that it may go again whatever its method (RFC 9114 §4.1.1, §5.2): h3 refused to open its
/// stream because the server had sent the connection a GOAWAY; the server reset it with
/// H3_REQUEST_REJECTED; or the server closed the connection gracefully (H3_NO_ERROR), which it does once the
/// requests it accepted are answered, so an unanswered one was not accepted (a request sent after the
/// server's GOAWAY and before the client read it, or on a connection reqwest's pool handed out in the moment
/// between the close and its driver task noticing it).
pub(crate) fn is_unprocessed_h3(err: &reqwest::Error) -> bool {
    use h3::error::{Code, ConnectionError, StreamError};
    use h3::quic::ConnectionErrorIncoming as Incoming;
    let graceful = |c: &ConnectionError| {
        matches!(c, ConnectionError::Remote { 0: Incoming::ApplicationClose { error_code }, .. }
            if *error_code == Code::H3_NO_ERROR.value())
    };
    sources(err).any(|e| match e.downcast_ref::<StreamError>() {
        Some(StreamError::RemoteClosing { .. }) => true,
        Some(StreamError::RemoteTerminate { code, .. }) => *code == Code::H3_REQUEST_REJECTED,
        Some(StreamError::ConnectionError { 0: c, .. }) => graceful(c),
        _ => e.downcast_ref::<ConnectionError>().is_some_and(graceful),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// QUIC's and HTTP/3's codes in the library's classes: TLS alerts, protocol violations, closes.
    #[test]
    fn quic_and_h3_errors_have_the_tcp_classes() {
        use quinn::{ConnectionError as Q, TransportErrorCode as Code, VarInt};
        // quinn's TransportError is quinn-proto's, named through its code only
        let transport = |code: Code| Q::TransportError(code.into());
        let closed = |error_code| quinn::ConnectionClose { error_code, frame_type: None, reason: Default::default() };
        let app = |code: u32| {
            Q::ApplicationClosed(quinn::ApplicationClose {
                error_code: VarInt::from_u32(code),
                reason: Default::default(),
            })
        };
        let cases = [
            (Q::TimedOut, Class::Timeout),
            // certificate_unknown (46) and handshake_failure (40) alerts, from either side
            (transport(Code::crypto(46)), Class::Tls),
            (Q::ConnectionClosed(closed(Code::crypto(40))), Class::Tls),
            (transport(Code::PROTOCOL_VIOLATION), Class::Protocol),
            (Q::ConnectionClosed(closed(Code::FRAME_ENCODING_ERROR)), Class::Protocol),
            (Q::ConnectionClosed(closed(Code::NO_ERROR)), Class::Connection(ConnectionKind::Closed)),
            (Q::VersionMismatch, Class::Protocol),
            (Q::Reset, Class::Connection(ConnectionKind::Reset)),
            (app(0x100), Class::Connection(ConnectionKind::Closed)),
            (app(0x101), Class::Protocol),
            (app(0x10e), Class::Protocol),
            (app(0x201), Class::Protocol),
            (app(0x102), Class::Connection(ConnectionKind::Closed)),
            (app(0x10b), Class::Connection(ConnectionKind::Closed)),
        ];
        for (error, class) in cases {
            assert_eq!(quic_class(&error), class, "{error:?}");
            assert_eq!(h3_class(&error), Some(class), "{error:?}");
        }
        assert_eq!(h3_class(&LengthMismatch("short".into())), Some(Class::Protocol));
        assert_eq!(h3_class(&io::Error::other("not h3")), None);
        // a stream reset by the server: REQUEST_REJECTED is a reset, a malformed message a protocol error
        assert_eq!(code_class(0x10b, ConnectionKind::Reset), Class::Connection(ConnectionKind::Reset));
        assert_eq!(code_class(0x10e, ConnectionKind::Reset), Class::Protocol);
    }
}
