//! reqwest-bench over HTTPS against small rustls servers in this process (tests/support: certificates made
//! with rcgen when a test starts): the three trust settings, the TLS failure cases (untrusted, wrong name,
//! expired, https:// to plain HTTP, http:// to TLS, a server that never answers the ClientHello),
//! keep-alive and the idle-close check over TLS, session resumption, the negotiated version. Every server
//! thread and every request is bounded in time.

use crate::support;

use std::io::{BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest_bench::{BlockingClient, Client, ClientError, ClientOptions, ConnectionKind, TlsConfig, TlsSetupError};
use rustls::{HandshakeKind, ServerConfig};
use support::{
    hello, ok_response, read_request, self_signed, server_config, tcp_server, tls_server, Ca, Seen, TempDir, Tls,
    IO_LIMIT,
};

fn options(tls: TlsConfig, timeout: Duration) -> ClientOptions {
    ClientOptions { tls, tls_info: true, ..ClientOptions::new(timeout) }
}

fn blocking(tls: TlsConfig) -> BlockingClient {
    BlockingClient::with_options(&options(tls, Duration::from_secs(5))).expect("client")
}

fn tls_error(result: Result<(u16, u64), ClientError>, needle: &str) -> String {
    match result {
        Err(ClientError::Tls(msg)) => {
            assert!(msg.to_lowercase().contains(&needle.to_lowercase()), "{needle:?} not in {msg:?}");
            msg
        }
        other => panic!("expected a TLS error ({needle}), got {other:?}"),
    }
}

// ---- trust -------------------------------------------------------------------------------------------

/// A CA file: GETs over one kept-alive TLS connection (blocking and async clients), by IP and by name; the
/// negotiated version is reported.
#[test]
fn ca_file_keep_alive_reuses_the_connection() {
    let ca = Ca::new("keepalive");
    let (port, seen) =
        tls_server(server_config(ca.leaf(&["localhost", "127.0.0.1"], false), &[&rustls::version::TLS13]), 8, hello);
    let c = blocking(ca.trust());
    for _ in 0..5 {
        assert_eq!(c.get(&format!("https://127.0.0.1:{port}/"), || false).expect("GET"), (200, 5));
    }
    assert_eq!(seen.connections.load(Ordering::SeqCst), 1, "keep-alive over TLS: one connection");
    assert_eq!(c.client().tls_version(), Some("TLSv1.3"));
    let r = c.fetch("POST", &format!("https://localhost:{port}/echo"), &[], Some(Bytes::from_static(b"hi")), || false);
    assert_eq!(r.expect("POST").status, 200);

    // (current-thread: on a multi-thread runtime the next request may start before the connection is
    // back in the pool, and open another one)
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let ac = {
        let _g = rt.enter();
        Client::with_options(&options(ca.trust(), Duration::from_secs(5))).unwrap()
    };
    for _ in 0..3 {
        assert_eq!(rt.block_on(ac.get(&format!("https://localhost:{port}/"))).expect("async GET"), (200, 5));
    }
    assert_eq!(seen.connections.load(Ordering::SeqCst), 3, "one more for localhost, one for the async client");
    assert_eq!(ac.tls_version(), Some("TLSv1.3"));
}

#[test]
fn tls12_server_is_reported_as_tls12() {
    let ca = Ca::new("tls12");
    let (port, _) = tls_server(server_config(ca.leaf(&["localhost"], false), &[&rustls::version::TLS12]), 2, hello);
    let c = blocking(ca.trust());
    assert_eq!(c.get(&format!("https://localhost:{port}/"), || false).expect("GET"), (200, 5));
    assert_eq!(c.client().tls_version(), Some("TLSv1.2"));
    // without tls_info the client does not know (and pays nothing for it)
    let quiet =
        BlockingClient::with_options(&ClientOptions { tls: ca.trust(), ..ClientOptions::new(IO_LIMIT) }).unwrap();
    assert_eq!(quiet.get(&format!("https://localhost:{port}/"), || false).expect("GET"), (200, 5));
    assert_eq!(quiet.client().tls_version(), None);
}

/// One client's later connections resume its TLS session; another client starts afresh.
#[test]
fn a_client_resumes_its_own_sessions_only() {
    let ca = Ca::new("resume");
    for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
        let close_each = |r: &mut BufReader<Tls>| {
            if read_request(r).is_some() {
                let tls = r.get_mut();
                let _ = tls.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
                tls.conn.send_close_notify();
                let _ = tls.flush();
            }
        };
        let mut config = (*server_config(ca.leaf(&["localhost"], false), &[version])).clone();
        config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new().unwrap();
        let (port, seen) = tls_server(Arc::new(config), 8, close_each);
        let url = format!("https://localhost:{port}/");
        let first = blocking(ca.trust());
        for _ in 0..3 {
            assert_eq!(first.get(&url, || false).expect("GET"), (200, 2));
        }
        let second = blocking(ca.trust());
        assert_eq!(second.get(&url, || false).expect("GET"), (200, 2));
        let deadline = Instant::now() + Duration::from_secs(5);
        while seen.handshakes.lock().unwrap().len() < 4 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        use HandshakeKind::{Full, Resumed};
        assert_eq!(*seen.handshakes.lock().unwrap(), [Full, Resumed, Resumed, Full], "{version:?}");
    }
}

