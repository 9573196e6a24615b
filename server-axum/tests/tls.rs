//! `--tls`: HTTPS with the generated CA (and `--tls-name`) or the user's certificate, `--tls-version`,
//! `GET /stats`'s TLS counters (resumed sessions included), set-up errors, and clients whose handshake fails
//! or never starts.
//! The real binary on an ephemeral port; every wait is bounded.

use crate::common;

use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clientbench_server::StatsSnapshot;
use common::{connect, read_response, run_to_completion, spawn_server, RawResponse, Server, TempDir};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, HandshakeKind, ProtocolVersion, RootCertStore, StreamOwned};

const TLS12: &rustls::SupportedProtocolVersion = &rustls::version::TLS12;
const TLS13: &rustls::SupportedProtocolVersion = &rustls::version::TLS13;

fn roots(ca_file: &str) -> RootCertStore {
    let mut store = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca_file).expect("read CA file") {
        store.add(cert.expect("CA PEM")).expect("add CA");
    }
    assert!(!store.is_empty(), "no certificate in {ca_file}");
    store
}

/// A rustls client trusting `store`, offering ALPN http/1.1, with its own session cache (so that a second
/// connection with the same config resumes).
fn client_config(store: RootCertStore, versions: &[&'static rustls::SupportedProtocolVersion]) -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(store)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

#[derive(Debug)]
struct Negotiated {
    version: Option<ProtocolVersion>,
    kind: Option<HandshakeKind>,
    alpn: Option<Vec<u8>>,
}

/// One `GET path` over a new TLS connection to `addr` (SNI / verified name `name`).
fn tls_get(
    addr: SocketAddr,
    config: &Arc<ClientConfig>,
    name: &str,
    path: &str,
) -> std::io::Result<(RawResponse, Negotiated)> {
    let tcp = connect(addr);
    let conn = ClientConnection::new(config.clone(), ServerName::try_from(name.to_owned()).unwrap()).unwrap();
    let mut tls = StreamOwned::new(conn, tcp);
    write!(tls, "GET {path} HTTP/1.1\r\nHost: {name}\r\n\r\n")?;
    tls.flush()?;
    let resp = read_response(&mut BufReader::new(&mut tls))?
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed before the response"))?;
    let negotiated = Negotiated {
        version: tls.conn.protocol_version(),
        kind: tls.conn.handshake_kind(),
        alpn: tls.conn.alpn_protocol().map(<[u8]>::to_vec),
    };
    tls.conn.send_close_notify();
    let _ = tls.flush();
    Ok((resp, negotiated))
}

/// `/stats` over a new TLS connection (it counts itself: one connection, one full handshake).
fn stats(server: &Server, store: RootCertStore) -> StatsSnapshot {
    let (resp, _) =
        tls_get(server.addr, &client_config(store, &[TLS13, TLS12]), "localhost", "/stats").expect("/stats");
    assert_eq!(resp.status, 200);
    serde_json::from_slice(&resp.body).expect("/stats is JSON")
}

fn ca_of(server: &Server) -> String {
    server.ca_file.clone().expect("ca_file in the listening line").expect("ca_file is not null")
}

#[test]
fn listening_line_names_the_generated_ca() {
    let dir = TempDir::new("line");
    let tls_dir = dir.path("made/by/server");
    let server = spawn_server(&["--tls", "--tls-dir", tls_dir.to_str().unwrap()], None);
    let ca_file = std::fs::canonicalize(&tls_dir).unwrap().join("ca.pem");
    let h3 = server.http3.expect("HTTP/3 is on with --tls");
    let port = server.addr.port();
    let expected = format!(
        "{{\"event\":\"listening\",\"url\":\"https://127.0.0.1:{port}\",\"urls\":[\"https://127.0.0.1:{port}\"],\
         \"ca_file\":{},\"http3\":true,\
         \"udp_addr\":\"127.0.0.1:{port}\",\"udp_recv_buffer\":{},\"udp_send_buffer\":{}}}\n",
        serde_json::to_string(ca_file.to_str().unwrap()).unwrap(),
        h3.recv_buffer,
        h3.send_buffer,
    );
    assert_eq!(server.line, expected);
    let pem = std::fs::read_to_string(&ca_file).unwrap();
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    assert_eq!(pem.matches("BEGIN").count(), 1, "only the CA's certificate");
}

#[test]
fn default_tls_dir_is_a_new_temporary_directory_removed_at_exit() {
    let mut server = spawn_server(&["--tls"], None);
    let ca_file = std::path::PathBuf::from(ca_of(&server));
    assert!(ca_file.is_absolute() && ca_file.is_file(), "{ca_file:?}");
    let dir = ca_file.parent().unwrap().to_path_buf();
    assert!(dir.file_name().unwrap().to_str().unwrap().starts_with("clientbench-tls-"), "{dir:?}");
    assert!(dir.starts_with(std::fs::canonicalize(std::env::temp_dir()).unwrap()), "{dir:?}");
    let (resp, _) = tls_get(server.addr, &client_config(roots(ca_file.to_str().unwrap()), &[TLS13]), "localhost", "/")
        .expect("GET over TLS");
    assert_eq!(resp.body, b"Hello, World!");
    assert!(server.signal_and_wait(libc::SIGTERM, Duration::from_secs(5)).is_some_and(|s| s.success()));
    assert!(!dir.exists(), "{dir:?} is left behind after SIGTERM");
}

/// reqwest trusting only the generated CA: https://localhost and https://127.0.0.1 (both names are in the
/// certificate), keep-alive on one connection; without the CA the handshake fails.
#[tokio::test]
async fn reqwest_with_the_generated_ca() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let dir = TempDir::new("reqwest");
    let server = spawn_server(&["--tls", "--tls-dir", dir.0.to_str().unwrap()], None);
    let pem = std::fs::read(ca_of(&server)).unwrap();
    let ca = reqwest::Certificate::from_pem(&pem).unwrap();
    let client = reqwest::Client::builder()
        .tls_certs_only([ca])
        .http1_only()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let port = server.addr.port();
    for host in ["localhost", "127.0.0.1", "localhost"] {
        let resp = client.get(format!("https://{host}:{port}/")).send().await.expect("GET over HTTPS");
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.text().await.unwrap(), "Hello, World!");
    }
    let resp = client.get(format!("https://localhost:{port}/bytes/100000")).send().await.unwrap();
    assert_eq!(resp.bytes().await.unwrap(), clientbench_server::pattern(100_000));
    let body = client.get(format!("https://localhost:{port}/stats")).send().await.unwrap().bytes().await.unwrap();
    let stats: StatsSnapshot = serde_json::from_slice(&body).unwrap();
    // localhost and 127.0.0.1 are two pool keys: two connections, kept alive.
    assert_eq!((stats.connections, stats.tls_handshakes), (2, 2), "{stats:?}");

    let untrusting = reqwest::Client::builder().tls_certs_only([]).no_proxy().build().unwrap();
    let err = untrusting.get(format!("https://localhost:{port}/")).send().await.expect_err("untrusted CA");
    assert!(format!("{err:?}").contains("UnknownIssuer"), "{err:?}");
}

