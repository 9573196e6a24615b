//! The HTTP versions a client speaks ([`Http2`]) and their names.

/// How a client speaks HTTP/2 ([`ClientOptions::http2`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Http2 {
    /// HTTP/1.1 only (the benchmark's default): ALPN offers `http/1.1` alone.
    #[default]
    Off,
    /// Over `https://` ALPN offers `h2` and `http/1.1`, and the server picks (HTTP/1.1 when it picks
    /// `http/1.1` or answers no ALPN); over `http://` HTTP/1.1 (ALPN exists only in TLS, and reqwest does
    /// not upgrade).
    Alpn,
    /// HTTP/2 only, with prior knowledge: h2c over `http://`, ALPN `h2` alone over `https://`. A server that
    /// does not speak HTTP/2 fails the request: [`ClientError::Connection`] (it answers the connection
    /// preface with HTTP/1.1, which is no HTTP/2 frame, or closes the connection; the message says that the
    /// server may not speak HTTP/2), also over `https://` from a server that picks no ALPN protocol and goes
    /// on; [`ClientError::Tls`] from one that ends the handshake for want of a common protocol.
    PriorKnowledge,
}

/// The name of an HTTP version as the raw format and the binding give it: `HTTP/1.1`, `HTTP/2`, ...
pub fn version_name(v: reqwest::Version) -> &'static str {
    match v {
        reqwest::Version::HTTP_09 => "HTTP/0.9",
        reqwest::Version::HTTP_10 => "HTTP/1.0",
        reqwest::Version::HTTP_2 => "HTTP/2",
        reqwest::Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

pub(crate) fn version_code(v: reqwest::Version) -> u8 {
    match v {
        reqwest::Version::HTTP_09 => 1,
        reqwest::Version::HTTP_10 => 2,
        reqwest::Version::HTTP_2 => 4,
        reqwest::Version::HTTP_3 => 5,
        _ => 3,
    }
}

pub(crate) fn version_of_code(code: u8) -> Option<&'static str> {
    Some(match code {
        1 => "HTTP/0.9",
        2 => "HTTP/1.0",
        3 => "HTTP/1.1",
        4 => "HTTP/2",
        5 => "HTTP/3",
        _ => return None,
    })
}
