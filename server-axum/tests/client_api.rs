//! Router-level tests of the client-API endpoints (src/client_api.rs) through `tower::ServiceExt::oneshot`,
//! no sockets; the last test runs a few of them through the real listener with reqwest.

use std::io::Read;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, Method, Request, StatusCode};
use axum::response::Response;
use clientbench_server::app;
use clientbench_server::client_api::{compressed_json, CHARSET_TEXT};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

/// Upper bound for any single request in these tests.
const TIMEOUT: Duration = Duration::from_secs(30);

async fn send_req(req: Request<Body>) -> Response {
    tokio::time::timeout(TIMEOUT, app().oneshot(req)).await.expect("request timed out").unwrap()
}

async fn send(method: Method, uri: &str, body: Body) -> Response {
    send_req(Request::builder().method(method).uri(uri).body(body).unwrap()).await
}

async fn get(uri: &str) -> Response {
    send(Method::GET, uri, Body::empty()).await
}

async fn body_of(resp: Response) -> Bytes {
    tokio::time::timeout(TIMEOUT, resp.into_body().collect()).await.expect("body timed out").unwrap().to_bytes()
}

async fn json_of(resp: Response) -> Value {
    serde_json::from_slice(&body_of(resp).await).expect("a JSON body")
}

fn header_str(resp: &Response, name: header::HeaderName) -> Option<&str> {
    resp.headers().get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn redirect_chain_is_relative_and_ends_at_root() {
    let resp = get("/redirect/3").await;
    assert_eq!(resp.status(), StatusCode::FOUND);
    assert_eq!(header_str(&resp, header::LOCATION), Some("/redirect/2"));
    let resp = get("/redirect/1").await;
    assert_eq!(resp.status(), StatusCode::FOUND);
    assert_eq!(header_str(&resp, header::LOCATION), Some("/"));
    // any method
    let resp = send(Method::POST, "/redirect/2", Body::from("x")).await;
    assert_eq!(resp.status(), StatusCode::FOUND);
    for bad in ["/redirect/0", "/redirect/101", "/redirect/x", "/redirect/-1"] {
        assert_eq!(get(bad).await.status(), StatusCode::BAD_REQUEST, "{bad}");
    }
}

#[tokio::test]
async fn redirect_to_any_status_and_url() {
    let resp = get("/redirect-to?url=http%3A%2F%2Flocalhost%3A1%2Fx%3Fa%3Db&status=307").await;
    assert_eq!(resp.status(), StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(header_str(&resp, header::LOCATION), Some("http://localhost:1/x?a=b"));
    let resp = send(Method::PUT, "/redirect-to?url=/anything", Body::empty()).await;
    assert_eq!(resp.status(), StatusCode::FOUND, "302 by default");
    assert_eq!(header_str(&resp, header::LOCATION), Some("/anything"));
    let resp = get("/redirect-to?url=/&status=308").await;
    assert_eq!(resp.status(), StatusCode::PERMANENT_REDIRECT);
    for bad in
        ["/redirect-to", "/redirect-to?url=/&status=200", "/redirect-to?url=/&status=400", "/redirect-to?url=%0A"]
    {
        assert_eq!(get(bad).await.status(), StatusCode::BAD_REQUEST, "{bad}");
    }
}

#[tokio::test]
async fn headers_lists_every_value_in_order() {
    let req = Request::builder()
        .uri("/headers")
        .header("X-Multi", "one")
        .header("x-multi", "two")
        .header("X-Single", "é".as_bytes())
        .body(Body::empty())
        .unwrap();
    let resp = send_req(req).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(header_str(&resp, header::CONTENT_TYPE), Some("application/json"));
    let v = json_of(resp).await;
    assert_eq!(v["x-multi"], json!(["one", "two"]));
    assert_eq!(v["x-single"], json!(["é"]));
}

#[tokio::test]
async fn anything_echoes_method_path_query_headers_and_body() {
    let req = Request::builder()
        .method("PATCH")
        .uri("/anything/a%20b?q=%C3%A9&x")
        .header("X-A", "1")
        .body(Body::from("hello"))
        .unwrap();
    let v = json_of(send_req(req).await).await;
    assert_eq!(v["method"], "PATCH");
    assert_eq!(v["path"], "/anything/a%20b");
    assert_eq!(v["query"], "q=%C3%A9&x");
    assert_eq!(v["headers"]["x-a"], json!(["1"]));
    assert_eq!(v["body"], "hello");
    assert_eq!(v["body_encoding"], "utf-8");
    assert_eq!(v["body_len"], 5);

    let v = json_of(send(Method::POST, "/anything", Body::from(vec![0xffu8, 0, 1])).await).await;
    assert_eq!(v["query"], "");
    assert_eq!(v["body"], "/wAB");
    assert_eq!(v["body_encoding"], "base64");
    assert_eq!(v["body_len"], 3);
}

fn decode(coding: &str, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        "gzip" => flate2::read::GzDecoder::new(body).read_to_end(&mut out).unwrap(),
        "deflate" => flate2::read::ZlibDecoder::new(body).read_to_end(&mut out).unwrap(),
        "br" => brotli::Decompressor::new(body, 4096).read_to_end(&mut out).unwrap(),
        "zstd" => zstd::stream::read::Decoder::new(body).unwrap().read_to_end(&mut out).unwrap(),
        other => panic!("{other}"),
    };
    out
}

#[tokio::test]
async fn compressed_bodies_whatever_accept_encoding() {
    for (path, coding) in [("/gzip", "gzip"), ("/deflate", "deflate"), ("/brotli", "br"), ("/zstd", "zstd")] {
        let resp = get(path).await;
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        assert_eq!(header_str(&resp, header::CONTENT_ENCODING), Some(coding), "{path}");
        assert_eq!(header_str(&resp, header::CONTENT_TYPE), Some("application/json"), "{path}");
        let raw = body_of(resp).await;
        let plain = decode(coding, &raw);
        assert!(raw.len() < plain.len(), "{path}: compressed");
        let v: Value = serde_json::from_slice(&plain).unwrap();
        assert_eq!(v, compressed_json(&path[1..]), "{path}");
    }
}

#[tokio::test]
async fn cookies_set_one_field_per_pair() {
    let resp = get("/cookies/set?a=1&b=two&a=3").await;
    assert_eq!(resp.status(), StatusCode::OK);
    let fields: Vec<_> = resp.headers().get_all(header::SET_COOKIE).iter().map(|v| v.to_str().unwrap()).collect();
    assert_eq!(fields, ["a=1; Path=/", "b=two; Path=/", "a=3; Path=/"]);
    assert_eq!(json_of(resp).await, json!([["a", "1"], ["b", "two"], ["a", "3"]]));
    assert_eq!(get("/cookies/set?a=%0A").await.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn stream_is_chunked_json_lines() {
    let resp = get("/stream/5").await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().get(header::CONTENT_LENGTH).is_none(), "no length: chunked on the wire");
    let mut body = resp.into_body();
    let mut frames = Vec::new();
    while let Some(frame) = body.frame().await {
        frames.push(frame.unwrap().into_data().unwrap());
    }
    assert_eq!(frames.len(), 5, "one chunk per line");
    let text: String = frames.iter().map(|b| std::str::from_utf8(b).unwrap()).collect();
    let ids: Vec<u64> =
        text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [0, 1, 2, 3, 4]);
    assert!(body_of(get("/stream/0").await).await.is_empty());
    assert_eq!(get("/stream/1001").await.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn drip_sends_exact_bytes_in_pieces() {
    let resp = get("/drip?bytes=7&duration_ms=70").await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(header_str(&resp, header::CONTENT_LENGTH), Some("7"));
    let mut body = resp.into_body();
    let mut frames = Vec::new();
    while let Some(frame) = body.frame().await {
        frames.push(frame.unwrap().into_data().unwrap());
    }
    assert_eq!(frames.len(), 7);
    assert_eq!(frames.concat(), b"*******");
    // more bytes than pieces: 100 pieces of the whole
    let resp = get("/drip?bytes=1000&duration_ms=0").await;
    assert_eq!(body_of(resp).await.len(), 1000);
    assert!(body_of(get("/drip?bytes=0&duration_ms=10").await).await.is_empty());
    for bad in ["/drip?bytes=1048577", "/drip?duration_ms=10001", "/drip?bytes=x", "/drip?bytes=-1"] {
        assert_eq!(get(bad).await.status(), StatusCode::BAD_REQUEST, "{bad}");
    }
}

#[tokio::test]
async fn charset_encodes_the_text() {
    let resp = get("/charset/utf-8").await;
    assert_eq!(header_str(&resp, header::CONTENT_TYPE), Some("text/plain; charset=utf-8"));
    assert_eq!(&body_of(resp).await[..], CHARSET_TEXT.as_bytes());
    let resp = get("/charset/ISO-8859-1").await;
    assert_eq!(header_str(&resp, header::CONTENT_TYPE), Some("text/plain; charset=ISO-8859-1"));
    let body = body_of(resp).await;
    assert_eq!(body.len(), CHARSET_TEXT.chars().count(), "one byte per character");
    let decoded: String = body.iter().map(|b| *b as char).collect();
    assert_eq!(decoded, CHARSET_TEXT);
    assert_eq!(get("/charset/koi8-r").await.status(), StatusCode::BAD_REQUEST);
}

/// Through the real listener (hyper's HTTP/1.1 framing): the chunked stream, the drip's Content-Length and
/// a redirect chain followed by reqwest.
#[tokio::test]
async fn over_a_socket() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app()).await });
    // reqwest is built with `rustls-no-provider`: it needs a process-wide provider even for http://
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let client = reqwest::Client::builder().timeout(TIMEOUT).no_proxy().build().unwrap();
    let base = format!("http://{addr}");

    let resp = client.get(format!("{base}/stream/3")).send().await.unwrap();
    assert_eq!(resp.headers().get(header::TRANSFER_ENCODING).unwrap(), "chunked");
    assert_eq!(resp.text().await.unwrap(), "{\"id\":0}\n{\"id\":1}\n{\"id\":2}\n");

    let resp = client.get(format!("{base}/drip?bytes=3&duration_ms=30")).send().await.unwrap();
    assert_eq!(resp.headers().get(header::CONTENT_LENGTH).unwrap(), "3");
    assert_eq!(resp.text().await.unwrap(), "***");

    let resp = client.get(format!("{base}/redirect/3")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.url().path(), "/");
    server.abort();
}