/// Both TLS versions; a client that offers ALPN http/1.1 only gets it (h2 is for clients that offer it:
/// tests/h2.rs), one that offers no ALPN gets none and is served HTTP/1.1.
#[test]
fn both_versions_and_alpn_http11_when_offered() {
    let server = spawn_server(&["--tls"], None);
    let ca = ca_of(&server);
    for (version, expected) in [(TLS12, ProtocolVersion::TLSv1_2), (TLS13, ProtocolVersion::TLSv1_3)] {
        let (resp, n) = tls_get(server.addr, &client_config(roots(&ca), &[version]), "127.0.0.1", "/").unwrap();
        assert_eq!(resp.status, 200);
        assert_eq!(n.version, Some(expected));
        assert_eq!(n.alpn.as_deref(), Some(&b"http/1.1"[..]));
        assert_eq!(n.kind, Some(HandshakeKind::Full));
    }
    let mut no_alpn = (*client_config(roots(&ca), &[TLS13])).clone();
    no_alpn.alpn_protocols.clear();
    let (resp, n) = tls_get(server.addr, &Arc::new(no_alpn), "127.0.0.1", "/").unwrap();
    assert_eq!((resp.status, n.alpn), (200, None));
}

/// `--tls-version 1.2` refuses a TLS 1.3-only client and `--tls-version 1.3` a TLS 1.2-only one; each
/// serves the client of its version. A refused handshake is not counted as a handshake.
#[test]
fn tls_version_restricts_the_server() {
    for (flag, only, other, expected) in
        [("1.2", TLS12, TLS13, ProtocolVersion::TLSv1_2), ("1.3", TLS13, TLS12, ProtocolVersion::TLSv1_3)]
    {
        let mut server = spawn_server(&["--tls", "--tls-version", flag, "--log-level", "debug"], None);
        let ca = ca_of(&server);
        let err = tls_get(server.addr, &client_config(roots(&ca), &[other]), "localhost", "/").expect_err(flag);
        assert!(err.to_string().contains("ProtocolVersion"), "--tls-version {flag}: {err}");
        let (resp, n) = tls_get(server.addr, &client_config(roots(&ca), &[only]), "localhost", "/").unwrap();
        assert_eq!(resp.status, 200);
        assert_eq!(n.version, Some(expected));
        let (_, n) = tls_get(server.addr, &client_config(roots(&ca), &[TLS13, TLS12]), "localhost", "/").unwrap();
        assert_eq!(n.version, Some(expected), "a client offering both gets {flag}");
        let s = stats(&server, roots(&ca));
        assert_eq!((s.connections, s.tls_handshakes, s.tls_resumed), (4, 3, 0), "{s:?}");
        server.assert_alive();
        assert!(server.stderr().contains("debug: TLS handshake with 127.0.0.1:"), "{}", server.stderr());
    }
}

