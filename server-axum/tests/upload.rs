//! `/upload` (the length and SHA-256 of the request body) and `/stall` (every Nth request sleeps first),
//! through the router (`tower::ServiceExt::oneshot`, no sockets).

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, Method, Request, StatusCode};
use axum::response::Response;
use axum::Router;
use clientbench_server::{app, pattern, upload_line, HELLO, MAX_UPLOAD_BYTES};
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};
use tower::ServiceExt;

/// Above the longest stall (60 s), which the paused clock skips.
const TIMEOUT: Duration = Duration::from_secs(120);
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

async fn send_to(app: &Router, req: Request<Body>) -> (StatusCode, String) {
    let resp: Response = tokio::time::timeout(TIMEOUT, app.clone().oneshot(req)).await.expect("timed out").unwrap();
    let status = resp.status();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

async fn upload(method: Method, body: Body) -> (StatusCode, String) {
    send_to(&app(), Request::builder().method(method).uri("/upload").body(body).unwrap()).await
}

#[tokio::test]
async fn upload_answers_length_and_sha256() {
    assert_eq!(upload(Method::GET, Body::empty()).await, (StatusCode::OK, format!("0 {EMPTY_SHA256}")));
    assert_eq!(upload(Method::POST, Body::empty()).await, (StatusCode::OK, format!("0 {EMPTY_SHA256}")));
    let abc = "3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    assert_eq!(upload(Method::POST, Body::from("abc")).await, (StatusCode::OK, abc.to_owned()));
    assert_eq!(upload(Method::PUT, Body::from("abc")).await, (StatusCode::OK, abc.to_owned()));
    assert_eq!(upload_line(3, &Sha256::digest(b"abc")), abc);
}

/// A body larger than axum's default 2 MB limit, sent in pieces without a Content-Length (chunked), is
/// hashed whole.
#[tokio::test]
async fn upload_streams_a_large_chunked_body() {
    let n = 5 * 1024 * 1024 + 7;
    let body = pattern(n);
    let pieces: Vec<Result<Bytes, std::io::Error>> =
        body.chunks(64 * 1024 + 3).map(|c| Ok(body.slice_ref(c))).collect();
    let got = upload(Method::PUT, Body::from_stream(futures_util::stream::iter(pieces))).await;
    assert_eq!(got, (StatusCode::OK, upload_line(n as u64, &Sha256::digest(&body))));
}

#[tokio::test]
async fn upload_refuses_a_declared_body_over_the_limit_and_other_methods() {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/upload")
        .header(header::CONTENT_LENGTH, MAX_UPLOAD_BYTES + 1)
        .body(Body::from("abc"))
        .unwrap();
    assert_eq!(send_to(&app(), req).await.0, StatusCode::PAYLOAD_TOO_LARGE);
    for method in [Method::DELETE, Method::PATCH] {
        assert_eq!(upload(method, Body::empty()).await.0, StatusCode::METHOD_NOT_ALLOWED);
    }
}

async fn get(app: &Router, uri: &str) -> (StatusCode, String) {
    send_to(app, Request::builder().uri(uri).body(Body::empty()).unwrap()).await
}

/// Every 3rd request to `/stall` sleeps `ms`; the counter is the server's, whatever the query asks. Real time (a
/// paused clock needs tokio's test-util, which would part the tests' build of tokio from the drivers' and the
/// binding's): a sleep lasts at least `ms`, a request that does not sleep answers at once.
#[tokio::test]
async fn stall_sleeps_every_nth_request() {
    let app = app();
    let mut slept = Vec::new();
    for _ in 0..7 {
        let start = tokio::time::Instant::now();
        assert_eq!(get(&app, "/stall?every=3&ms=300").await, (StatusCode::OK, HELLO.to_owned()));
        slept.push(start.elapsed() >= Duration::from_millis(300));
    }
    assert_eq!(slept, [false, false, true, false, false, true, false]);
    // the longest sleep asked for is taken (not refused): still asleep after 100 ms
    let long = tokio::time::timeout(Duration::from_millis(100), get(&app, "/stall?every=1&ms=60000")).await;
    assert!(long.is_err(), "answered: {long:?}");
    // a new server counts from zero
    let start = tokio::time::Instant::now();
    assert_eq!(get(&self::app(), "/stall?every=2&ms=5000").await.0, StatusCode::OK);
    assert!(start.elapsed() < Duration::from_millis(5000));
}

#[tokio::test]
async fn stall_refuses_bad_parameters() {
    let app = app();
    for uri in [
        "/stall",
        "/stall?every=0&ms=10",
        "/stall?every=1&ms=60001",
        "/stall?every=1",
        "/stall?ms=5",
        "/stall?every=x&ms=5",
        "/stall?every=2&ms=-1",
        "/stall?every=%ZZ&ms=1",
    ] {
        let (status, body) = get(&app, uri).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(body.starts_with("usage: /stall?every=N&ms=M"), "{uri}: {body}");
    }
    assert_eq!(get(&app, "/stall?every=1&ms=0").await, (StatusCode::OK, HELLO.to_owned()));
}
