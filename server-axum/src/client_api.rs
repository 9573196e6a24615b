//! The endpoints that the bindings' API tests need (docs/binding-api.md): redirects, header and request echo,
//! compressed bodies, cookies, a chunked stream, a slow trickle and non-UTF-8 text. None of them is on the
//! benchmark path; they are routed next to it by [`crate::app_with_stats`] (plain and `--tls` alike).
//!
//! | Route                              | Response                                                            |
//! |------------------------------------|---------------------------------------------------------------------|
//! | any `/redirect/{n}`                | 302, `Location: /redirect/{n-1}` (relative), `/` for n = 1; `1 <= n <= 100`, else 400 |
//! | any `/redirect-to?url=U&status=S`  | `S` (300..=399, default 302) with `Location: U` as given (absolute or relative); else 400 |
//! | `GET /headers`                     | 200 JSON object: lower-case header name → list of its values, in received order |
//! | any `/anything`, `/anything/{*p}`  | 200 JSON `{"method", "path", "query", "headers", "body", "body_encoding", "body_len"}`: `path` and `query` as received (still percent-encoded; `query` "" when absent), `headers` as `/headers`, `body` the request body as text (`body_encoding` `"utf-8"`) or base64 (`"base64"`) when it is not UTF-8; > 64 MiB → 413 |
//! | `GET /gzip`, `/deflate`, `/brotli`, `/zstd` | 200 [`compressed_json`] compressed with that coding whatever the request's `Accept-Encoding`, `Content-Encoding: gzip`/`deflate` (zlib, RFC 1950)/`br`/`zstd`, `Content-Type: application/json` |
//! | `GET /cookies/set?n1=v1&n2=v2...`  | 200 JSON `[[n1, v1], ...]` with one `Set-Cookie: n=v; Path=/` field per pair, in query order; a value that cannot be a header → 400 |
//! | `GET /stream/{n}`                  | 200, `Transfer-Encoding: chunked`, `n` lines `{"id":i}\n` (i = 0..n), one chunk each; `0 <= n <= 1000`, else 400 |
//! | `GET /drip?bytes=N&duration_ms=D`  | 200 with `Content-Length: N`: `N` bytes `*` sent in `min(N, 100)` pieces spread evenly over `D` ms (the first after one interval); `0 <= N <= 1 MiB`, `0 <= D <= 10000`, else 400 |
//! | `GET /charset/{name}`              | 200 [`CHARSET_TEXT`] encoded in `name` with `Content-Type: text/plain; charset={name}`: `utf-8`/`utf8`, `iso-8859-1`/`latin-1`/`latin1` (case-insensitive); else 400 |

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::Write;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{OriginalUri, Path, Query};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::{bad_request, parse_bounded};

/// Largest `n` of `/redirect/{n}`.
pub const MAX_REDIRECTS: u64 = 100;
/// Largest `n` of `/stream/{n}`.
pub const MAX_STREAM_LINES: u64 = 1000;
/// Largest `bytes` of `/drip`.
pub const MAX_DRIP_BYTES: u64 = 1024 * 1024;
/// Largest `duration_ms` of `/drip`.
pub const MAX_DRIP_MS: u64 = 10_000;
/// At most this many pieces per `/drip` response.
pub const DRIP_PIECES: u64 = 100;
/// The text of `/charset/{name}`: every character is in Latin-1, none is ASCII-only.
pub const CHARSET_TEXT: &str = "Grüße aus Köln: café, naïve, ½ + ¼ = ¾\n";

const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");

fn json_response(status: StatusCode, value: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, APPLICATION_JSON)], value.to_string()).into_response()
}

/// The JSON body that `/gzip`, `/deflate`, `/brotli` and `/zstd` compress (`coding` is the endpoint's name).
pub fn compressed_json(coding: &str) -> Value {
    json!({ "coding": coding, "text": "Hello, World! ".repeat(64) })
}

