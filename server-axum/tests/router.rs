//! Router-level tests: every endpoint through `tower::ServiceExt::oneshot`, no sockets.

use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, Method, Request, StatusCode};
use axum::response::Response;
use clientbench_server::{app, pattern_byte, HELLO, MAX_BYTES, MAX_ECHO_BYTES};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// Upper bound for any single request in these tests.
const TIMEOUT: Duration = Duration::from_secs(30);

async fn send(method: Method, uri: &str, body: Body) -> Response {
    let req = Request::builder().method(method).uri(uri).body(body).unwrap();
    tokio::time::timeout(TIMEOUT, app().oneshot(req)).await.expect("request timed out").unwrap()
}

async fn get(uri: &str) -> Response {
    send(Method::GET, uri, Body::empty()).await
}

async fn body_of(resp: Response) -> Bytes {
    tokio::time::timeout(TIMEOUT, resp.into_body().collect()).await.expect("body timed out").unwrap().to_bytes()
}

fn header_str(resp: &Response, name: header::HeaderName) -> Option<&str> {
    resp.headers().get(name).map(|v| v.to_str().unwrap())
}

fn content_length(resp: &Response) -> Option<u64> {
    header_str(resp, header::CONTENT_LENGTH).map(|v| v.parse().unwrap())
}

async fn assert_status(uri: &str, expected: StatusCode) -> Bytes {
    let resp = get(uri).await;
    assert_eq!(resp.status(), expected, "GET {uri}");
    body_of(resp).await
}

#[tokio::test]
async fn root_hello_world() {
    let resp = get("/").await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(header_str(&resp, header::CONTENT_TYPE), Some("text/plain; charset=utf-8"));
    assert_eq!(content_length(&resp), Some(13));
    let body = body_of(resp).await;
    assert_eq!(&body[..], b"Hello, World!");
    assert_eq!(body.len(), 13);
}

async fn check_bytes(n: usize) {
    let resp = get(&format!("/bytes/{n}")).await;
    assert_eq!(resp.status(), StatusCode::OK, "/bytes/{n}");
    assert_eq!(header_str(&resp, header::CONTENT_TYPE), Some("application/octet-stream"));
    assert_eq!(content_length(&resp), Some(n as u64), "/bytes/{n} content-length");
    let body = body_of(resp).await;
    assert_eq!(body.len(), n);
    if let Some(i) = body.iter().enumerate().position(|(i, b)| *b != pattern_byte(i)) {
        panic!("/bytes/{n}: pattern mismatch at byte {i}");
    }
}

#[tokio::test]
async fn bytes_small_and_medium() {
    check_bytes(0).await;
    check_bytes(1).await;
    check_bytes(100_000).await;
}

#[tokio::test]
async fn bytes_first_bytes_are_alphabet() {
    let body = assert_status("/bytes/28", StatusCode::OK).await;
    assert_eq!(&body[..], b"abcdefghijklmnopqrstuvwxyzab");
}

#[tokio::test]
async fn bytes_max_is_ok() {
    assert_eq!(MAX_BYTES, 67_108_864);
    check_bytes(67_108_864).await;
}

#[tokio::test]
async fn bytes_rejects_out_of_range_and_garbage() {
    for uri in ["/bytes/67108865", "/bytes/abc", "/bytes/-1", "/bytes/1.5", "/bytes/99999999999999999999999999"] {
        let body = assert_status(uri, StatusCode::BAD_REQUEST).await;
        assert!(!body.is_empty(), "{uri}: 400 should carry a reason");
    }
}

#[tokio::test]
async fn delay_sleeps() {
    let start = Instant::now();
    let body = assert_status("/delay/10", StatusCode::OK).await;
    assert!(start.elapsed() >= Duration::from_millis(10), "{:?}", start.elapsed());
    assert_eq!(&body[..], HELLO.as_bytes());
    assert_status("/delay/0", StatusCode::OK).await;
}

#[tokio::test]
async fn delay_rejects_out_of_range_and_garbage() {
    assert_status("/delay/10001", StatusCode::BAD_REQUEST).await;
    assert_status("/delay/abc", StatusCode::BAD_REQUEST).await;
    assert_status("/delay/-5", StatusCode::BAD_REQUEST).await;
}

