//! clientbench-server: the local HTTP target for the clientbench client benchmarks: HTTP/1.1, and HTTP/2 on
//! the same port (with prior knowledge over plain TCP, h2c; after ALPN `h2` over TLS): hyper-util's auto
//! builder tells them apart by the HTTP/2 connection preface. With TLS, also HTTP/3 over QUIC on the same
//! port number over UDP ([`http3`]): one router, three transports.
//!
//! Endpoints (all bodies are exact; every response carries `Content-Length`):
//!
//! | Route               | Response                                                                 |
//! |---------------------|--------------------------------------------------------------------------|
//! | `GET /`             | 200 `Hello, World!` (13 bytes), `text/plain; charset=utf-8`              |
//! | `GET /bytes/{n}`    | 200, exactly `n` bytes, byte `i` = `b'a' + (i % 26)`, `application/octet-stream`; `0 <= n <= 64 MiB` (67108864), else 400 |
//! | `GET /delay/{ms}`   | 200 `Hello, World!` after sleeping `ms` milliseconds; `0 <= ms <= 10000`, else 400 |
//! | `GET /status/{code}`| `code` with body `status {code}` (empty for 204/205/304); `200 <= code <= 599`, else 400 |
//! | `POST`/`PUT /echo`  | 200, the request body echoed back (`application/octet-stream`); > 64 MiB → 413 |
//! | `GET`/`POST`/`PUT /upload` | 200 `<length> <sha256 hex>` of the request body (`0 e3b0c442…` for none), hashed as it streams in (docs/raw-format.md, "Request bodies"); > 1 GiB → 413 |
//! | `GET /stall?every=N&ms=M` | as `GET /`, but every Nth request to `/stall` (one counter per server) first sleeps `M` ms; `1 <= N`, `0 <= M <= 60000`, else 400 |
//! | `GET /health`       | 200 `ok`                                                                  |
//! | `GET /close`        | 200 `Hello, World!` with `Connection: close`; the server closes the connection after the response (HTTP/2: the header is dropped, the connection stays; HTTP/3: a GOAWAY follows the response) |
//! | `GET /stats`        | 200 `{"connections":N,"tls_handshakes":N,"tls_resumed":N,...}` (`application/json`): counters since start, see [`StatsSnapshot`] |
//!
//! Unknown paths → 404 (empty body), wrong method → 405 (axum defaults). `GET` routes also
//! answer `HEAD` (axum default).
//!
//! The endpoints the bindings' API tests use (redirects, `/headers`, `/anything`, `/gzip` and co.,
//! `/cookies/set`, `/stream/{n}`, `/drip`, `/charset/{name}`) are in [`client_api`], with their table.
//!
//! [`tls`] serves all of this over HTTPS (`--tls`), and [`http3`] over HTTP/3.

pub mod client_api;
pub mod counting;
pub mod http3;
pub mod tls;
pub mod udp;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Body of `/`, `/delay/{ms}` and `/close`.
pub const HELLO: &str = "Hello, World!";
/// Largest `n` accepted by `/bytes/{n}` (64 MiB, inclusive).
pub const MAX_BYTES: usize = 64 * 1024 * 1024;
/// Largest `ms` accepted by `/delay/{ms}` (inclusive).
pub const MAX_DELAY_MS: u64 = 10_000;
/// Largest request body accepted by `POST /echo` (64 MiB, inclusive); larger → 413.
pub const MAX_ECHO_BYTES: usize = 64 * 1024 * 1024;

/// Largest request body accepted by `/upload` (1 GiB, inclusive, the drivers' largest `--body-size`);
/// larger → 413.
pub const MAX_UPLOAD_BYTES: u64 = 1 << 30;
/// Largest `ms` accepted by `/stall`.
pub const MAX_STALL_MS: u64 = 60_000;

/// Requests for at most this many bytes are served from a small pattern buffer, so the
/// 64 MiB buffer is only allocated once a larger body is actually requested.
const SMALL_PATTERN_LEN: usize = 1024 * 1024;

const TEXT_PLAIN: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
const OCTET_STREAM: HeaderValue = HeaderValue::from_static("application/octet-stream");

