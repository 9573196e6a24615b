//! The user-facing request of the Python binding (`request` / `stream`), next to the benchmark path and
//! never on it: default headers, the total timeout across redirects, redirects followed by hand (one
//! connection pool; reqwest's redirect policy is per client, and a per-request `follow_redirects` needs
//! it per request), a body that is bytes or a stream (chunked upload), and decompression through the
//! client's second reqwest client ([`crate::ClientOptions::decompress`]).
//!
//! Redirects ([`Client::open`]): 301/302/303 turn the next request into a GET without a body (HEAD stays
//! HEAD; `Content-Type`, `Content-Encoding`, `Content-Length` and `Transfer-Encoding` go with the body),
//! 307/308 repeat method and body (a streamed body cannot be repeated: the 307/308 response is returned
//! instead); `Authorization`, `Cookie` and `Proxy-Authorization` are dropped when the next URL has another
//! origin (scheme, host, port: so also on an https -> http downgrade); the `Location` is resolved against
//! the current URL. A 3xx without `Location` ends the chain with that response; a `Location` that does not
//! parse, holds a control character, is not `http(s)://` or has no host is [`ClientError::Protocol`] (as
//! the Beast client; requests and httpx raise too). At most `max_redirects` hops, one more is
//! [`ClientError::TooManyRedirects`].
//!
//! With [`crate::ClientOptions::cookies`], every hop sends the jar's cookies for its URL (unless the request
//! has its own `Cookie` header, which then replaces them, as in reqwest) and stores what its response sets,
//! a redirect's included ([`crate::cookies`]). [`read_body`] reads a body whole within
//! [`crate::ClientOptions::max_body_size`].

use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Method, Url};

use crate::{classify, send_on, settle_idle_connections, Client, ClientError};

/// Read `resp`'s (decoded) body whole; more than `limit` bytes is [`ClientError::BodyTooLarge`] (the
/// response is dropped with its connection; nothing is kept). A declared `Content-Length` above the limit
/// fails before any of the body is read.
pub async fn read_body(mut resp: reqwest::Response, limit: Option<u64>) -> Result<Bytes, ClientError> {
    let Some(limit) = limit else {
        let _permit = crate::limit::take(&mut resp); // `bytes()` consumes the response: hold it while it reads
        return resp.bytes().await.map_err(|e| classify(&e));
    };
    let too_large = |url: &Url| {
        ClientError::BodyTooLarge(format!(
            "the body of the response from {url} is larger than max_body_size ({limit} bytes)"
        ))
    };
    if resp.content_length().is_some_and(|n| n > limit) {
        return Err(too_large(resp.url()));
    }
    let mut body = bytes::BytesMut::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&e))? {
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(too_large(resp.url()));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// What is sent as the request body.
pub enum Body {
    Empty,
    /// Sent with `Content-Length`; repeated on a 307/308 redirect and on the idempotent re-send.
    Bytes(Bytes),
    /// Sent with `Transfer-Encoding: chunked` as it comes (an upload from an iterator or a file).
    Stream(reqwest::Body),
}

/// One request of the user-facing API.
pub struct Request {
    pub method: Method,
    pub url: Url,
    /// The request's own headers; the client's default headers are added for every name not set here.
    pub headers: HeaderMap,
    pub body: Body,
    /// Total deadline of the whole exchange, redirects and the body included (`None`: the client's).
    pub timeout: Option<Duration>,
    /// Follow 3xx responses (see the module docs).
    pub follow_redirects: bool,
    /// At most this many hops; one more is [`ClientError::TooManyRedirects`].
    pub max_redirects: usize,
}

/// The head of a response.
#[derive(Debug, Clone)]
pub struct Head {
    pub status: u16,
    /// The final URL (after redirects).
    pub url: String,
    /// The status line's reason phrase (hyper keeps it only when it is not the standard one; then the
    /// standard one is given, or "" for an unknown code).
    pub reason: String,
    /// In received order, lower-case names, values decoded lossily as UTF-8. When the body was decoded,
    /// reqwest has removed `Content-Encoding` and `Content-Length`.
    pub headers: Vec<(String, String)>,
    /// `HTTP/1.1`, `HTTP/2`, `HTTP/3` ([`crate::version_name`]).
    pub http_version: &'static str,
}

impl Head {
    pub fn of(resp: &reqwest::Response) -> Head {
        let reason = match resp.extensions().get::<hyper::ext::ReasonPhrase>() {
            Some(r) => String::from_utf8_lossy(r.as_bytes()).into_owned(),
            None => resp.status().canonical_reason().unwrap_or("").to_owned(),
        };
        Head {
            status: resp.status().as_u16(),
            url: resp.url().to_string(),
            reason,
            http_version: crate::version_name(resp.version()),
            headers: resp
                .headers()
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect(),
        }
    }
}

/// The request's headers with the defaults added for the names it does not set.
pub fn merge_headers(defaults: &HeaderMap, own: HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(defaults.len() + own.len());
    for (name, value) in defaults {
        if !own.contains_key(name) {
            out.append(name.clone(), value.clone());
        }
    }
    // HeaderMap's IntoIter yields the name only with the first of its values
    let mut last = None;
    for (name, value) in own {
        if let Some(name) = name {
            last = Some(name);
        }
        if let Some(name) = &last {
            out.append(name.clone(), value);
        }
    }
    out
}

/// `a` and `b` have the same origin: scheme, host, port.
fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && a.host_str() == b.host_str() && a.port_or_known_default() == b.port_or_known_default()
}

