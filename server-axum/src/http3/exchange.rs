//! One HTTP/3 request: its head and streamed body handed to the router as an `http::Request`, the router's
//! response sent back on the request stream, with what RFC 9114 requires of it.
//!
//! * The request body is a [`RequestBody`] that reads DATA frames as the handler asks for them (never buffered
//!   whole: `/upload` hashes a GiB as it arrives); a body that does not add up to its `Content-Length` is an
//!   error (RFC 9114 §4.1.2), as hyper makes it over HTTP/1.1 and 2. What the handler leaves unread is read
//!   to its end in the background, up to [`DRAIN_LIMIT`] bytes (a GET's end usually follows its head: a
//!   STOP_SENDING then would cost a frame, and the client's RESET_STREAM, per request); past that the client
//!   is told to stop sending with H3_NO_ERROR (§4.1.2: its response does not depend on the rest). A stream is
//!   stopped only between reads ([`drain`]): h3-quinn's `stop_sending` panics while a read of it is in flight.
//! * The response loses the connection-specific fields HTTP/3 forbids (§4.2: `Connection` and the fields it
//!   names, `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`, `Upgrade`, `TE`); a `Connection: close`
//!   (from `/close`) asks the connection for a GOAWAY once the response is sent. As hyper does over HTTP/1.1,
//!   a 1xx, 204 or 304 response carries no `Content-Length` (RFC 9110 §8.6; axum sets `0`, which hyper's
//!   HTTP/2 leaves), and as hyper does over both, every response gets a `Date`.

use std::cell::RefCell;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::{Request, Response, StatusCode};
use axum::Router;
use bytes::Buf;
use h3::error::{Code, StreamError};
use http_body_util::BodyExt;
use tower_service::Service;

use crate::counting::Counted;

/// The most of an unread request body that is read (and dropped) to reach its end (see the module docs).
const DRAIN_LIMIT: u64 = 64 * 1024;

pub(super) type Resolver = h3::server::RequestResolver<h3_quinn::Connection, Bytes>;
type SendHalf = h3::server::RequestStream<h3_quinn::SendStream<Bytes>, Bytes>;
type RecvHalf = h3::server::RequestStream<h3_quinn::RecvStream, Bytes>;

/// Reads the request on `resolver`'s stream, runs it through `app` and sends the response. Returns whether
/// the response asked for the connection to be closed (`Connection: close`), once it has been sent.
pub(super) async fn exchange(resolver: Resolver, mut app: Counted<Router>) -> bool {
    let (request, stream) = match resolver.resolve_request().await {
        Ok(r) => r,
        Err(e) => {
            crate::debug!("HTTP/3 request not read: {e}");
            return false;
        }
    };
    let (mut send, mut recv) = stream.split();
    let declared = match content_length(request.headers()) {
        Ok(n) => n,
        Err(()) => {
            recv.stop_sending(Code::H3_MESSAGE_ERROR); // a malformed request (RFC 9114 §4.1.2)
            let response = crate::bad_request("the request's Content-Length is not one number\n".to_owned());
            return respond(&mut send, response).await;
        }
    };
    let body = RequestBody { recv: Some(recv), declared, received: 0, state: State::Data, stop: None };
    let request = request.map(|()| Body::new(body));
    let response = match std::future::poll_fn(|cx| Service::<Request<Body>>::poll_ready(&mut app, cx)).await {
        Ok(()) => app.call(request).await,
        Err(e) => Err(e),
    };
    let response = match response {
        Ok(r) => r,
        Err(never) => match never {},
    };
    respond(&mut send, response).await
}

/// The request's `Content-Length`: none, or one number (repeated values must agree, RFC 9110 §8.6).
fn content_length(headers: &HeaderMap) -> Result<Option<u64>, ()> {
    let mut length = None;
    for value in headers.get_all(header::CONTENT_LENGTH) {
        let text = value.to_str().map_err(|_| ())?;
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(());
            }
            let n: u64 = part.parse().map_err(|_| ())?;
            if length.is_some_and(|l| l != n) {
                return Err(());
            }
            length = Some(n);
        }
    }
    Ok(length)
}

