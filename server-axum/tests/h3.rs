//! HTTP/3 beside HTTPS (`--tls`): every endpoint over h3 answers as over HTTP/2 (status, headers, body) and
//! HTTP/1.1 (status, body), with no connection-specific field; a streamed multi-MiB upload's digest; `/close`
//! as a GOAWAY (seen by hyperium's h3 client, and survived by reqwest's); `Content-Length` checked against
//! the body; `/stats`' QUIC counts; many streams and connections at once; SIGTERM with a request in flight.
//! Clients: reqwest with `http3` (and HTTP/1.1 and 2 for the comparison), and h3 + quinn directly where a test
//! needs the frames. The real binary on an ephemeral port; every wait is bounded.

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{self, HeaderMap};
use bytes::{Buf, Bytes};
use clientbench_server::{pattern, upload_line, StatsSnapshot, HELLO};
use common::clients::{client, client_trusting, url, Client, Http};
use common::{spawn_server, Server, TIMEOUT};
use reqwest::{Method, Version};
use sha2::{Digest, Sha256};

/// The fields HTTP/3 forbids in a message (RFC 9114 §4.2).
const CONNECTION_SPECIFIC: [&str; 6] =
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te"];

struct Answer {
    status: u16,
    version: Version,
    headers: HeaderMap,
    body: Bytes,
}

async fn send(client: &Client, method: Method, url: &str, body: Option<&'static [u8]>) -> Answer {
    let mut request = client.request(method.clone(), url).header("x-test", "1");
    if let Some(body) = body {
        request = request.body(body);
    }
    let resp = request.send().await.unwrap_or_else(|e| panic!("{method} {url}: {e:?}"));
    let (status, version, headers) = (resp.status().as_u16(), resp.version(), resp.headers().clone());
    Answer { status, version, headers, body: resp.bytes().await.unwrap() }
}

async fn stats(client: &Client, server: &Server) -> StatsSnapshot {
    snapshot(client.get(url(server, "/stats")).send().await.expect("/stats")).await
}

async fn snapshot(resp: reqwest::Response) -> StatsSnapshot {
    serde_json::from_slice(&resp.bytes().await.unwrap()).expect("/stats is JSON")
}

/// The header fields as sorted (name, value) pairs, without `Date` (it changes with the second).
fn fields(headers: &HeaderMap) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = headers
        .iter()
        .filter(|(name, _)| *name != "date")
        .map(|(name, value)| (name.to_string(), value.as_bytes().to_vec()))
        .collect();
    v.sort();
    v
}