/// Read (at most 64 KiB of) a redirect's body so that its connection can go back to the pool; a larger or
/// failing one is dropped with its connection.
async fn discard(mut resp: reqwest::Response) {
    let mut left: usize = 64 * 1024;
    while let Ok(Some(chunk)) = resp.chunk().await {
        if chunk.len() >= left {
            return;
        }
        left -= chunk.len();
    }
}

impl Client {
    /// Send `req` (following redirects as the module docs say) and return the final response with its body
    /// not yet read; the total timeout, when there is one, still covers reading it.
    pub async fn open(&self, req: Request) -> Result<reqwest::Response, ClientError> {
        let http = self.api_http()?.clone();
        let total = req.timeout.or(self.options.timeout);
        let deadline = Deadline { started: Instant::now(), total };
        let left = || deadline.left();
        let Request { mut method, mut url, headers, body, follow_redirects, max_redirects, .. } = req;
        let mut headers = merge_headers(&self.options.default_headers, headers);
        let mut body = match body {
            Body::Empty => None,
            Body::Bytes(b) => Some(b),
            Body::Stream(s) => {
                let (permit, first) = self.shape().enter(&url, left()?).await?;
                settle_idle_connections().await;
                let rb = crate::request_builder(&http, self.options.http3, method.clone(), url.clone());
                let mut rb = rb.headers(self.hop_headers(&headers, &url)).body(s);
                if let Some(t) = left()? {
                    rb = rb.timeout(t);
                }
                let resp = crate::phases::exchange(&url, self.options.http3, rb.send())
                    .await
                    .map_err(|e| self.shape().explain(classify(&e)));
                drop(first);
                let mut resp = resp?;
                if self.options.http3 {
                    resp = crate::protocol::h3_checked(resp, &method);
                }
                if let Some(p) = permit {
                    resp.extensions_mut().insert(p);
                }
                self.note_response(&resp);
                // A streamed body cannot be sent again: a 307/308 is returned as it is.
                if !follow_redirects || matches!(resp.status().as_u16(), 307 | 308) {
                    return Ok(resp);
                }
                return self.follow(http, resp, method, headers, None, max_redirects, &deadline).await;
            }
        };
        let mut hops = 0;
        loop {
            let hop = self.hop_headers(&headers, &url);
            let resp =
                send_on(&http, self.shape(), total, method.clone(), url.clone(), hop, body.clone(), left()?).await?;
            self.note_response(&resp);
            if !follow_redirects {
                return Ok(resp);
            }
            let Some(next) = self.next_url(&resp)? else { return Ok(resp) };
            if hops >= max_redirects {
                return Err(too_many(max_redirects, &url, &next));
            }
            hops += 1;
            redirect_request(resp.status().as_u16(), &mut method, &mut headers, &mut body, &url, &next);
            discard(resp).await;
            url = next;
        }
    }

