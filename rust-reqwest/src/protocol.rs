//! The HTTP versions a client speaks ([`Http2`]) and their names, and the check of an HTTP/3 body's length
//! ([`h3_checked`]).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use reqwest::{Method, ResponseBuilderExt};

use crate::error::LengthMismatch;

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

/// `resp` (an HTTP/3 response to `method`) with its body checked against its `Content-Length`: DATA frames
/// that add up to more or to less are a malformed response (RFC 9114 §4.1.2), which h3 and reqwest 0.13 do
/// not check (over HTTP/1.1 and 2, hyper and h2 do), so a body cut short would read as complete. The body
/// then fails with [`LengthMismatch`] (a [`crate::ClientError::Protocol`]). A response without content (to
/// HEAD, 1xx, 204, 304: RFC 9110 §6.4.1) or without a `Content-Length` (a decoded body has none) is left
/// as it is.
pub(crate) fn h3_checked(resp: reqwest::Response, method: &Method) -> reqwest::Response {
    let status = resp.status().as_u16();
    if resp.version() != reqwest::Version::HTTP_3 || *method == Method::HEAD || matches!(status, 100..=199 | 204 | 304)
    {
        return resp;
    }
    let declared = resp.headers().get(reqwest::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse().ok());
    let Some(expected) = declared else { return resp };
    let url = resp.url().clone();
    let (mut parts, body) = hyper::Response::<reqwest::Body>::from(resp).into_parts();
    // the conversion drops the response's URL, which reqwest keeps in an extension of its own
    if let Ok(with_url) = hyper::Response::builder().url(url.clone()).body(()) {
        parts.extensions.extend(with_url.into_parts().0.extensions);
    }
    let checked = Counted { inner: body, expected, seen: 0, url: url.to_string() };
    reqwest::Response::from(hyper::Response::from_parts(parts, reqwest::Body::wrap(checked)))
}

/// A body counted against the length its response declared ([`h3_checked`]).
struct Counted {
    inner: reqwest::Body,
    expected: u64,
    seen: u64,
    url: String,
}

impl Counted {
    fn mismatch(&self, what: &str) -> Box<dyn std::error::Error + Send + Sync> {
        let (url, expected, seen) = (&self.url, self.expected, self.seen);
        Box::new(LengthMismatch(format!(
            "the HTTP/3 response from {url} declared Content-Length {expected} and {what} {seen} bytes of DATA"
        )))
    }
}

impl Body for Counted {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                this.seen += frame.data_ref().map_or(0, |d| d.len() as u64);
                if this.seen > this.expected {
                    return Poll::Ready(Some(Err(this.mismatch("sent at least"))));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(e)) => Poll::Ready(Some(Err(e.into()))),
            None if this.seen < this.expected => Poll::Ready(Some(Err(this.mismatch("ended after")))),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream() && self.seen == self.expected
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.expected.saturating_sub(self.seen))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(
        version: reqwest::Version,
        status: u16,
        length: Option<&str>,
        body: &'static [u8],
    ) -> reqwest::Response {
        let mut b = hyper::Response::builder().status(status).version(version).url("https://h/x".parse().unwrap());
        if let Some(n) = length {
            b = b.header(reqwest::header::CONTENT_LENGTH, n);
        }
        reqwest::Response::from(b.body(reqwest::Body::from(body)).unwrap())
    }

    async fn read(resp: reqwest::Response) -> Result<Bytes, crate::ClientError> {
        resp.bytes().await.map_err(|e| crate::classify(&e))
    }

    /// An HTTP/3 body is counted against its Content-Length: more or less is a protocol error; the URL
    /// survives; what has no content, or no length, or is not HTTP/3 is left alone.
    #[tokio::test]
    async fn an_http3_body_must_add_up_to_its_content_length() {
        let h3 = reqwest::Version::HTTP_3;
        let ok = h3_checked(response(h3, 200, Some("5"), b"hello"), &Method::GET);
        assert_eq!((ok.url().as_str(), ok.content_length()), ("https://h/x", Some(5)));
        assert_eq!(&read(ok).await.unwrap()[..], b"hello");
        for (length, body, what) in [("6", &b"hello"[..], "ended after 5"), ("4", b"hello", "sent at least 5")] {
            let err = read(h3_checked(response(h3, 200, Some(length), body), &Method::POST)).await.unwrap_err();
            assert!(
                matches!(&err, crate::ClientError::Protocol(m) if m.contains(what) && m.contains("https://h/x")),
                "{err:?}"
            );
        }
        for (version, status, method) in [
            (h3, 204, Method::GET),
            (h3, 304, Method::GET),
            (h3, 200, Method::HEAD),
            (reqwest::Version::HTTP_2, 200, Method::GET),
        ] {
            let resp = h3_checked(response(version, status, Some("7"), b""), &method);
            assert!(read(resp).await.unwrap().is_empty(), "{version:?} {status} {method}");
        }
        assert_eq!(&read(h3_checked(response(h3, 200, None, b"any"), &Method::GET)).await.unwrap()[..], b"any");
    }
}