/// Every endpoint, over HTTP/3: the status, the header fields and the body of HTTP/2 (hyper's framing; but
/// for a 204 or 304 no `Content-Length`, as over HTTP/1.1), the status and body of HTTP/1.1; a `Date` like
/// theirs and no connection-specific field; no `Alt-Svc` over any of them. Requests whose
/// answers echo the request (`/headers`, `/anything`) are checked for what the request said instead.
#[tokio::test]
async fn every_endpoint_answers_as_over_http1_and_http2() {
    let server = spawn_server(&["--tls"], None);
    let (h1, h2, h3) = (client(&server, Http::One), client(&server, Http::Two), client(&server, Http::Three));
    let get = Method::GET;
    let cases: Vec<(Method, &str, Option<&'static [u8]>)> = vec![
        (get.clone(), "/", None),
        (Method::HEAD, "/", None),
        (get.clone(), "/bytes/0", None),
        (get.clone(), "/bytes/300000", None),
        (Method::HEAD, "/bytes/300000", None),
        (get.clone(), "/bytes/67108865", None),
        (get.clone(), "/delay/20", None),
        (get.clone(), "/delay/x", None),
        (get.clone(), "/status/201", None),
        (get.clone(), "/status/204", None),
        (get.clone(), "/status/304", None),
        (get.clone(), "/status/599", None),
        (get.clone(), "/status/600", None),
        (Method::POST, "/echo", Some(b"echo me")),
        (Method::POST, "/echo", Some(b"")),
        (Method::PUT, "/echo", Some(b"echo me")),
        (Method::POST, "/upload", Some(b"abc")),
        (Method::PUT, "/upload", Some(b"abc")),
        (get.clone(), "/upload", None),
        (get.clone(), "/stall?every=1&ms=1", None),
        (get.clone(), "/stall?every=0", None),
        (get.clone(), "/health", None),
        (get.clone(), "/close", None),
        (get.clone(), "/nowhere", None),
        (Method::POST, "/", Some(b"x")),
        (get.clone(), "/redirect/3", None),
        (get.clone(), "/redirect-to?url=/health&status=307", None),
        (get.clone(), "/gzip", None),
        (get.clone(), "/deflate", None),
        (get.clone(), "/brotli", None),
        (get.clone(), "/zstd", None),
        (get.clone(), "/cookies/set?a=1&b=two", None),
        (get.clone(), "/stream/5", None),
        (get.clone(), "/drip?bytes=20&duration_ms=40", None),
        (get.clone(), "/charset/latin-1", None),
        (get.clone(), "/charset/klingon", None),
    ];
    for (method, path, body) in cases {
        let u = url(&server, path);
        // after /close's GOAWAY, reqwest refuses requests on that connection until it closes: a client of its own
        let h3 = if path == "/close" { client(&server, Http::Three) } else { h3.clone() };
        let a3 = send(&h3, method.clone(), &u, body).await;
        let a2 = send(&h2, method.clone(), &u, body).await;
        let a1 = send(&h1, method.clone(), &u, body).await;
        let what = format!("{method} {path}");
        assert_eq!((a3.version, a2.version, a1.version), (Version::HTTP_3, Version::HTTP_2, Version::HTTP_11));
        assert_eq!((a3.status, &a3.body), (a2.status, &a2.body), "{what}: h3 and h2");
        assert_eq!((a3.status, &a3.body), (a1.status, &a1.body), "{what}: h3 and h1");
        let mut expected = fields(&a2.headers);
        if matches!(a3.status, 204 | 304) {
            // no Content-Length, as HTTP/1.1 has it (RFC 9110 §8.6); hyper's HTTP/2 passes on axum's `0`
            assert!(!a1.headers.contains_key("content-length"), "{what}: {:?}", a1.headers);
            expected.retain(|(name, _)| name != "content-length");
        }
        assert_eq!(fields(&a3.headers), expected, "{what}: h3 and h2 header fields");
        assert!(a3.headers.contains_key("date"), "{what}");
        // no protocol switch offered to a client measuring HTTP/1.1 or 2
        for a in [&a1, &a2, &a3] {
            assert!(!a.headers.contains_key("alt-svc"), "{what}: {:?}", a.headers);
        }
        for name in CONNECTION_SPECIFIC {
            assert!(!a3.headers.contains_key(name), "{what}: {name} over HTTP/3: {:?}", a3.headers);
        }
    }
    // the echoes: what this request said, over HTTP/3
    let a = send(&h3, Method::GET, &url(&server, "/headers"), None).await;
    let echoed: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(echoed["x-test"], serde_json::json!(["1"]), "{echoed}");
    let a = send(&h3, Method::PATCH, &url(&server, "/anything/a%20b?q=1"), Some(b"\xff\x00")).await;
    let echoed: serde_json::Value = serde_json::from_slice(&a.body).unwrap();
    assert_eq!(echoed["method"], "PATCH");
    assert_eq!((echoed["path"].as_str(), echoed["query"].as_str()), (Some("/anything/a%20b"), Some("q=1")));
    assert_eq!((echoed["body"].as_str(), echoed["body_encoding"].as_str()), (Some("/wA="), Some("base64")));
    assert_eq!(echoed["headers"]["x-test"], serde_json::json!(["1"]));
}

/// `/upload` hashes a request body as it streams in: 8 MiB sent in 64 KiB pieces without a Content-Length
/// (so no size is known ahead), and 3 MiB with one; each answered with its length and SHA-256.
#[tokio::test]
async fn upload_digests_a_streamed_multi_mib_body() {
    let server = spawn_server(&["--tls"], None);
    let h3 = client(&server, Http::Three);
    let piece = pattern(64 * 1024);
    let pieces = 128;
    let mut whole = Sha256::new();
    (0..pieces).for_each(|_| whole.update(&piece));
    let expected = upload_line(piece.len() as u64 * pieces, &whole.finalize());
    let stream = futures_util::stream::iter((0..pieces).map(move |_| Ok::<_, std::io::Error>(piece.clone())));
    let resp = h3.post(url(&server, "/upload")).body(reqwest::Body::wrap_stream(stream)).send().await.unwrap();
    assert_eq!((resp.status().as_u16(), resp.version()), (200, Version::HTTP_3));
    assert_eq!(resp.text().await.unwrap(), expected);

    let body = pattern(3 * 1024 * 1024);
    let expected = upload_line(body.len() as u64, &Sha256::digest(&body));
    let resp = h3.put(url(&server, "/upload")).body(body).send().await.unwrap();
    assert_eq!(resp.text().await.unwrap(), expected);
    let s = stats(&h3, &server).await;
    assert_eq!((s.quic_connections, s.h3_requests, s.connections), (1, 3, 0), "{s:?}");
}