/// A client with a session cache that connects three times resumes twice, with TLS 1.2 (tickets) and
/// TLS 1.3 (tickets); /stats counts each connection and handshake once and the resumed ones.
#[test]
fn stats_count_handshakes_and_resumed_sessions() {
    for version in [TLS12, TLS13] {
        let server = spawn_server(&["--tls"], None);
        let ca = ca_of(&server);
        let config = client_config(roots(&ca), &[version]);
        let kinds: Vec<_> = (0..3)
            .map(|_| tls_get(server.addr, &config, "localhost", "/").expect("GET").1.kind.expect("handshake kind"))
            .collect();
        assert_eq!(kinds, [HandshakeKind::Full, HandshakeKind::Resumed, HandshakeKind::Resumed], "{version:?}");
        // A plain-TCP connection that never starts a handshake counts as a connection only.
        drop(connect(server.addr));
        let s = stats(&server, roots(&ca));
        let h3 = server.http3.expect("HTTP/3 is on with --tls");
        let expected = StatsSnapshot {
            connections: 5,
            tls_handshakes: 4,
            tls_resumed: 2,
            http1_connections: 4,
            h2_connections: 0,
            requests: 4,
            h2_requests: 0,
            quic_connections: 0,
            quic_handshakes: 0,
            h3_requests: 0,
            udp_recv_buffer: Some(h3.recv_buffer),
            udp_send_buffer: Some(h3.send_buffer),
            // tls_get's Host: the name without a port
            origins: 1,
            origin_requests: [("localhost".to_owned(), 4)].into(),
        };
        assert_eq!(s, expected, "{version:?}");
    }
}