/// The `/bytes` pattern: byte `i` is `b'a' + (i % 26)`, i.e. `abc…xyzabc…`.
pub fn pattern_byte(i: usize) -> u8 {
    b'a' + (i % 26) as u8
}

fn build_pattern(len: usize) -> Bytes {
    const ALPHABET: &[u8; 26] = b"abcdefghijklmnopqrstuvwxyz";
    let mut v = Vec::with_capacity(len + 26);
    while v.len() < len {
        v.extend_from_slice(ALPHABET);
    }
    v.truncate(len);
    Bytes::from(v)
}

/// Returns the first `n` bytes of the pattern (`n <= MAX_BYTES`). Zero-copy: the result is
/// a slice of a lazily built, process-wide buffer.
pub fn pattern(n: usize) -> Bytes {
    static SMALL: OnceLock<Bytes> = OnceLock::new();
    static LARGE: OnceLock<Bytes> = OnceLock::new();
    assert!(n <= MAX_BYTES, "pattern length out of range");
    let buf = if n <= SMALL_PATTERN_LEN {
        SMALL.get_or_init(|| build_pattern(SMALL_PATTERN_LEN))
    } else {
        LARGE.get_or_init(|| build_pattern(MAX_BYTES))
    };
    buf.slice(..n)
}

/// Builds the small pattern buffer ahead of time so the first small `/bytes` request
/// doesn't pay for it (called by the binary at startup; optional).
pub fn warm_up() {
    let _ = pattern(0);
}

fn text(status: StatusCode, body: impl Into<Bytes>) -> Response {
    (status, [(header::CONTENT_TYPE, TEXT_PLAIN)], body.into()).into_response()
}

fn bad_request(msg: String) -> Response {
    text(StatusCode::BAD_REQUEST, msg)
}

/// Parses a decimal, non-negative integer path segment with an inclusive upper bound.
fn parse_bounded(raw: &str, max: u64) -> Option<u64> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match raw.parse::<u64>() {
        Ok(v) if v <= max => Some(v),
        _ => None,
    }
}

async fn hello() -> Response {
    text(StatusCode::OK, HELLO)
}

async fn bytes(Path(raw): Path<String>) -> Response {
    match parse_bounded(&raw, MAX_BYTES as u64) {
        Some(n) => ([(header::CONTENT_TYPE, OCTET_STREAM)], pattern(n as usize)).into_response(),
        None => bad_request(format!("n must be an integer in 0..={MAX_BYTES}\n")),
    }
}

async fn delay(Path(raw): Path<String>) -> Response {
    match parse_bounded(&raw, MAX_DELAY_MS) {
        Some(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            text(StatusCode::OK, HELLO)
        }
        None => bad_request(format!("ms must be an integer in 0..={MAX_DELAY_MS}\n")),
    }
}

async fn status(Path(raw): Path<String>) -> Response {
    let code = parse_bounded(&raw, 599).filter(|c| *c >= 200).and_then(|c| StatusCode::from_u16(c as u16).ok());
    match code {
        // 204, 205 and 304 must not carry content (RFC 9110 §15.3.5, §15.3.6, §15.4.5);
        // answer them with an empty body so no misleading Content-Length is sent.
        Some(code) if matches!(code.as_u16(), 204 | 205 | 304) => code.into_response(),
        Some(code) => text(code, format!("status {}", code.as_u16())),
        None => bad_request("code must be an integer in 200..=599\n".to_owned()),
    }
}

async fn echo(body: Bytes) -> Response {
    ([(header::CONTENT_TYPE, OCTET_STREAM)], body).into_response()
}

/// `/upload`: the length and SHA-256 of the body, read chunk by chunk (never buffered whole).
async fn upload(headers: axum::http::HeaderMap, body: Body) -> Response {
    upload_limited(&headers, body, MAX_UPLOAD_BYTES).await
}

async fn upload_limited(headers: &axum::http::HeaderMap, body: Body, limit: u64) -> Response {
    let too_large = || text(StatusCode::PAYLOAD_TOO_LARGE, format!("the body must be at most {limit} bytes\n"));
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return too_large(); // refused before reading a byte of it
    }
    let mut hasher = Sha256::new();
    let mut length: u64 = 0;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            return bad_request("the request body broke off\n".to_owned());
        };
        length += chunk.len() as u64;
        if length > limit {
            return too_large();
        }
        hasher.update(&chunk);
    }
    text(StatusCode::OK, upload_line(length, &hasher.finalize()))
}

