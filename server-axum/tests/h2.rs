//! HTTP/2 next to HTTP/1.1 on the same port: h2c with prior knowledge over plain TCP, h2 after ALPN over
//! TLS, an HTTP/1.1-only client still served HTTP/1.1, and `/stats`'s counts of connections by protocol
//! and of requests (streams). reqwest is the HTTP/2 client; the real binary on an ephemeral port.

use crate::common;

use std::time::Duration;

use clientbench_server::{StatsSnapshot, HELLO};
use common::{connect, spawn_server, Server, TempDir};
use reqwest::Version;

const TIMEOUT: Duration = Duration::from_secs(10);

fn url(server: &Server, path: &str) -> String {
    let scheme = if server.https { "https" } else { "http" };
    format!("{scheme}://localhost:{}{path}", server.addr.port())
}

/// A reqwest client: `h2c` speaks HTTP/2 with prior knowledge, `http1` only HTTP/1.1, neither offers both
/// over TLS (ALPN h2, http/1.1); `ca` is the PEM to trust.
fn client(h2c: bool, http1: bool, ca: Option<&str>) -> reqwest::Client {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let mut b = reqwest::Client::builder().no_proxy().timeout(TIMEOUT);
    if h2c {
        b = b.http2_prior_knowledge();
    }
    if http1 {
        b = b.http1_only();
    }
    if let Some(pem) = ca {
        b = b.tls_certs_only([reqwest::Certificate::from_pem(&std::fs::read(pem).unwrap()).unwrap()]);
    }
    b.build().unwrap()
}

async fn get(client: &reqwest::Client, url: &str) -> (u16, Version, Vec<u8>) {
    let resp = client.get(url).send().await.unwrap_or_else(|e| panic!("GET {url}: {e:?}"));
    let (status, version) = (resp.status().as_u16(), resp.version());
    (status, version, resp.bytes().await.unwrap().to_vec())
}

/// `/stats` through `client` (it is one more request, on the client's connection).
async fn stats(client: &reqwest::Client, server: &Server) -> StatsSnapshot {
    let (status, _, body) = get(client, &url(server, "/stats")).await;
    assert_eq!(status, 200);
    serde_json::from_slice(&body).expect("/stats is JSON")
}

/// h2c: prior knowledge over plain TCP gets HTTP/2 responses on one connection, the benchmark's endpoints
/// byte for byte (a large body, an upload and its digest, a 404), and /stats counts one HTTP/2 connection
/// and each request.
#[tokio::test]
async fn h2c_with_prior_knowledge() {
    let server = spawn_server(&[], None);
    let h2 = client(true, false, None);
    let (status, version, body) = get(&h2, &url(&server, "/")).await;
    assert_eq!((status, version, &body[..]), (200, Version::HTTP_2, HELLO.as_bytes()));
    let (_, _, body) = get(&h2, &url(&server, "/bytes/300000")).await;
    assert_eq!(body, clientbench_server::pattern(300_000));
    let resp = h2.post(url(&server, "/upload")).body("abc").send().await.unwrap();
    assert_eq!(resp.version(), Version::HTTP_2);
    let line = "3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    assert_eq!(resp.text().await.unwrap(), line);
    assert_eq!(get(&h2, &url(&server, "/nope")).await.0, 404);
    // /close asks an HTTP/1.1 client to go; over HTTP/2 the header is dropped and the connection stays
    assert_eq!(get(&h2, &url(&server, "/close")).await.0, 200);
    let s = stats(&h2, &server).await;
    let expected = StatsSnapshot {
        connections: 1,
        tls_handshakes: 0,
        tls_resumed: 0,
        http1_connections: 0,
        h2_connections: 1,
        requests: 6,
        h2_requests: 6,
        quic_connections: 0,
        quic_handshakes: 0,
        h3_requests: 0,
        udp_recv_buffer: None,
        udp_send_buffer: None,
        // the :authority reqwest sends over HTTP/2
        origins: 1,
        origin_requests: [(format!("localhost:{}", server.addr.port()), 6)].into(),
    };
    assert_eq!(s, expected);
}

/// HTTP/1.1 and h2c clients at the same time on the same port: each is served its protocol, and the
/// counts keep them apart.
#[tokio::test]
async fn http1_and_h2c_side_by_side() {
    let server = spawn_server(&[], None);
    let (h1, h2) = (client(false, true, None), client(true, false, None));
    let (u1, u2) = (url(&server, "/"), url(&server, "/"));
    for _ in 0..3 {
        let (a, b) = tokio::join!(get(&h1, &u1), get(&h2, &u2));
        assert_eq!((a.0, a.1, b.0, b.1), (200, Version::HTTP_11, 200, Version::HTTP_2));
    }
    let s = stats(&h1, &server).await;
    assert_eq!((s.connections, s.http1_connections, s.h2_connections), (2, 1, 1), "{s:?}");
    assert_eq!((s.requests, s.h2_requests), (7, 3), "{s:?}");
}

