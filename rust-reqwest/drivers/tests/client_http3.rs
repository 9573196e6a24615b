//! reqwest-bench with HTTP/3 against the benchmark server's HTTP/3 (common/h3.rs: HTTPS and QUIC on
//! one port of 127.0.0.1, in this process): every request over QUIC, in both clients, with the version told;
//! what such a client refuses (`http://`, HTTP/2 too, a redirect to `http://`); QUIC's failures in the
//! library's classes (a timeout, nothing on the UDP port, an untrusted certificate); a request after the
//! server's GOAWAY. Every request is bounded in time. Here rather than in reqwest-bench's tests: a
//! dev-dependency of reqwest-bench on the server would put the server's crate in the binding's sdist.

use crate::h3server;

use std::time::{Duration, Instant};

use bytes::Bytes;
use h3server::{closed_udp_port, h3_server, H3Server};
use reqwest_bench::api::{Body, Request};
use reqwest_bench::reqwest::{header::HeaderMap, Method, Url};
use reqwest_bench::{BlockingClient, Client, ClientError, ClientOptions, Http2, TlsConfig};

const T: Duration = Duration::from_secs(10);

fn options(server: &H3Server, timeout: Duration) -> ClientOptions {
    ClientOptions {
        tls: TlsConfig::ca_file(&server.ca_file).unwrap(),
        tls_info: true,
        http3: true,
        ..ClientOptions::new(timeout)
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn get(server: &H3Server, path: &str) -> Request {
    let url = Url::parse(&format!("{}{path}", server.url)).unwrap();
    Request {
        method: Method::GET,
        url,
        headers: HeaderMap::new(),
        body: Body::Empty,
        timeout: None,
        follow_redirects: true,
        max_redirects: 5,
    }
}

/// GET, POST and PUT over HTTP/3 from the async and the blocking client: one QUIC connection each, no TCP
/// connection, the version and TLS 1.3 told; the user-facing request too (redirects followed over QUIC).
#[test]
fn requests_go_over_quic_in_both_clients() {
    let server = h3_server();
    let url = |path: &str| format!("{}{path}", server.url);
    let blocking = BlockingClient::with_options(&options(&server, T)).unwrap();
    assert_eq!(blocking.client().http_version(), None);
    assert_eq!(blocking.get(&url("/"), || false).unwrap(), (200, 13));
    let echoed = blocking.fetch("POST", &url("/echo"), &[], Some(Bytes::from_static(b"over QUIC")), || false).unwrap();
    assert_eq!((echoed.status, &echoed.body[..]), (200, &b"over QUIC"[..]));
    let (status, n, line) =
        blocking.send_body(Method::PUT, &url("/upload"), Bytes::from_static(b"abc"), 100, || false).unwrap();
    assert_eq!((status, n), (200, line.len() as u64));
    assert!(line.starts_with(b"3 ba7816bf"), "{line:?}");
    assert_eq!((blocking.client().http_version(), blocking.client().tls_version()), (Some("HTTP/3"), Some("TLSv1.3")));

    let rt = runtime();
    let client = rt.block_on(async { Client::with_options(&options(&server, T)) }).unwrap();
    rt.block_on(async {
        assert_eq!(client.get(&url("/bytes/300000")).await.unwrap(), (200, 300_000));
        let resp = client.open(get(&server, "/redirect/2")).await.unwrap();
        assert_eq!((resp.status().as_u16(), resp.version()), (200, reqwest_bench::reqwest::Version::HTTP_3));
        let head = reqwest_bench::api::Head::of(&resp);
        assert_eq!((head.url, head.http_version), (format!("{}/", server.url), "HTTP/3"));
    });
    assert_eq!(client.http_version(), Some("HTTP/3"));
    let s = server.stats.snapshot();
    assert_eq!((s.quic_connections, s.quic_handshakes, s.connections), (2, 2, 0), "{s:?}");
    assert_eq!(s.h3_requests, 3 + 1 + 3, "{s:?}");
}

/// What a client with HTTP/3 cannot do, said before any I/O (or, for a redirect, before following it).
#[test]
fn http_urls_and_http2_are_refused() {
    let server = h3_server();
    let both = ClientOptions { http2: Http2::Alpn, ..options(&server, T) };
    assert!(matches!(BlockingClient::with_options(&both), Err(ClientError::Usage(m)) if m.contains("HTTP/3")));
    let c = BlockingClient::with_options(&options(&server, T)).unwrap();
    let plain = server.url.replace("https://", "http://") + "/";
    match c.get(&plain, || false) {
        Err(ClientError::InvalidUrl(m)) => assert!(m.contains("https:// URLs only"), "{m}"),
        other => panic!("{other:?}"),
    }
    let to_http = format!("/redirect-to?url={plain}&status=302");
    match c.run(c.client().open(get(&server, &to_http)), || false) {
        Err(ClientError::Protocol(m)) => assert!(m.contains("cannot be followed over HTTP/3"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(server.stats.snapshot().h3_requests, 1, "only the redirect was sent");
}

/// A response slower than the timeout is a timeout, over QUIC as over TCP, in both clients.
#[test]
fn a_slow_response_is_a_timeout() {
    let server = h3_server();
    let c = BlockingClient::with_options(&options(&server, Duration::from_millis(400))).unwrap();
    assert_eq!(c.get(&format!("{}/", server.url), || false).unwrap().0, 200);
    let started = Instant::now();
    let err = c.get(&format!("{}/delay/3000", server.url), || false).unwrap_err();
    assert!(matches!(err, ClientError::Timeout(_)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    let rt = runtime();
    let err = rt.block_on(async {
        let c = Client::with_options(&options(&server, Duration::from_millis(400))).unwrap();
        c.get(&format!("{}/delay/3000", server.url)).await.unwrap_err()
    });
    assert!(matches!(err, ClientError::Timeout(_)), "{err:?}");
}

/// Nothing on the UDP port: no QUIC handshake ever answers, and an unconnected UDP socket hears no ICMP
/// "port unreachable", so the request is a timeout (reqwest's total timeout, or quinn's idle timeout that
/// ends the handshake: both are `TimeoutError`), never a success or another class.
#[test]
fn nothing_on_the_udp_port_is_a_timeout() {
    let server = h3_server();
    let url = format!("https://127.0.0.1:{}/", closed_udp_port());
    let c = BlockingClient::with_options(&options(&server, Duration::from_millis(500))).unwrap();
    let started = Instant::now();
    let err = c.get(&url, || false).unwrap_err();
    assert!(matches!(err, ClientError::Timeout(_)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
}

/// The server's certificate checked over QUIC as over TCP: by the system's roots (which do not hold the
/// test CA) it is a TLS error; with no verification it is accepted.
#[test]
fn an_untrusted_certificate_is_a_tls_error() {
    let server = h3_server();
    let url = format!("{}/", server.url);
    let system = ClientOptions { tls: TlsConfig::system(), ..options(&server, T) };
    match BlockingClient::with_options(&system).unwrap().get(&url, || false) {
        Err(ClientError::Tls(m)) => assert!(m.contains("certificate") || m.contains("UnknownIssuer"), "{m}"),
        other => panic!("{other:?}"),
    }
    let insecure = ClientOptions { tls: TlsConfig::insecure(), ..options(&server, T) };
    assert_eq!(BlockingClient::with_options(&insecure).unwrap().get(&url, || false).unwrap(), (200, 13));
}

/// `/close` ends its QUIC connection with a GOAWAY, then the server closes it (H3_NO_ERROR); reqwest's pool
/// keeps handing that connection out until its driver task sees the close, and the request sent on it is
/// refused by h3 (after the GOAWAY) or left unanswered by the close: the library sends such a request again
/// (the server did not process it) until a new connection takes it, whatever its method, so every request
/// after `/close` succeeds, whichever of the two it met (the order of the packets and tasks decides).
#[test]
fn requests_after_a_goaway_succeed() {
    let server = h3_server();
    let c = BlockingClient::with_options(&options(&server, T)).unwrap();
    let url = |path: &str| format!("{}{path}", server.url);
    for _ in 0..2 {
        assert_eq!(c.get(&url("/close"), || false).unwrap().0, 200);
        let started = Instant::now();
        let posted = c.fetch("POST", &url("/echo"), &[], Some(Bytes::from_static(b"x")), || false).unwrap();
        assert_eq!((posted.status, &posted.body[..]), (200, &b"x"[..]));
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert_eq!(c.get(&url("/"), || false).unwrap().0, 200);
    }
    let s = server.stats.snapshot();
    assert_eq!((s.quic_connections, s.h3_requests), (3, 6), "{s:?}");
}