    /// The rest of a chain whose first request had a streamed body (now gone: `body` is None).
    #[allow(clippy::too_many_arguments)]
    async fn follow(
        &self,
        http: reqwest::Client,
        mut resp: reqwest::Response,
        mut method: Method,
        mut headers: HeaderMap,
        mut body: Option<Bytes>,
        max_redirects: usize,
        deadline: &Deadline,
    ) -> Result<reqwest::Response, ClientError> {
        let mut hops = 0;
        loop {
            let Some(next) = self.next_url(&resp)? else { return Ok(resp) };
            let status = resp.status().as_u16();
            if matches!(status, 307 | 308) && body.is_none() && method != Method::GET && method != Method::HEAD {
                return Ok(resp); // the streamed body cannot be repeated
            }
            let url = resp.url().clone();
            if hops >= max_redirects {
                return Err(too_many(max_redirects, &url, &next));
            }
            hops += 1;
            redirect_request(status, &mut method, &mut headers, &mut body, &url, &next);
            discard(resp).await;
            let hop = self.hop_headers(&headers, &next);
            let left = deadline.left()?;
            resp = send_on(&http, self.shape(), None, method.clone(), next, hop, body.clone(), left).await?;
            self.note_response(&resp);
        }
    }

    /// [`next_url`], which a client with HTTP/3 can follow over QUIC only: a redirect to `http://` is
    /// [`ClientError::Protocol`], as any other redirect that cannot be followed.
    fn next_url(&self, resp: &reqwest::Response) -> Result<Option<Url>, ClientError> {
        let next = next_url(resp)?;
        match next {
            Some(n) if self.options.http3 && n.scheme() != "https" => Err(ClientError::Protocol(format!(
                "the redirect from {} cannot be followed over HTTP/3: its Location {n} is not https://",
                resp.url()
            ))),
            next => Ok(next),
        }
    }

    /// The headers of one hop to `url`: the request's, with the jar's cookies for `url` unless the request
    /// sets its own `Cookie`.
    fn hop_headers(&self, headers: &HeaderMap, url: &Url) -> HeaderMap {
        let mut out = headers.clone();
        if let Some(jar) = self.cookie_jar() {
            if !out.contains_key(header::COOKIE) {
                if let Some(value) = jar.header_for(url) {
                    out.insert(header::COOKIE, value);
                }
            }
        }
        out
    }

    /// What every response of the user-facing API updates: the TLS and HTTP versions seen, the cookie jar.
    fn note_response(&self, resp: &reqwest::Response) {
        self.note(resp);
        if let Some(jar) = self.cookie_jar() {
            jar.store(resp.headers(), resp.url());
        }
    }
}

/// The total timeout of a request and when it started.
struct Deadline {
    started: Instant,
    total: Option<Duration>,
}

impl Deadline {
    /// What is left of the total timeout (`None`: there is none); an error once it has expired.
    fn left(&self) -> Result<Option<Duration>, ClientError> {
        match self.total {
            None => Ok(None),
            Some(t) => match t.checked_sub(self.started.elapsed()) {
                Some(d) if !d.is_zero() => Ok(Some(d)),
                _ => Err(ClientError::Timeout(format!("the request's total timeout ({t:?}) expired"))),
            },
        }
    }
}

/// The URL a 301/302/303/307/308 response with a `Location` redirects to (`None`: another status, or no
/// `Location`); a `Location` that cannot be followed is [`ClientError::Protocol`].
fn next_url(resp: &reqwest::Response) -> Result<Option<Url>, ClientError> {
    if !matches!(resp.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
        return Ok(None);
    }
    let Some(location) = resp.headers().get(header::LOCATION) else { return Ok(None) };
    // a raw UTF-8 Location is percent-encoded by the URL parser, as a browser does
    let location = String::from_utf8_lossy(location.as_bytes());
    resolve_location(resp.url(), location.trim()).map(Some)
}