async fn redirect_n(Path(raw): Path<String>) -> Response {
    match parse_bounded(&raw, MAX_REDIRECTS).filter(|n| *n >= 1) {
        Some(n) => {
            let location = if n == 1 { "/".to_owned() } else { format!("/redirect/{}", n - 1) };
            let value = HeaderValue::from_str(&location).expect("ASCII location");
            (StatusCode::FOUND, [(header::LOCATION, value)]).into_response()
        }
        None => bad_request(format!("n must be an integer in 1..={MAX_REDIRECTS}\n")),
    }
}

#[derive(Deserialize)]
struct RedirectTo {
    url: String,
    status: Option<String>,
}

async fn redirect_to(query: Result<Query<RedirectTo>, axum::extract::rejection::QueryRejection>) -> Response {
    let Ok(Query(q)) = query else { return bad_request("usage: /redirect-to?url=URL&status=3xx\n".to_owned()) };
    let status = match q.status.as_deref() {
        None => Some(StatusCode::FOUND),
        Some(s) => parse_bounded(s, 399).filter(|c| *c >= 300).and_then(|c| StatusCode::from_u16(c as u16).ok()),
    };
    let Some(status) = status else { return bad_request("status must be an integer in 300..=399\n".to_owned()) };
    // Sent as given (UTF-8 included: a client has to cope with what real servers send).
    match HeaderValue::from_bytes(q.url.as_bytes()) {
        Ok(location) => (status, [(header::LOCATION, location)]).into_response(),
        Err(_) => bad_request("url cannot be a header value\n".to_owned()),
    }
}

/// Header name (lower case) → its values in received order.
fn headers_json(headers: &HeaderMap) -> Value {
    let mut map: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        map.entry(name.as_str()).or_default().push(String::from_utf8_lossy(value.as_bytes()).into_owned());
    }
    json!(map)
}

async fn headers(headers: HeaderMap) -> Response {
    json_response(StatusCode::OK, &headers_json(&headers))
}

async fn anything(method: Method, OriginalUri(uri): OriginalUri, headers: HeaderMap, body: Bytes) -> Response {
    let (text, encoding) = match std::str::from_utf8(&body) {
        Ok(s) => (s.to_owned(), "utf-8"),
        Err(_) => (base64::engine::general_purpose::STANDARD.encode(&body), "base64"),
    };
    let value = json!({
        "method": method.as_str(),
        "path": uri.path(),
        "query": uri.query().unwrap_or(""),
        "headers": headers_json(&headers),
        "body": text,
        "body_encoding": encoding,
        "body_len": body.len(),
    });
    json_response(StatusCode::OK, &value)
}

/// `body` compressed with `coding` (`gzip`, `deflate` = zlib, `br`, `zstd`).
pub fn compress(coding: &str, body: &[u8]) -> Vec<u8> {
    match coding {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(body).expect("in-memory write");
            e.finish().expect("in-memory write")
        }
        "deflate" => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(body).expect("in-memory write");
            e.finish().expect("in-memory write")
        }
        "br" => {
            let mut out = Vec::new();
            {
                let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                w.write_all(body).expect("in-memory write");
            }
            out
        }
        "zstd" => zstd::bulk::compress(body, 3).expect("in-memory zstd"),
        other => unreachable!("unknown coding {other}"),
    }
}

fn compressed(name: &'static str, coding: &'static str) -> Response {
    let body = compress(coding, compressed_json(name).to_string().as_bytes());
    ([(header::CONTENT_TYPE, APPLICATION_JSON), (header::CONTENT_ENCODING, HeaderValue::from_static(coding))], body)
        .into_response()
}

async fn gzip() -> Response {
    compressed("gzip", "gzip")
}

async fn deflate() -> Response {
    compressed("deflate", "deflate")
}

async fn brotli() -> Response {
    compressed("brotli", "br")
}

async fn zstd() -> Response {
    compressed("zstd", "zstd")
}