/// Without a CA file the system's roots are used: the test CA is not among them.
#[test]
fn untrusted_certificate_is_tls_error() {
    let ca = Ca::new("untrusted");
    let (port, _) = tls_server(server_config(ca.leaf(&["localhost"], false), &[&rustls::version::TLS13]), 4, hello);
    let url = format!("https://localhost:{port}/");
    let msg = tls_error(blocking(TlsConfig::system()).get(&url, || false), "UnknownIssuer");
    assert!(msg.contains("certificate"), "{msg}");
    // another CA's bundle does not help either
    let other = Ca::new("other");
    tls_error(blocking(other.trust()).get(&url, || false), "UnknownIssuer");
    // and the reason a driver prints
    let err = blocking(other.trust()).get(&url, || false).expect_err("untrusted");
    assert!(err.to_string().starts_with("TLSError: "), "{err}");
    assert_eq!(err.kind(), "TLSError");
}

#[test]
fn wrong_host_name_is_tls_error() {
    let ca = Ca::new("name");
    let (port, _) = tls_server(server_config(ca.leaf(&["example.com"], false), &[&rustls::version::TLS13]), 2, hello);
    tls_error(blocking(ca.trust()).get(&format!("https://127.0.0.1:{port}/"), || false), "not valid for name");
}

#[test]
fn expired_certificate_is_tls_error() {
    let ca = Ca::new("expired");
    let (port, _) = tls_server(server_config(ca.leaf(&["localhost"], true), &[&rustls::version::TLS13]), 2, hello);
    tls_error(blocking(ca.trust()).get(&format!("https://localhost:{port}/"), || false), "expired");
}

/// --insecure / verify=False: self-signed, expired and wrong-name certificates are all accepted.
#[test]
fn insecure_accepts_any_certificate() {
    let ca = Ca::new("insecure");
    for (leaf, host) in [
        (self_signed(), "localhost"),
        (ca.leaf(&["localhost"], true), "localhost"),
        (ca.leaf(&["example.com"], false), "127.0.0.1"),
    ] {
        let (port, _) = tls_server(server_config(leaf, &[&rustls::version::TLS13, &rustls::version::TLS12]), 2, hello);
        let c = blocking(TlsConfig::insecure());
        assert_eq!(c.get(&format!("https://{host}:{port}/"), || false).expect("insecure GET"), (200, 5));
    }
    // while verification refuses the self-signed one
    let (port, _) = tls_server(server_config(self_signed(), &[&rustls::version::TLS13]), 2, hello);
    tls_error(blocking(ca.trust()).get(&format!("https://localhost:{port}/"), || false), "UnknownIssuer");
}

// ---- wrong protocol, silent server ----------------------------------------------------------------------

/// https:// to a plain-HTTP server that answers the ClientHello with a 400 (as hyper/axum do), and to one
/// that closes the connection on it: a TLS error either way, promptly.
#[test]
fn https_to_plain_http_is_tls_error() {
    let answers_400 = tcp_server(2, |mut tcp| {
        let mut buf = [0u8; 1024];
        let _ = tcp.read(&mut buf);
        let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    });
    let closes = tcp_server(2, |mut tcp| {
        let mut buf = [0u8; 1024];
        let _ = tcp.read(&mut buf);
    });
    let c = blocking(TlsConfig::insecure());
    let start = Instant::now();
    tls_error(c.get(&format!("https://127.0.0.1:{answers_400}/"), || false), "");
    tls_error(c.get(&format!("https://127.0.0.1:{closes}/"), || false), "eof");
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
}