#[tokio::test]
async fn status_codes() {
    let body = assert_status("/status/500", StatusCode::INTERNAL_SERVER_ERROR).await;
    assert_eq!(&body[..], b"status 500");
    let body = assert_status("/status/404", StatusCode::NOT_FOUND).await;
    assert_eq!(&body[..], b"status 404");
    assert_status("/status/200", StatusCode::OK).await;
    assert_status("/status/599", StatusCode::from_u16(599).unwrap()).await;
    assert_status("/status/299", StatusCode::from_u16(299).unwrap()).await;
    for code in [204u16, 205, 304] {
        let resp = get(&format!("/status/{code}")).await;
        assert_eq!(resp.status().as_u16(), code);
        assert!(!matches!(content_length(&resp), Some(n) if n > 0), "{code} must not advertise content");
        assert!(body_of(resp).await.is_empty(), "{code} must have no body");
    }
}

#[tokio::test]
async fn status_rejects_out_of_range_and_garbage() {
    for uri in ["/status/99", "/status/100", "/status/199", "/status/600", "/status/x", "/status/70000"] {
        assert_status(uri, StatusCode::BAD_REQUEST).await;
    }
}

/// POST and PUT alike (a targets file's upload may be either); other methods are 405.
#[tokio::test]
async fn echo_round_trip() {
    let payload: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    for method in [Method::POST, Method::PUT] {
        let resp = send(method.clone(), "/echo", Body::from(payload.clone())).await;
        assert_eq!(resp.status(), StatusCode::OK, "{method}");
        assert_eq!(header_str(&resp, header::CONTENT_TYPE), Some("application/octet-stream"));
        assert_eq!(content_length(&resp), Some(payload.len() as u64));
        assert_eq!(&body_of(resp).await[..], &payload[..]);

        let resp = send(method.clone(), "/echo", Body::empty()).await;
        assert_eq!(resp.status(), StatusCode::OK, "{method}");
        assert!(body_of(resp).await.is_empty());
    }
    assert_eq!(send(Method::DELETE, "/echo", Body::from("x")).await.status(), StatusCode::METHOD_NOT_ALLOWED);
    let resp = send(Method::PUT, "/echo", Body::from(vec![b'x'; MAX_ECHO_BYTES + 1])).await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn echo_limit() {
    let resp = send(Method::POST, "/echo", Body::from(vec![b'x'; MAX_ECHO_BYTES])).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(body_of(resp).await.len(), MAX_ECHO_BYTES);

    let resp = send(Method::POST, "/echo", Body::from(vec![b'x'; MAX_ECHO_BYTES + 1])).await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn health() {
    let body = assert_status("/health", StatusCode::OK).await;
    assert_eq!(&body[..], b"ok");
}

#[tokio::test]
async fn close_sets_connection_close() {
    let resp = get("/close").await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(header_str(&resp, header::CONNECTION), Some("close"));
    assert_eq!(&body_of(resp).await[..], HELLO.as_bytes());
}

#[tokio::test]
async fn unknown_path_is_404() {
    assert_status("/nope", StatusCode::NOT_FOUND).await;
    assert_status("/bytes", StatusCode::NOT_FOUND).await;
    assert_status("/bytes/1/2", StatusCode::NOT_FOUND).await;
}

#[tokio::test]
async fn wrong_method_is_405() {
    let resp = send(Method::POST, "/", Body::empty()).await;
    assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
    let resp = get("/echo").await;
    assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
    let resp = send(Method::DELETE, "/bytes/10", Body::empty()).await;
    assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn stats_is_json_counters() {
    let resp = get("/stats").await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(header_str(&resp, header::CONTENT_TYPE), Some("application/json"));
    let body = body_of(resp).await;
    // the router alone counts nothing: the listener counts connections, counted_app the requests
    let zeros = br#"{"connections":0,"tls_handshakes":0,"tls_resumed":0,"http1_connections":0,"h2_connections":0,"requests":0,"h2_requests":0,"quic_connections":0,"quic_handshakes":0,"h3_requests":0,"udp_recv_buffer":null,"udp_send_buffer":null,"origins":0,"origin_requests":{}}"#;
    assert_eq!(&body[..], zeros);
}