/// A QUIC connection and an h3 client of hyperium's h3 (the client reqwest uses, here without its pool), its
/// connection driver running until the connection closes, which it returns (the error it closed with).
struct RawH3 {
    conn: quinn::Connection,
    send: h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>,
    closed: tokio::task::JoinHandle<h3::error::ConnectionError>,
    _endpoint: quinn::Endpoint,
}

async fn raw_h3(server: &Server) -> RawH3 {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let ca_file = server.ca_file.clone().flatten().expect("the generated CA");
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca_file).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap();
    let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(quic)));
    let addr: SocketAddr = server.http3.expect("HTTP/3 on").addr;
    let conn = endpoint.connect(addr, "localhost").unwrap().await.expect("QUIC handshake");
    // no grease: the server stops a grease stream (an unknown stream type), which would blur the count of
    // STOP_SENDING frames that `unread_request_bodies_are_drained_or_stopped` checks
    let h3_conn = h3_quinn::Connection::new(conn.clone());
    let (mut driver, send) = h3::client::builder().send_grease(false).build(h3_conn).await.unwrap();
    let closed = tokio::spawn(async move { std::future::poll_fn(|cx| driver.poll_close(cx)).await });
    RawH3 { conn, send, closed, _endpoint: endpoint }
}

/// One request on `h3`: the head (with `content-length` if given), the body, the response and its body.
async fn raw_request(
    h3: &mut RawH3,
    method: &str,
    path: &str,
    content_length: Option<&str>,
    body: &'static [u8],
) -> (http::Response<()>, Vec<u8>) {
    let mut request = http::Request::builder().method(method).uri(format!("https://localhost{path}"));
    if let Some(length) = content_length {
        request = request.header("content-length", length);
    }
    let mut stream = h3.send.send_request(request.body(()).unwrap()).await.expect("request sent");
    if !body.is_empty() {
        stream.send_data(Bytes::from_static(body)).await.expect("body sent");
    }
    stream.finish().await.expect("request finished");
    let response = tokio::time::timeout(TIMEOUT, stream.recv_response()).await.unwrap().expect("a response");
    let mut received = Vec::new();
    while let Some(mut chunk) = stream.recv_data().await.expect("the response body") {
        received.extend_from_slice(&chunk.copy_to_bytes(chunk.remaining()));
    }
    (response, received)
}

/// `/close` over HTTP/3: the response whole, no `Connection` field, then a GOAWAY (a new request on the
/// connection is refused by the client itself: it knows the server said goodbye), then the server closes the
/// connection with H3_NO_ERROR. Requests on the connection before it were answered as usual.
#[tokio::test]
async fn close_is_a_goaway_after_the_response() {
    let server = spawn_server(&["--tls"], None);
    let mut h3 = raw_h3(&server).await;
    let (response, body) = raw_request(&mut h3, "GET", "/", None, b"").await;
    assert_eq!((response.status().as_u16(), &body[..]), (200, HELLO.as_bytes()));
    let (response, body) = raw_request(&mut h3, "GET", "/close", None, b"").await;
    assert_eq!((response.status().as_u16(), &body[..]), (200, HELLO.as_bytes()));
    assert_eq!(response.headers().get("content-length").unwrap(), "13");
    for name in CONNECTION_SPECIFIC {
        assert!(!response.headers().contains_key(name), "{name}: {:?}", response.headers());
    }
    let closed = tokio::time::timeout(TIMEOUT, &mut h3.closed).await.expect("the server closes").unwrap();
    assert!(closed.is_h3_no_error(), "closed gracefully: {closed}");
    let refused = h3.send.send_request(http::Request::get("https://localhost/").body(()).unwrap()).await;
    assert!(
        matches!(refused, Err(h3::error::StreamError::RemoteClosing { .. })),
        "the GOAWAY was received: {:?}",
        refused.map(|_| ())
    );
}