/// http:// to a TLS server: the server answers the plain request with a TLS alert, which is no HTTP
/// response: a ProtocolError, promptly (the client cannot know that the server speaks TLS).
#[test]
fn http_to_tls_server_is_protocol_error() {
    let ca = Ca::new("plain-to-tls");
    let (port, _) = tls_server(server_config(ca.leaf(&["localhost"], false), &[&rustls::version::TLS13]), 4, hello);
    let start = Instant::now();
    match blocking(ca.trust()).get(&format!("http://127.0.0.1:{port}/"), || false) {
        Err(ClientError::Protocol(_)) => {}
        other => panic!("expected ProtocolError, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
}

/// A server that accepts the connection and never answers the ClientHello: the timeout covers the
/// handshake (TimeoutError after the timeout, never a hang), for the blocking and the async client.
#[test]
fn silent_server_times_out_within_the_timeout() {
    let port = tcp_server(4, |tcp| {
        let mut buf = [0u8; 4096];
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
        while matches!((&tcp).read(&mut buf), Ok(n) if n > 0) {}
    });
    let url = format!("https://127.0.0.1:{port}/");
    let timeout = Duration::from_millis(500);
    let c = BlockingClient::with_options(&options(TlsConfig::insecure(), timeout)).unwrap();
    let start = Instant::now();
    let err = c.get(&url, || false).expect_err("silent server");
    let took = start.elapsed();
    assert!(matches!(err, ClientError::Timeout(_)), "{err:?}");
    assert!(took >= Duration::from_millis(450) && took < Duration::from_secs(3), "{took:?}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let ac = {
        let _g = rt.enter();
        Client::with_options(&options(TlsConfig::insecure(), timeout)).unwrap()
    };
    let start = Instant::now();
    let err = rt.block_on(ac.get(&url)).expect_err("silent server");
    assert!(matches!(err, ClientError::Timeout(_)), "{err:?}");
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
}

/// A server that only supports TLS 1.2 with a cipher suite the client does not offer fails the handshake
/// with an alert: a TLS error.
#[test]
fn handshake_failure_is_tls_error() {
    let ca = Ca::new("handshake");
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    provider.cipher_suites.retain(|s| {
        s.suite() == rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
            && s.version() == &rustls::version::TLS12
    });
    provider.kx_groups.retain(|g| g.name() == rustls::NamedGroup::secp384r1);
    let leaf = ca.leaf(&["localhost"], false);
    let mut config = ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(leaf.chain, leaf.key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()]; // and no common application protocol
    let (port, _) = tls_server(Arc::new(config), 2, hello);
    tls_error(blocking(ca.trust()).get(&format!("https://localhost:{port}/"), || false), "alert");
}

// ---- the idle-close check over TLS ----------------------------------------------------------------------

/// What [`idle_closing_tls_server`] saw: the answered requests (`<METHOD> <body>`), and how many
/// connections still received data after the server had closed them.
#[derive(Default)]
struct IdleLog {
    answered: Mutex<Vec<String>>,
    late: AtomicUsize,
}

/// A TLS keep-alive server that answers `<METHOD> <body>` and closes a connection idle for 200 ms
/// (close_notify, then FIN); then it reads on (TLS allows the peer to send after our close_notify): data
/// that still arrives is a request the client sent on a connection it had been told was closed.
fn idle_closing_tls_server(ca: &Ca) -> (u16, Arc<Seen>, Arc<IdleLog>) {
    let log = Arc::new(IdleLog::default());
    let seen_log = log.clone();
    let (port, seen) =
        tls_server(server_config(ca.leaf(&["localhost"], false), &[&rustls::version::TLS13]), 64, move |r| {
            let _ = r.get_ref().sock.set_read_timeout(Some(Duration::from_millis(200)));
            while let Some((head, body)) = read_request(r) {
                let method = head.split(' ').next().unwrap_or_default().to_string();
                let line = format!("{method} {}", String::from_utf8_lossy(&body));
                seen_log.answered.lock().unwrap().push(line.clone());
                let tls = r.get_mut();
                let _ = tls.write_all(ok_response(&line).as_bytes()).and_then(|()| tls.flush());
            }
            let tls = r.get_mut();
            tls.conn.send_close_notify();
            let _ = tls.flush();
            let _ = tls.sock.shutdown(std::net::Shutdown::Write);
            let _ = tls.sock.set_read_timeout(Some(Duration::from_secs(1)));
            // (the BufReader may already hold the start of one)
            if !r.buffer().is_empty() {
                seen_log.late.fetch_add(1, Ordering::SeqCst);
            }
            let mut late = Vec::new();
            let _ = r.get_mut().read_to_end(&mut late); // until the client's close_notify, its FIN or 1 s
            if !late.is_empty() {
                seen_log.late.fetch_add(1, Ordering::SeqCst);
            }
        });
    (port, seen, log)
}

/// Each method twice, then a pause in which the server closed the idle TLS connection: every request
/// succeeds and reaches the server exactly once, never on the closed connection.
#[test]
fn idle_closed_tls_connection_every_method_succeeds() {
    let ca = Ca::new("idle");
    let (port, seen, log) = idle_closing_tls_server(&ca);
    let c = blocking(ca.trust());
    let url = format!("https://localhost:{port}/");
    let mut expected = Vec::new();
    for (round, method) in ["GET", "POST", "PUT", "PATCH"].iter().enumerate() {
        for attempt in 0..2 {
            let body = format!("{method}-{round}-{attempt}");
            let resp = c
                .fetch(method, &url, &[], Some(Bytes::from(body.clone())), || false)
                .unwrap_or_else(|e| panic!("{method} after the server closed the idle TLS connection: {e}"));
            let line = format!("{method} {body}");
            assert_eq!((resp.status, &resp.body[..]), (200, line.as_bytes()));
            expected.push(line);
        }
        thread::sleep(Duration::from_millis(500));
    }
    assert_eq!(*log.answered.lock().unwrap(), expected, "every request reached the server exactly once");
    assert_eq!(log.late.load(Ordering::SeqCst), 0, "no request was sent on a connection the server had closed");
    assert_eq!(seen.connections.load(Ordering::SeqCst), 4, "one TLS connection per round, reused within it");
}

// ---- CA files -------------------------------------------------------------------------------------------

#[test]
fn ca_file_errors() {
    let dir = TempDir::new("cafile");
    let missing = TlsConfig::ca_file(&dir.0.join("missing.pem")).expect_err("missing");
    assert!(matches!(missing, TlsSetupError::Io(std::io::ErrorKind::NotFound, _)), "{missing:?}");
    assert!(missing.to_string().contains("missing.pem"), "{missing}");
    for (name, text) in [
        ("empty.pem", ""),
        ("garbage.pem", "this is not PEM\n"),
        ("key-only.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
        ("broken.pem", "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n"),
        ("not-a-cert.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
    ] {
        let path = dir.0.join(name);
        std::fs::write(&path, text).unwrap();
        let err = TlsConfig::ca_file(&path).expect_err(name);
        assert!(matches!(err, TlsSetupError::Invalid(_)), "{name}: {err:?}");
        assert!(err.to_string().contains(name), "{err}");
    }
    let err = TlsConfig::ca_file(&dir.0).expect_err("a directory");
    assert!(matches!(err, TlsSetupError::Io(..)), "{err:?}");
    // a bundle of several CAs: every one is trusted
    let (a, b) = (Ca::new("bundle-a"), Ca::new("bundle-b"));
    let bundle = dir.0.join("bundle.pem");
    let text = std::fs::read_to_string(&a.pem_file).unwrap() + &std::fs::read_to_string(&b.pem_file).unwrap();
    std::fs::write(&bundle, text).unwrap();
    let trust = TlsConfig::ca_file(&bundle).expect("bundle");
    for ca in [&a, &b] {
        let (port, _) = tls_server(server_config(ca.leaf(&["localhost"], false), &[&rustls::version::TLS13]), 2, hello);
        let c = blocking(trust.clone());
        assert_eq!(c.get(&format!("https://localhost:{port}/"), || false).expect("GET"), (200, 5));
    }
}

/// A refused https:// connection is still a ConnectionError (not TLS).
#[test]
fn refused_https_is_connection_refused() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err =
        blocking(TlsConfig::insecure()).get(&format!("https://127.0.0.1:{port}/"), || false).expect_err("refused");
    assert!(matches!(err, ClientError::Connection(ConnectionKind::Refused, _)), "{err:?}");
}

/// `tls_version` follows the most recent response: TLS 1.3, then None after a plain-HTTP one.
#[test]
fn tls_version_follows_the_latest_response() {
    let ca = Ca::new("latest");
    let (tls_port, _) = tls_server(server_config(ca.leaf(&["localhost"], false), &[&rustls::version::TLS13]), 2, hello);
    let plain_port = tcp_server(2, |tcp| {
        let mut r = BufReader::new(tcp);
        while read_request(&mut r).is_some() {
            let _ = r.get_mut().write_all(ok_response("hello").as_bytes());
        }
    });
    let c = blocking(ca.trust());
    assert_eq!(c.client().tls_version(), None, "before the first response");
    let seen = c.client().tls_seen().expect("tls_info was asked for");
    c.get(&format!("https://localhost:{tls_port}/"), || false).expect("https");
    assert_eq!((c.client().tls_version(), seen.version()), (Some("TLSv1.3"), Some("TLSv1.3")));
    c.get(&format!("http://127.0.0.1:{plain_port}/"), || false).expect("http");
    assert_eq!(c.client().tls_version(), None, "after a plain-HTTP response");
    drop(c);
    assert_eq!(seen.version(), None, "the handle outlives the client");
}