/// One HTTP/2 connection carries W concurrent streams: 16 requests at once (each waiting 50 ms, so they
/// overlap) open one connection, and the server counts 16 streams on it.
#[tokio::test]
async fn one_connection_carries_concurrent_streams() {
    let server = spawn_server(&[], None);
    let h2 = client(true, false, None);
    let u = url(&server, "/delay/50");
    let results = futures_util::future::join_all((0..16).map(|_| get(&h2, &u))).await;
    assert!(results
        .iter()
        .all(|(status, version, body)| *status == 200 && *version == Version::HTTP_2 && body == HELLO.as_bytes()));
    let s = stats(&h2, &server).await;
    assert_eq!((s.connections, s.h2_connections, s.h2_requests), (1, 1, 17), "{s:?}");
}

/// Over TLS the server offers ALPN h2 and http/1.1: a client offering both gets HTTP/2, one offering only
/// http/1.1 gets HTTP/1.1; h2 with prior knowledge over TLS works too. /stats counts the handshakes and
/// each connection's protocol.
#[tokio::test]
async fn alpn_picks_h2_when_offered() {
    let dir = TempDir::new("h2");
    let server = spawn_server(&["--tls", "--tls-dir", dir.0.to_str().unwrap()], None);
    let ca = dir.path("ca.pem");
    let ca = ca.to_str().unwrap();
    let u = url(&server, "/");
    let (both, h1, h2) = (client(false, false, Some(ca)), client(false, true, Some(ca)), client(true, false, Some(ca)));
    for _ in 0..2 {
        assert_eq!(get(&both, &u).await.1, Version::HTTP_2);
        assert_eq!(get(&h1, &u).await.1, Version::HTTP_11);
        assert_eq!(get(&h2, &u).await.1, Version::HTTP_2);
    }
    let s = stats(&both, &server).await;
    let expected = StatsSnapshot {
        connections: 3,
        tls_handshakes: 3,
        tls_resumed: 0,
        http1_connections: 1,
        h2_connections: 2,
        requests: 7,
        h2_requests: 5,
        quic_connections: 0,
        quic_handshakes: 0,
        h3_requests: 0,
        udp_recv_buffer: server.http3.map(|h| h.recv_buffer),
        udp_send_buffer: server.http3.map(|h| h.send_buffer),
        // HTTP/1.1's Host and HTTP/2's :authority name one origin alike
        origins: 1,
        origin_requests: [(format!("localhost:{}", server.addr.port()), 7)].into(),
    };
    assert_eq!(s, expected);
}

/// A connection that stops in the middle of the preface, or sends nothing, harms nobody and counts as
/// neither protocol; one that sends something else than the preface starting with `PRI` is HTTP/1.1 (and
/// gets a 400 or a closed connection, never a crash).
#[tokio::test]
async fn partial_or_false_prefaces() {
    use std::io::{Read, Write};
    let mut server = spawn_server(&[], None);
    let addr = server.addr;
    tokio::task::spawn_blocking(move || {
        drop(connect(addr));
        let mut half = connect(addr);
        half.write_all(b"PRI * HTTP/2.0\r\n").unwrap();
        drop(half);
        let mut odd = connect(addr);
        odd.write_all(b"PRI * HTTP/1.1\r\n\r\n").unwrap();
        let mut answer = Vec::new();
        let _ = odd.read_to_end(&mut answer);
    })
    .await
    .unwrap();
    let h1 = client(false, true, None);
    let s = stats(&h1, &server).await;
    assert_eq!((s.connections, s.http1_connections, s.h2_connections), (4, 2, 0), "{s:?}");
    server.assert_healthy();
    server.assert_no_panic();
}

/// SIGTERM with an HTTP/2 connection open (idle, and with a stream in flight) still exits 0 within the
/// grace period.
#[tokio::test]
async fn sigterm_with_h2_connections_open() {
    let server = spawn_server(&[], None);
    let h2 = client(true, false, None);
    assert_eq!(get(&h2, &url(&server, "/")).await.0, 200);
    let slow = {
        let (h2, u) = (h2.clone(), url(&server, "/delay/300"));
        tokio::spawn(async move { h2.get(u).send().await.map(|r| r.status().as_u16()) })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (status, _) = tokio::task::spawn_blocking(move || server.terminate()).await.unwrap();
    assert_eq!(status.code(), Some(0));
    // the request in flight finished, or its connection went with the server; either way no hang
    let _ = tokio::time::timeout(TIMEOUT, slow).await.expect("the request in flight ends");
}