/// `"<length> <sha256 hex>"`, what `/upload` answers.
pub fn upload_line(length: u64, digest: &[u8]) -> String {
    use std::fmt::Write;
    let mut line = format!("{length} ");
    for b in digest {
        let _ = write!(line, "{b:02x}");
    }
    line
}

#[derive(Deserialize)]
struct StallQuery {
    every: Option<String>,
    ms: Option<String>,
}

/// `/stall`: every `every`-th request (counted in `counter`, shared by all connections) sleeps `ms` first,
/// so that a client on a schedule sees one stall charged to the requests queued behind it.
async fn stall(counter: Arc<AtomicU64>, query: Result<Query<StallQuery>, QueryRejection>) -> Response {
    let q = query.ok().map(|Query(q)| q);
    let every = q.as_ref().and_then(|q| parse_bounded(q.every.as_deref()?, u64::MAX)).filter(|n| *n >= 1);
    let ms = q.as_ref().and_then(|q| parse_bounded(q.ms.as_deref()?, MAX_STALL_MS));
    let (Some(every), Some(ms)) = (every, ms) else {
        return bad_request(format!("usage: /stall?every=N&ms=M with N >= 1 and M in 0..={MAX_STALL_MS}\n"));
    };
    let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_multiple_of(every) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    text(StatusCode::OK, HELLO)
}

async fn health() -> Response {
    text(StatusCode::OK, "ok")
}

/// Over HTTP/3 the `Connection: close` becomes a GOAWAY after the response ([`http3`]).
async fn close() -> Response {
    ([(header::CONTENT_TYPE, TEXT_PLAIN), (header::CONNECTION, HeaderValue::from_static("close"))], HELLO)
        .into_response()
}

/// Counters since the server started, served by `GET /stats` (exact, whatever the thread). The listener
/// counts connections and handshakes, [`counting::Sniff`] each connection's protocol, and
/// [`counting::Counted`] (around the router) the requests.
#[derive(Debug, Default)]
pub struct Stats {
    /// Accepted TCP connections (HTTP and HTTPS; the one a `/stats` request came on included).
    pub connections: AtomicU64,
    /// Completed TLS handshakes (0 for plain HTTP).
    pub tls_handshakes: AtomicU64,
    /// Completed TLS handshakes that resumed a session (rustls's `HandshakeKind::Resumed`; 0 for plain HTTP).
    pub tls_resumed: AtomicU64,
    /// Connections whose client spoke HTTP/1.x (its first bytes were not the HTTP/2 preface).
    pub http1_connections: AtomicU64,
    /// Connections whose client sent the HTTP/2 connection preface (h2c with prior knowledge, or h2 after ALPN).
    pub h2_connections: AtomicU64,
    /// Requests that reached the router over HTTP/1.x.
    pub http1_requests: counting::Counter,
    /// Requests that reached the router over HTTP/2 (one per stream).
    pub h2_requests: counting::Counter,
    /// QUIC connections the server took up (HTTP/3; one whose handshake then fails included).
    pub quic_connections: AtomicU64,
    /// Completed QUIC handshakes (TLS 1.3 inside QUIC). quinn does not tell a server whether a handshake
    /// resumed a session, so there is no QUIC counterpart of `tls_resumed`.
    pub quic_handshakes: AtomicU64,
    /// Requests that reached the router over HTTP/3 (one per request stream).
    pub h3_requests: counting::Counter,
    /// The HTTP/3 socket's buffer sizes as granted; unset without HTTP/3.
    pub udp_buffers: OnceLock<udp::Buffers>,
    /// The authorities requests were made for (over every protocol and address), with their requests.
    pub origins: counting::Origins,
}