/// reqwest after `/close`: its pool keeps a connection that has received a GOAWAY until the connection is
/// closed (reqwest 0.13 does not retire it on the GOAWAY), so a request sent in between fails as one on a
/// closing connection; once the server has closed it, reqwest opens a new connection and is served.
#[tokio::test]
async fn reqwest_carries_on_after_close() {
    let server = spawn_server(&["--tls"], None);
    let h3 = client(&server, Http::Three);
    let a = send(&h3, Method::GET, &url(&server, "/close"), None).await;
    assert_eq!((a.status, &a.body[..]), (200, HELLO.as_bytes()));
    let answer = served_after_close(&h3, &url(&server, "/")).await;
    assert_eq!(answer.text().await.unwrap(), HELLO);
    // `/` may still have gone out on the closing connection (sent before its GOAWAY came): then `/stats` is
    // the request that meets the close, and is served on the new connection
    let s = snapshot(served_after_close(&h3, &url(&server, "/stats")).await).await;
    assert_eq!((s.quic_connections, s.quic_handshakes), (2, 2), "{s:?}");
}

/// GET `url` until it is served, each failure one of a request on the closing connection (bounded).
async fn served_after_close(client: &Client, url: &str) -> reqwest::Response {
    let mut refused = 0;
    loop {
        match client.get(url).send().await {
            Ok(resp) => return resp,
            Err(e) => {
                let text = format!("{e:?}");
                // the GOAWAY seen; or the request sent before it came; or the server closing the connection
                let closing = ["RemoteClosing", "H3_REQUEST_REJECTED", "ApplicationClose(H3_NO_ERROR)"];
                assert!(closing.iter().any(|c| text.contains(c)), "{url}: {text}");
                refused += 1;
                assert!(refused < 500, "{url}: still refused after {refused} tries");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// A request whose body does not add up to its `Content-Length` is malformed (RFC 9114 §4.1.2): `/upload`
/// answers 400 to one shorter or longer than declared, and to a `Content-Length` that is not a number; the
/// connection serves the next request.
#[tokio::test]
async fn content_length_must_match_the_body() {
    let server = spawn_server(&["--tls"], None);
    let mut h3 = raw_h3(&server).await;
    for (declared, body) in [("10", &b"short"[..]), ("2", b"longer"), ("x", b"abc"), ("3, 4", b"abc")] {
        let (response, text) = raw_request(&mut h3, "POST", "/upload", Some(declared), body).await;
        assert_eq!(response.status().as_u16(), 400, "{declared}: {}", String::from_utf8_lossy(&text));
    }
    let (response, text) = raw_request(&mut h3, "POST", "/upload", Some("3"), b"abc").await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(text, upload_line(3, &Sha256::digest(b"abc")).as_bytes());
}

/// A request body the handler does not read: its end, sent after the response, is read without a word (no
/// STOP_SENDING: a GET's end often follows its head, and stopping it would add frames to every exchange); a
/// long one is stopped with H3_NO_ERROR once past a limit, the response (405) being complete without it.
#[tokio::test]
async fn unread_request_bodies_are_drained_or_stopped() {
    let server = spawn_server(&["--tls"], None);
    let mut h3 = raw_h3(&server).await;
    for _ in 0..3 {
        let mut stream =
            h3.send.send_request(http::Request::get("https://localhost/").body(()).unwrap()).await.unwrap();
        let response = tokio::time::timeout(TIMEOUT, stream.recv_response()).await.unwrap().unwrap();
        assert_eq!(response.status().as_u16(), 200);
        while stream.recv_data().await.unwrap().is_some() {}
        stream.finish().await.expect("the request's end, after its answer");
    }
    let (response, _) = raw_request(&mut h3, "GET", "/health", None, b"").await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(h3.conn.stats().frame_rx.stop_sending, 0);

    let mut stream = h3.send.send_request(http::Request::post("https://localhost/").body(()).unwrap()).await.unwrap();
    let piece = pattern(16 * 1024);
    let mut sent = 0;
    let stopped = loop {
        match stream.send_data(piece.clone()).await {
            Ok(()) => sent += piece.len(),
            Err(e) => break e,
        }
        assert!(sent < 256 << 20, "never stopped");
    };
    assert!(
        matches!(&stopped, h3::error::StreamError::RemoteTerminate { code, .. } if *code == h3::error::Code::H3_NO_ERROR),
        "{stopped:?}; server: {}",
        server.stderr()
    );
    assert!(sent > 64 * 1024, "stopped after {sent} bytes only");
    let response = tokio::time::timeout(TIMEOUT, stream.recv_response()).await.unwrap().unwrap();
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(h3.conn.stats().frame_rx.stop_sending, 1);
}

/// `/stats` over any protocol: QUIC connections and handshakes, h3 requests, next to the TCP counts; a QUIC
/// client that does not trust the CA is a connection without a handshake; the buffer sizes are the
/// listening line's.
#[tokio::test]
async fn stats_count_quic_connections_handshakes_and_h3_requests() {
    let server = spawn_server(&["--tls"], None);
    let h3_line = server.http3.expect("HTTP/3 on");
    let (h3, h2) = (client(&server, Http::Three), client(&server, Http::Two));
    for _ in 0..3 {
        assert_eq!(send(&h3, Method::GET, &url(&server, "/"), None).await.status, 200);
    }
    let err = client_trusting(vec![], Http::Three).get(url(&server, "/")).send().await;
    assert!(err.is_err(), "a client without the CA is refused");
    let s = stats(&h2, &server).await;
    let expected = StatsSnapshot {
        connections: 1,
        tls_handshakes: 1,
        tls_resumed: 0,
        http1_connections: 0,
        h2_connections: 1,
        requests: 4,
        h2_requests: 1,
        quic_connections: 2,
        quic_handshakes: 1,
        h3_requests: 3,
        udp_recv_buffer: Some(h3_line.recv_buffer),
        udp_send_buffer: Some(h3_line.send_buffer),
        // HTTP/3's :authority and HTTP/2's name one origin alike
        origins: 1,
        origin_requests: [(format!("127.0.0.1:{}", server.addr.port()), 4)].into(),
    };
    assert_eq!(s, expected);
    let s = stats(&h3, &server).await;
    assert_eq!((s.quic_connections, s.h3_requests, s.requests), (2, 4, 5), "{s:?}");
}

/// Eight QUIC connections, each carrying 60 requests at once (GETs of two sizes and uploads): all answered
/// in full, each client on one connection.
#[tokio::test]
async fn many_streams_on_many_connections() {
    let server = spawn_server(&["--tls"], None);
    let clients: Vec<_> = (0..8).map(|_| client(&server, Http::Three)).collect();
    let upload_expected = upload_line(10_000, &Sha256::digest(pattern(10_000)));
    let work = clients.iter().flat_map(|c| {
        (0..60).map(|i| {
            let (c, server, upload_expected) = (c.clone(), &server, &upload_expected);
            async move {
                let (request, expected) = match i % 3 {
                    0 => (c.get(url(server, "/")), Bytes::from_static(HELLO.as_bytes())),
                    1 => (c.get(url(server, "/bytes/100000")), pattern(100_000)),
                    _ => (c.post(url(server, "/upload")).body(pattern(10_000)), Bytes::from(upload_expected.clone())),
                };
                let resp = request.send().await.expect("sent");
                assert_eq!((resp.status().as_u16(), resp.version()), (200, Version::HTTP_3));
                assert_eq!(resp.bytes().await.expect("body"), expected);
            }
        })
    });
    futures_util::future::join_all(work).await;
    let s = stats(&clients[0], &server).await;
    assert_eq!((s.quic_connections, s.quic_handshakes, s.h3_requests), (8, 8, 481), "{s:?}");
}

/// SIGTERM while an HTTP/3 request is in flight: the server sends a GOAWAY, answers the request, and exits 0.
#[tokio::test]
async fn sigterm_answers_the_request_in_flight() {
    let mut server = spawn_server(&["--tls"], None);
    let (h3, h2) = (client(&server, Http::Three), client(&server, Http::Two));
    let slow = {
        let (h3, u) = (h3.clone(), url(&server, "/delay/1000"));
        tokio::spawn(async move {
            let resp = h3.get(u).send().await?;
            resp.text().await
        })
    };
    // wait until the server has the request (it counts it before routing it), without guessing a delay
    for tries in 0.. {
        if stats(&h2, &server).await.h3_requests == 1 {
            break;
        }
        assert!(tries < 1000, "the request never reached the server");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pid = server.child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let answer = tokio::time::timeout(TIMEOUT, slow).await.expect("the request ends").unwrap();
    assert_eq!(answer.expect("answered despite the shutdown"), HELLO);
    let (status, stderr) = tokio::task::spawn_blocking(move || {
        let status = common::wait_timeout(&mut server.child, TIMEOUT);
        (status, server.stderr())
    })
    .await
    .unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{stderr}");
}