/// `location` resolved against `base`, checked as [`crate::parse_url`] checks a caller's URL.
pub fn resolve_location(base: &Url, location: &str) -> Result<Url, ClientError> {
    let bad = |why: String| {
        ClientError::Protocol(format!("the redirect from {base} cannot be followed: its Location {location:?} {why}"))
    };
    if location.bytes().any(|b| b.is_ascii_control()) {
        return Err(bad("holds a control character".into()));
    }
    let next = base.join(location).map_err(|e| bad(format!("is not a valid URL ({e})")))?;
    if !matches!(next.scheme(), "http" | "https") {
        return Err(bad(format!("has the unsupported scheme {:?} (only http:// and https://)", next.scheme())));
    }
    if next.host_str().is_none_or(str::is_empty) || next.port() == Some(0) {
        return Err(bad("has no host or port 0".into()));
    }
    Ok(next)
}

fn too_many(max: usize, url: &Url, next: &Url) -> ClientError {
    ClientError::TooManyRedirects(format!(
        "more than {max} redirects: the last response, from {url}, redirects to {next}"
    ))
}

/// Turn the request that got a `status` redirect from `url` into the one for `next`.
fn redirect_request(
    status: u16,
    method: &mut Method,
    headers: &mut HeaderMap,
    body: &mut Option<Bytes>,
    url: &Url,
    next: &Url,
) {
    if matches!(status, 301..=303) {
        if *method != Method::HEAD {
            *method = Method::GET;
        }
        *body = None;
        for name in [header::CONTENT_TYPE, header::CONTENT_ENCODING, header::CONTENT_LENGTH, header::TRANSFER_ENCODING]
        {
            headers.remove(name);
        }
    }
    if !same_origin(url, next) {
        for name in [header::AUTHORIZATION, header::COOKIE, header::PROXY_AUTHORIZATION] {
            headers.remove(name);
        }
    }
}

/// `name: value` pairs → a header map for [`Request::headers`] / [`crate::ClientOptions::default_headers`]
/// (`Content-Length` and `Transfer-Encoding` are refused: the body sets them).
pub fn headers(pairs: &[(String, String)]) -> Result<HeaderMap, ClientError> {
    crate::header_map(pairs)
}

/// Everything but RFC 3986's unreserved characters (`A-Za-z0-9-._~`) is percent-encoded in `params`.
const QUERY_COMPONENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Append `name=value` pairs to `url`'s query (after what is there), names and values percent-encoded as
/// UTF-8 (a space is `%20`).
pub fn append_params(url: &mut Url, params: &[(String, String)]) {
    if params.is_empty() {
        return;
    }
    let mut query = url.query().unwrap_or("").to_owned();
    for (name, value) in params {
        if !query.is_empty() {
            query.push('&');
        }
        query.extend(percent_encoding::utf8_percent_encode(name, QUERY_COMPONENT));
        query.push('=');
        query.extend(percent_encoding::utf8_percent_encode(value, QUERY_COMPONENT));
    }
    url.set_query(Some(&query));
}

impl Body {
    /// A chunked upload of what `next` returns, called each time the connection wants more (on the runtime's
    /// thread, so it should not block for long): `Ok(None)` ends the body, an error aborts the request.
    pub fn from_fn<F>(mut next: F) -> Body
    where
        F: FnMut() -> Result<Option<Bytes>, std::io::Error> + Send + 'static,
    {
        let chunks = std::iter::from_fn(move || next().transpose());
        Body::Stream(reqwest::Body::wrap_stream(futures_util::stream::iter(chunks)))
    }

    /// A chunked upload of what `rx` receives, fed by another task or thread (the Python binding's AsyncClient
    /// sends the chunks from its event loop's thread): the body ends when every sender is dropped, an error
    /// aborts the request.
    pub fn from_channel(rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>) -> Body {
        let chunks = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
        Body::Stream(reqwest::Body::wrap_stream(chunks))
    }
}