/// What `GET /stats` answers. `connections`, `tls_*`, `http1_connections` and `h2_connections` are about TCP
/// connections; a connection that sent nothing (or a failed TLS handshake) is in `connections` only, so
/// `http1_connections + h2_connections <= connections`. QUIC connections are counted apart (`quic_*`).
///
/// `origins` and `origin_requests` are about the authorities requests named (HTTP/2 and 3's `:authority`,
/// HTTP/1.1's `Host`, as the client sent them: `127.0.0.2:41234`), such as the loopback addresses of
/// `clientbench run --hosts N`. `origins` counts those seen since start, so it only grows; how many origins a
/// stretch of time used is in `origin_requests`, whose every count can be diffed: the authorities whose count
/// rose. Both stop at [`counting::MAX_ORIGINS`] authorities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsSnapshot {
    pub connections: u64,
    pub tls_handshakes: u64,
    pub tls_resumed: u64,
    pub http1_connections: u64,
    pub h2_connections: u64,
    /// Every request, of every protocol (the `/stats` request itself included).
    pub requests: u64,
    /// The requests (streams) over HTTP/2.
    pub h2_requests: u64,
    /// QUIC connections accepted, and their completed handshakes.
    pub quic_connections: u64,
    pub quic_handshakes: u64,
    /// The requests (request streams) over HTTP/3.
    pub h3_requests: u64,
    /// The UDP socket's receive and send buffers as the kernel granted them (bytes); null without HTTP/3.
    pub udp_recv_buffer: Option<u64>,
    pub udp_send_buffer: Option<u64>,
    /// Distinct authorities requested since start (a request without one, HTTP/1.0 without `Host`, has none).
    pub origins: u64,
    /// Each authority requested, with its requests since start (the `/stats` requests included).
    pub origin_requests: BTreeMap<String, u64>,
}

impl Stats {
    pub fn snapshot(&self) -> StatsSnapshot {
        let h2_requests = self.h2_requests.get();
        let h3_requests = self.h3_requests.get();
        let buffers = self.udp_buffers.get();
        let origin_requests = self.origins.requests();
        StatsSnapshot {
            connections: self.connections.load(Ordering::Acquire),
            tls_handshakes: self.tls_handshakes.load(Ordering::Acquire),
            tls_resumed: self.tls_resumed.load(Ordering::Acquire),
            http1_connections: self.http1_connections.load(Ordering::Acquire),
            h2_connections: self.h2_connections.load(Ordering::Acquire),
            requests: self.http1_requests.get() + h2_requests + h3_requests,
            h2_requests,
            quic_connections: self.quic_connections.load(Ordering::Acquire),
            quic_handshakes: self.quic_handshakes.load(Ordering::Acquire),
            h3_requests,
            udp_recv_buffer: buffers.map(|b| b.recv),
            udp_send_buffer: buffers.map(|b| b.send),
            origins: origin_requests.len() as u64,
            origin_requests,
        }
    }
}

async fn stats(State(stats): State<Arc<Stats>>) -> Json<StatsSnapshot> {
    Json(stats.snapshot())
}

static DEBUG: AtomicBool = AtomicBool::new(false);

/// Turn debug-level logging (`--log-level debug`) on or off.
pub fn set_debug(on: bool) {
    DEBUG.store(on, Ordering::Relaxed);
}

pub fn debug_enabled() -> bool {
    DEBUG.load(Ordering::Relaxed)
}

/// `eprintln!` at debug level: only with `--log-level debug`.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => {
        if $crate::debug_enabled() {
            eprintln!("clientbench-server: debug: {}", format_args!($($arg)*));
        }
    };
}

/// The benchmark server's router with counters that no listener updates (`/stats` answers zeros).
pub fn app() -> Router {
    app_with_stats(Arc::new(Stats::default()))
}

/// The benchmark server's router; `GET /stats` answers `stats`, which the listener and the router update.
pub fn app_with_stats(stats: Arc<Stats>) -> Router {
    let stalls = Arc::new(AtomicU64::new(0));
    Router::new()
        .route("/", get(hello))
        .route("/bytes/{n}", get(bytes))
        .route("/delay/{ms}", get(delay))
        .route("/status/{code}", get(status))
        // PUT too: a targets file's upload may be either (docs/bodies.md)
        .route("/echo", post(echo).put(echo).layer(DefaultBodyLimit::max(MAX_ECHO_BYTES)))
        .route("/upload", get(upload).post(upload).put(upload).layer(DefaultBodyLimit::disable()))
        .route("/stall", get(move |q: Result<Query<StallQuery>, QueryRejection>| stall(stalls.clone(), q)))
        .route("/health", get(health))
        .route("/close", get(close))
        .route("/stats", get(self::stats))
        .merge(client_api::routes())
        .with_state(stats)
}