/// Sends `response` on `send` and finishes the stream; returns whether it said `Connection: close`.
async fn respond(send: &mut SendHalf, response: Response<Body>) -> bool {
    let (mut parts, body) = response.into_parts();
    let close = strip_connection_fields(&mut parts.headers);
    if parts.status.is_informational() || matches!(parts.status, StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED) {
        parts.headers.remove(header::CONTENT_LENGTH);
    }
    parts.headers.insert(header::DATE, date());
    if let Err(e) = send_all(send, Response::from_parts(parts, ()), body).await {
        // the client reset the stream or the connection went away: nothing to answer to
        if !e.is_h3_no_error() {
            crate::debug!("HTTP/3 response not sent: {e}");
        }
    }
    close
}

async fn send_all(send: &mut SendHalf, head: Response<()>, mut body: Body) -> Result<(), StreamError> {
    send.send_response(head).await?;
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(f) => f,
            Err(e) => {
                // the handler's body failed: the response is incomplete, so the stream must not end cleanly
                crate::debug!("HTTP/3 response body failed: {e}");
                send.stop_stream(Code::H3_INTERNAL_ERROR);
                return Ok(());
            }
        };
        match frame.into_data() {
            Ok(data) if data.is_empty() => {}
            Ok(data) => send.send_data(data).await?,
            Err(frame) => {
                if let Ok(trailers) = frame.into_trailers() {
                    send.send_trailers(trailers).await?;
                }
            }
        }
    }
    send.finish().await
}

/// Removes the fields HTTP/3 forbids (see the module docs); returns whether `Connection` said `close`.
fn strip_connection_fields(headers: &mut HeaderMap) -> bool {
    let mut close = false;
    let mut named = Vec::new();
    for value in headers.get_all(header::CONNECTION) {
        for token in value.to_str().unwrap_or("").split(',').map(str::trim) {
            if token.eq_ignore_ascii_case("close") {
                close = true;
            } else if let Ok(name) = HeaderName::from_bytes(token.as_bytes()) {
                named.push(name); // a field the sender marked as for this connection only (RFC 9110 §7.6.1)
            }
        }
    }
    for name in named {
        headers.remove(name);
    }
    for name in [header::CONNECTION, header::TRANSFER_ENCODING, header::UPGRADE, header::TE] {
        headers.remove(name);
    }
    headers.remove("keep-alive");
    headers.remove("proxy-connection");
    close
}

/// The `Date` value of this second, formatted once per second and thread (as hyper caches it).
fn date() -> HeaderValue {
    thread_local! {
        static CACHE: RefCell<Option<(u64, HeaderValue)>> = const { RefCell::new(None) };
    }
    let now = SystemTime::now();
    let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        match &*cache {
            Some((s, value)) if *s == second => value.clone(),
            _ => {
                let value = HeaderValue::from_str(&httpdate::fmt_http_date(now)).expect("an HTTP date is ASCII");
                *cache = Some((second, value.clone()));
                value
            }
        }
    })
}

enum State {
    Data,
    Trailers,
    Done,
}

/// The request body as the handler reads it (see the module docs).
struct RequestBody {
    /// Taken by `drop` (to be drained).
    recv: Option<RecvHalf>,
    declared: Option<u64>,
    received: u64,
    state: State,
    /// The code to stop the stream with once the body is dropped (a malformed body: [`RequestBody::fail`]).
    stop: Option<Code>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl RequestBody {
    fn recv(&mut self) -> &mut RecvHalf {
        self.recv.as_mut().expect("the stream is there until the body is dropped")
    }

    fn fail(&mut self, message: String) -> Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        // stopped by drop's drain, not here: h3 may have handed out this data with a read of the stream in flight
        self.state = State::Done;
        self.stop = Some(Code::H3_MESSAGE_ERROR);
        Poll::Ready(Some(Err(message.into())))
    }
}