/// A TLS 1.2 client without tickets resumes by session ID (the server's session cache).
#[test]
fn tls12_resumes_by_session_id_without_tickets() {
    let server = spawn_server(&["--tls", "--tls-version", "1.2"], None);
    let ca = ca_of(&server);
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[TLS12])
        .unwrap()
        .with_root_certificates(roots(&ca))
        .with_no_client_auth();
    config.resumption = config.resumption.clone().tls12_resumption(rustls::client::Tls12Resumption::SessionIdOnly);
    let config = Arc::new(config);
    let kinds: Vec<_> =
        (0..2).map(|_| tls_get(server.addr, &config, "localhost", "/").unwrap().1.kind.unwrap()).collect();
    assert_eq!(kinds, [HandshakeKind::Full, HandshakeKind::Resumed]);
    assert_eq!(stats(&server, roots(&ca)).tls_resumed, 1);
}

/// `--tls-name` (repeatable): the generated certificate names each DNS name and IP address given, besides
/// localhost, 127.0.0.1 and ::1 (a name given twice, or in capitals, is the same name); other names fail.
#[test]
fn tls_name_adds_names_and_addresses() {
    let server = spawn_server(
        &["--tls", "--tls-name", "bench-host.example", "--tls-name", "192.0.2.7", "--tls-name", "Bench-Host.Example"],
        None,
    );
    let config = client_config(roots(&ca_of(&server)), &[TLS13, TLS12]);
    for name in ["bench-host.example", "BENCH-HOST.example", "192.0.2.7", "localhost", "127.0.0.1", "::1"] {
        let (resp, _) = tls_get(server.addr, &config, name, "/health").unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(resp.body, b"ok", "{name}");
    }
    for name in ["other.example", "192.0.2.8", "host.bench-host.example"] {
        let err = tls_get(server.addr, &config, name, "/").expect_err(name);
        assert!(err.to_string().contains("not valid for name"), "{name}: {err}");
    }
}

/// A CA of the test's own and a certificate it signed for `names`, as PEM: (CA, certificate, key).
fn user_pki(names: &[&str]) -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