async fn cookies_set(
    query: Result<Query<Vec<(String, String)>>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(pairs)) = query else { return bad_request("usage: /cookies/set?name=value&...\n".to_owned()) };
    let mut resp = json_response(StatusCode::OK, &json!(pairs));
    for (name, value) in &pairs {
        let Ok(v) = HeaderValue::from_str(&format!("{name}={value}; Path=/")) else {
            return bad_request(format!("cookie {name:?} cannot be a header value\n"));
        };
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

async fn stream_n(Path(raw): Path<String>) -> Response {
    let Some(n) = parse_bounded(&raw, MAX_STREAM_LINES) else {
        return bad_request(format!("n must be an integer in 0..={MAX_STREAM_LINES}\n"));
    };
    let lines =
        futures_util::stream::iter((0..n).map(|i| Ok::<_, Infallible>(Bytes::from(format!("{{\"id\":{i}}}\n")))));
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"))], Body::from_stream(lines))
        .into_response()
}

#[derive(Deserialize)]
struct Drip {
    bytes: Option<String>,
    duration_ms: Option<String>,
}

async fn drip(query: Result<Query<Drip>, axum::extract::rejection::QueryRejection>) -> Response {
    let usage = || {
        bad_request(format!(
            "usage: /drip?bytes=N&duration_ms=D with N in 0..={MAX_DRIP_BYTES} and D in 0..={MAX_DRIP_MS}\n"
        ))
    };
    let Ok(Query(q)) = query else { return usage() };
    let n = match q.bytes.as_deref().map_or(Some(10), |s| parse_bounded(s, MAX_DRIP_BYTES)) {
        Some(n) => n,
        None => return usage(),
    };
    let ms = match q.duration_ms.as_deref().map_or(Some(1000), |s| parse_bounded(s, MAX_DRIP_MS)) {
        Some(ms) => ms,
        None => return usage(),
    };
    let pieces = n.min(DRIP_PIECES);
    let interval = if pieces == 0 { Duration::ZERO } else { Duration::from_millis(ms) / pieces as u32 };
    let body = futures_util::stream::unfold(0u64, move |i| async move {
        if i >= pieces {
            return None;
        }
        tokio::time::sleep(interval).await;
        let len = n * (i + 1) / pieces - n * i / pieces;
        Some((Ok::<_, Infallible>(Bytes::from(vec![b'*'; len as usize])), i + 1))
    });
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream")),
            (header::CONTENT_LENGTH, n.into()),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

async fn charset(Path(name): Path<String>) -> Response {
    let body: Vec<u8> = match name.to_ascii_lowercase().as_str() {
        "utf-8" | "utf8" => CHARSET_TEXT.as_bytes().to_vec(),
        // every character of the text is below U+0100: its Latin-1 byte is its code point
        "iso-8859-1" | "latin-1" | "latin1" => CHARSET_TEXT.chars().map(|c| c as u32 as u8).collect(),
        _ => return bad_request("charset must be utf-8 or iso-8859-1 (latin-1)\n".to_owned()),
    };
    let Ok(ct) = HeaderValue::from_str(&format!("text/plain; charset={name}")) else {
        return bad_request("bad charset name\n".to_owned());
    };
    ([(header::CONTENT_TYPE, ct)], body).into_response()
}

/// These routes, to be merged into the app's router.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> axum::Router<S> {
    use axum::extract::DefaultBodyLimit;
    use axum::routing::{any, get};
    axum::Router::new()
        .route("/redirect/{n}", any(redirect_n))
        .route("/redirect-to", any(redirect_to))
        .route("/headers", get(headers))
        .route("/anything", any(anything).layer(DefaultBodyLimit::max(crate::MAX_ECHO_BYTES)))
        .route("/anything/{*path}", any(anything).layer(DefaultBodyLimit::max(crate::MAX_ECHO_BYTES)))
        .route("/gzip", get(gzip))
        .route("/deflate", get(deflate))
        .route("/brotli", get(brotli))
        .route("/zstd", get(zstd))
        .route("/cookies/set", get(cookies_set))
        .route("/stream/{n}", get(stream_n))
        .route("/drip", get(drip))
        .route("/charset/{name}", get(charset))
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn latin1_text_is_latin1() {
        assert!(CHARSET_TEXT.chars().all(|c| (c as u32) < 0x100));
        assert!(!CHARSET_TEXT.is_ascii());
    }
}