/// What the binary serves: [`app_with_stats`] with every request counted in `stats` first
/// ([`counting::Counted`]).
pub fn counted_app(stats: Arc<Stats>) -> counting::Counted<Router> {
    counting::Counted::new(app_with_stats(stats.clone()), stats)
}

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit, so that 1000+ concurrent
/// connections don't run into a default soft limit of 1024. Returns the soft limit in force
/// afterwards. Never lowers the limit. Unix only (a no-op error elsewhere).
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not everywhere
pub fn raise_nofile_limit() -> std::io::Result<u64> {
    // SAFETY: getrlimit/setrlimit only read/write the `rlimit` struct we pass.
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if lim.rlim_cur == libc::RLIM_INFINITY || lim.rlim_cur >= lim.rlim_max {
        return Ok(lim.rlim_cur as u64);
    }
    // An unlimited hard limit can't be used as a soft NOFILE limit on Linux (capped by
    // fs.nr_open) or macOS (OPEN_MAX); then fall back to smaller, still generous values.
    let candidates: &[libc::rlim_t] = if lim.rlim_max == libc::RLIM_INFINITY {
        &[libc::RLIM_INFINITY, 1 << 20, 1 << 16, 10_240]
    } else {
        std::slice::from_ref(&lim.rlim_max)
    };
    let mut last_err = None;
    for &want in candidates {
        if want <= lim.rlim_cur {
            break;
        }
        let new = libc::rlimit { rlim_cur: want, rlim_max: lim.rlim_max };
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } == 0 {
            return Ok(want as u64);
        }
        last_err = Some(std::io::Error::last_os_error());
    }
    Err(last_err.unwrap_or_else(|| std::io::Error::other("no larger limit to try")))
}

#[cfg(not(unix))]
pub fn raise_nofile_limit() -> std::io::Result<u64> {
    Err(std::io::Error::other("not supported on this platform"))
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn parse_bounded_rejects_garbage() {
        assert_eq!(parse_bounded("0", 5), Some(0));
        assert_eq!(parse_bounded("5", 5), Some(5));
        assert_eq!(parse_bounded("6", 5), None);
        assert_eq!(parse_bounded("", 5), None);
        assert_eq!(parse_bounded("+1", 5), None);
        assert_eq!(parse_bounded("-1", 5), None);
        assert_eq!(parse_bounded("1.0", 5), None);
        assert_eq!(parse_bounded("99999999999999999999999", 5), None);
    }

    #[cfg(unix)]
    #[test]
    #[allow(clippy::unnecessary_cast)]
    fn nofile_limit_is_raised_to_hard() {
        let got = raise_nofile_limit().expect("raise_nofile_limit");
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        assert_eq!(got, lim.rlim_cur as u64);
        if lim.rlim_max != libc::RLIM_INFINITY {
            assert_eq!(lim.rlim_cur, lim.rlim_max);
        }
        // Idempotent.
        assert_eq!(raise_nofile_limit().unwrap(), got);
    }

    /// A chunked body (no Content-Length) is refused once it passes the limit.
    #[tokio::test]
    async fn upload_limit_counts_streamed_bytes() {
        let headers = axum::http::HeaderMap::new();
        let pieces: Vec<Result<Bytes, std::io::Error>> = vec![Ok(pattern(6)), Ok(pattern(5))];
        let resp = upload_limited(&headers, Body::from_stream(futures_util::stream::iter(pieces)), 10).await;
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let resp = upload_limited(&headers, Body::from(pattern(10)), 10).await;
        assert_eq!(resp.status(), StatusCode::OK);
    }

    #[test]
    fn pattern_matches_definition() {
        for n in [0, 1, 25, 26, 27, SMALL_PATTERN_LEN, SMALL_PATTERN_LEN + 1] {
            let p = pattern(n);
            assert_eq!(p.len(), n);
            assert!(p.iter().enumerate().all(|(i, b)| *b == pattern_byte(i)));
        }
    }
}