/// A `User-Agent` value.
pub fn header_value(value: &str) -> Result<HeaderValue, ClientError> {
    HeaderValue::from_str(value).map_err(|_| ClientError::InvalidRequest(format!("invalid header value {value:?}")))
}

#[cfg(test)]
mod unit {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn params_are_percent_encoded_and_appended() {
        let mut u = url("http://h/p?a=1#f");
        append_params(&mut u, &[("q".into(), "a b/é&=~".into()), ("k-._~".into(), "".into())]);
        assert_eq!(u.as_str(), "http://h/p?a=1&q=a%20b%2F%C3%A9%26%3D~&k-._~=#f");
        let mut u = url("http://h/");
        append_params(&mut u, &[("x".into(), "1".into())]);
        assert_eq!(u.query(), Some("x=1"));
    }

    #[test]
    fn defaults_are_overridden_by_name() {
        let defaults = headers(&[("User-Agent".into(), "ua/1".into()), ("X-A".into(), "d".into())]).unwrap();
        let own = headers(&[("x-a".into(), "1".into()), ("X-A".into(), "2".into())]).unwrap();
        let merged = merge_headers(&defaults, own);
        assert_eq!(merged.get("user-agent").unwrap(), "ua/1");
        let a: Vec<_> = merged.get_all("x-a").iter().collect();
        assert_eq!(a, ["1", "2"]);
    }

    #[test]
    fn see_other_becomes_get_and_cross_origin_drops_credentials() {
        let mut method = Method::POST;
        let mut h = headers(&[
            ("Authorization".into(), "secret".into()),
            ("Cookie".into(), "a=1".into()),
            ("Content-Type".into(), "text/plain".into()),
            ("X-Keep".into(), "1".into()),
        ])
        .unwrap();
        let mut body = Some(Bytes::from_static(b"x"));
        redirect_request(303, &mut method, &mut h, &mut body, &url("http://127.0.0.1:1/"), &url("http://localhost:1/"));
        assert_eq!(method, Method::GET);
        assert!(body.is_none());
        assert!(h.get("authorization").is_none() && h.get("cookie").is_none() && h.get("content-type").is_none());
        assert_eq!(h.get("x-keep").unwrap(), "1");
    }

    #[test]
    fn locations_are_resolved_and_the_unfollowable_are_protocol_errors() {
        let base = url("http://h/a/b");
        assert_eq!(resolve_location(&base, "c?d").unwrap().as_str(), "http://h/a/c?d");
        assert_eq!(resolve_location(&base, "//other:81/").unwrap().as_str(), "http://other:81/");
        assert_eq!(resolve_location(&base, "HTTPS://h/x").unwrap().as_str(), "https://h/x");
        assert_eq!(resolve_location(&base, "/é x").unwrap().as_str(), "http://h/%C3%A9%20x");
        for bad in [
            "ftp://h/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "mailto:a@h",
            "data:text/plain,x",
            "http://[::1",
            "http://h:99999/",
            "http://h:0/",
            "http://",
            "/a\tb",
            "/a\x7fb",
        ] {
            assert!(matches!(resolve_location(&base, bad), Err(ClientError::Protocol(_))), "{bad:?}");
        }
    }

    #[test]
    fn temporary_redirect_keeps_method_body_and_same_origin_credentials() {
        let mut method = Method::PUT;
        let mut h = headers(&[("Authorization".into(), "secret".into())]).unwrap();
        let mut body = Some(Bytes::from_static(b"x"));
        redirect_request(307, &mut method, &mut h, &mut body, &url("http://a:80/x"), &url("http://a/y"));
        assert_eq!(method, Method::PUT);
        assert_eq!(body.as_deref(), Some(&b"x"[..]));
        assert!(h.get("authorization").is_some());
        let mut method = Method::HEAD;
        redirect_request(302, &mut method, &mut h, &mut body, &url("http://a/"), &url("https://a/"));
        assert_eq!(method, Method::HEAD);
        assert!(h.get("authorization").is_none(), "scheme change is another origin");
    }
}