impl http_body::Body for RequestBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        loop {
            match this.state {
                State::Data => match ready!(this.recv().poll_recv_data(cx)) {
                    Ok(Some(mut buf)) => {
                        let chunk = buf.copy_to_bytes(buf.remaining());
                        this.received += chunk.len() as u64;
                        if let Some(declared) = this.declared.filter(|d| this.received > *d) {
                            return this.fail(format!("the body is longer than its Content-Length {declared}"));
                        }
                        if !chunk.is_empty() {
                            return Poll::Ready(Some(Ok(http_body::Frame::data(chunk))));
                        }
                    }
                    Ok(None) => {
                        if let Some(declared) = this.declared.filter(|d| this.received < *d) {
                            let got = this.received;
                            return this.fail(format!("the body ended after {got} of its {declared} bytes"));
                        }
                        this.state = State::Trailers;
                    }
                    Err(e) => {
                        this.state = State::Done;
                        return Poll::Ready(Some(Err(e.into())));
                    }
                },
                State::Trailers => {
                    let polled = ready!(this.recv().poll_recv_trailers(cx));
                    this.state = State::Done;
                    return Poll::Ready(match polled {
                        Ok(Some(trailers)) => Some(Ok(http_body::Frame::trailers(trailers))),
                        Ok(None) => None,
                        Err(e) => Some(Err(e.into())),
                    });
                }
                State::Done => return Poll::Ready(None),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.state, State::Done)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        // the declared length, as hyper gives it, so that a body limit refuses a too large one before reading
        match (&self.state, self.declared) {
            (State::Done, _) => http_body::SizeHint::with_exact(0),
            (_, Some(declared)) => http_body::SizeHint::with_exact(declared.saturating_sub(self.received)),
            (_, None) => http_body::SizeHint::default(),
        }
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        let Some(recv) = self.recv.take() else { return };
        let (left, code) = match (&self.state, self.stop) {
            (State::Done, None) => return,
            (State::Done, Some(code)) => (0, code),
            _ => (DRAIN_LIMIT, Code::H3_NO_ERROR),
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(drain(recv, left, code))),
            // no runtime to drain on (never in the server): dropped, quinn stops the stream (code 0)
            Err(_) => drop(recv),
        }
    }
}

/// Reads an unread request body to its end, or stops it with `code` once past `left` bytes (see the module
/// docs). h3 hands out data it has buffered while a read of the stream is in flight, with the stream inside
/// that read, where h3-quinn's `stop_sending` cannot reach it (it panics: the task ended and the stream was
/// dropped, stopped with code 0, which a loaded machine's timing showed). So the stream is stopped after a read
/// that had to wait: one that ends with that read complete and the stream back in place.
async fn drain(mut recv: RecvHalf, mut left: u64, code: Code) {
    let mut over = false;
    loop {
        let mut waited = false;
        let polled = std::future::poll_fn(|cx| {
            let polled = recv.poll_recv_data(cx).map(|r| r.map(|data| data.map(|d| d.remaining() as u64)));
            waited |= polled.is_pending();
            polled
        })
        .await;
        match polled {
            Ok(Some(n)) => {
                over |= n > left;
                left = left.saturating_sub(n);
                if over && waited {
                    recv.stop_sending(code);
                    return;
                }
            }
            Ok(None) => {
                let _ = recv.recv_trailers().await;
                return;
            }
            Err(_) => return, // reset by the client, or the connection is gone
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_is_one_number() {
        let headers = |values: &[&str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append(header::CONTENT_LENGTH, HeaderValue::from_str(v).unwrap());
            }
            h
        };
        assert_eq!(content_length(&headers(&[])), Ok(None));
        assert_eq!(content_length(&headers(&["12"])), Ok(Some(12)));
        assert_eq!(content_length(&headers(&["12", "12, 12"])), Ok(Some(12)));
        for bad in [&["12", "13"][..], &["-1"], &["+1"], &["1 2"], &[""], &["99999999999999999999999"]] {
            assert_eq!(content_length(&headers(bad)), Err(()), "{bad:?}");
        }
    }

    #[test]
    fn connection_fields_are_stripped() {
        let mut h = HeaderMap::new();
        h.insert(header::CONNECTION, HeaderValue::from_static("close, x-hop"));
        h.insert("x-hop", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert(header::TRANSFER_ENCODING, HeaderValue::from_static("chunked"));
        h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        assert!(strip_connection_fields(&mut h));
        assert_eq!(h.keys().map(|k| k.as_str()).collect::<Vec<_>>(), ["content-type"]);
        let mut keep = HeaderMap::new();
        keep.insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
        assert!(!strip_connection_fields(&mut keep));
        assert!(keep.is_empty());
    }

    #[test]
    fn date_is_an_http_date_of_this_second() {
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let value = date();
        let after = SystemTime::now();
        let parsed = httpdate::parse_http_date(value.to_str().unwrap()).unwrap();
        let parsed = parsed.duration_since(UNIX_EPOCH).unwrap().as_secs();
        assert!(before <= parsed && UNIX_EPOCH + std::time::Duration::from_secs(parsed) <= after, "{value:?}");
    }
}