/// `--tls-cert`/`--tls-key`: the user's certificate (from a CA of the test's own); ca_file is null.
#[test]
fn user_certificate() {
    let dir = TempDir::new("user");
    let (ca_pem, cert_pem, key_pem) = user_pki(&["localhost"]);
    std::fs::write(dir.path("cert.pem"), cert_pem).unwrap();
    std::fs::write(dir.path("key.pem"), key_pem).unwrap();
    std::fs::write(dir.path("ca.pem"), ca_pem).unwrap();
    let server = spawn_server(
        &[
            "--tls",
            "--tls-cert",
            dir.path("cert.pem").to_str().unwrap(),
            "--tls-key",
            dir.path("key.pem").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(server.ca_file, Some(None), "{}", server.line);
    assert!(server.line.contains(",\"ca_file\":null,\"http3\":true,"), "{}", server.line);
    let config = client_config(roots(dir.path("ca.pem").to_str().unwrap()), &[TLS13, TLS12]);
    let (resp, _) = tls_get(server.addr, &config, "localhost", "/health").unwrap();
    assert_eq!(resp.body, b"ok");
    // The certificate names localhost only.
    let err = tls_get(server.addr, &config, "127.0.0.1", "/").expect_err("not valid for 127.0.0.1");
    assert!(err.to_string().contains("not valid for name"), "{err}");
}

/// Bad PEM paths and contents, a key that does not match, an unusable --tls-dir: one line on stderr,
/// exit status 2, nothing on stdout.
#[test]
fn tls_setup_errors_are_one_line_and_exit_2() {
    let dir = TempDir::new("bad");
    let (_, cert_pem, key_pem) = user_pki(&["localhost"]);
    let (_, _, other_key_pem) = user_pki(&["localhost"]);
    std::fs::write(dir.path("cert.pem"), cert_pem).unwrap();
    std::fs::write(dir.path("key.pem"), key_pem).unwrap();
    std::fs::write(dir.path("other-key.pem"), other_key_pem).unwrap();
    std::fs::write(dir.path("garbage.pem"), "not a certificate\n").unwrap();
    std::fs::write(dir.path("a-file"), "").unwrap();
    let p = |name: &str| dir.path(name).to_str().unwrap().to_owned();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--tls-cert".into(), p("missing.pem"), "--tls-key".into(), p("key.pem")], "missing.pem"),
        (vec!["--tls-cert".into(), p("cert.pem"), "--tls-key".into(), p("missing.pem")], "missing.pem"),
        (vec!["--tls-cert".into(), p("garbage.pem"), "--tls-key".into(), p("key.pem")], "garbage.pem"),
        (vec!["--tls-cert".into(), p("cert.pem"), "--tls-key".into(), p("garbage.pem")], "garbage.pem"),
        (vec!["--tls-cert".into(), p("key.pem"), "--tls-key".into(), p("cert.pem")], "key.pem"),
        (vec!["--tls-cert".into(), p("cert.pem"), "--tls-key".into(), p("other-key.pem")], "key"),
        (vec!["--tls-dir".into(), format!("{}/sub", p("a-file"))], "a-file"),
    ];
    for (extra, mention) in cases {
        let mut args = vec!["--port", "0", "--tls"];
        args.extend(extra.iter().map(String::as_str));
        let (status, out, err) = run_to_completion(&args);
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(out, "", "{args:?}: nothing on stdout");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line expected: {err}");
        assert!(err.starts_with("clientbench-server: ") && err.contains(mention), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Clients that fail the handshake (garbage, plain HTTP, an untrusting client, a client that connects and
/// says nothing) never hold up or kill the server: a good client is served meanwhile.
#[test]
fn failed_and_silent_handshakes_do_not_hurt() {
    let mut server = spawn_server(&["--tls", "--log-level", "debug"], None);
    let ca = ca_of(&server);
    let silent: Vec<TcpStream> = (0..5).map(|_| connect(server.addr)).collect();
    let mut plain = connect(server.addr);
    plain.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    let _ = plain.read_to_end(&mut answer); // an alert, then the close (bounded by the read timeout)
    assert!(!answer.starts_with(b"HTTP/"), "plain HTTP is not answered in plain HTTP");
    let mut garbage = connect(server.addr);
    garbage.write_all(&[0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5]).unwrap();
    let _ = garbage.read_to_end(&mut Vec::new());
    let untrusting = client_config(RootCertStore::empty(), &[TLS13]);
    assert!(tls_get(server.addr, &untrusting, "localhost", "/").is_err());

    let start = Instant::now();
    let (resp, _) = tls_get(server.addr, &client_config(roots(&ca), &[TLS13]), "localhost", "/").unwrap();
    assert_eq!(resp.status, 200);
    assert!(start.elapsed() < Duration::from_secs(2), "served while 5 clients say nothing: {:?}", start.elapsed());
    server.assert_alive();
    server.assert_no_panic();
    drop(silent);
    let s = stats(&server, roots(&ca));
    assert_eq!((s.connections, s.tls_handshakes), (10, 2), "{s:?}");
    let err = server.stderr();
    assert!(err.matches("debug: TLS handshake with").count() >= 3, "{err}");
    let (status, _) = server.terminate();
    assert!(status.success());
}

/// Without --log-level debug a failed handshake logs nothing.
#[test]
fn failed_handshakes_are_debug_only() {
    let mut server = spawn_server(&["--tls"], None);
    let mut plain = connect(server.addr);
    plain.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let _ = plain.read_to_end(&mut Vec::new());
    server.assert_alive();
    assert_eq!(server.stderr(), "");
}
