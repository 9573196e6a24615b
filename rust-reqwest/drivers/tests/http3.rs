//! reqwest-driver's `--http 3` against the benchmark server's HTTP/3 (HTTPS and QUIC on one port of 127.0.0.1,
//! in this process: common/h3.rs), in both modes: every request over QUIC (no TCP connection), one QUIC
//! connection per client (W per worker, one shared), a handshake per request with `--connection new`,
//! uploads checked, the protocol and TLS 1.3 in the document; nothing on the UDP port is counted timeouts.

use crate::common;
use crate::h3server;

use common::{document, total};
use h3server::{closed_udp_port, h3_server, H3Server};
use serde_json::Value;

const W: u64 = 4;
const N: u64 = 10;
const WARMUP: u64 = 1;

fn run(server: &H3Server, path: &str, extra: &[&str]) -> Value {
    let url = format!("{}{path}", server.url);
    let (w, n, k) = (W.to_string(), N.to_string(), WARMUP.to_string());
    let ca = server.ca_file.to_str().unwrap();
    let args = ["--url", &url, "--ca-file", ca, "--http", "3", "--workers", &w, "--requests", &n, "--warmup", &k];
    document(&[&args[..], extra].concat())
}

/// Every request succeeded over HTTP/3, and the document says so.
fn all_over_h3(doc: &Value, what: &str) {
    assert_eq!(total(doc, "failure_count"), 0, "{what}: {}", doc["workers"]);
    assert_eq!(total(doc, "count"), W * N, "{what}");
    assert_eq!(doc["workload"]["http"], "3", "{what}");
    assert_eq!(doc["client"]["protocol"], "HTTP/3", "{what}: {}", doc["client"]);
    assert_eq!(doc["client"]["tls"]["version"], "TLSv1.3", "{what}: {}", doc["client"]);
}

#[test]
fn one_quic_connection_per_client_in_both_modes() {
    for mode in ["async", "sync"] {
        for (scope, clients) in [("per-worker", W), ("shared", 1)] {
            let server = h3_server();
            let doc = run(&server, "/", &["--mode", mode, "--client-scope", scope]);
            let what = format!("{mode} {scope}");
            all_over_h3(&doc, &what);
            let s = server.stats.snapshot();
            assert_eq!((s.connections, s.quic_connections, s.quic_handshakes), (0, clients, clients), "{what}: {s:?}");
            assert_eq!(s.h3_requests, W * (N + WARMUP), "{what}: {s:?}");
        }
    }
}

/// `--connection new`: a new client, so a new QUIC connection and handshake, for every request.
#[test]
fn a_new_connection_is_a_quic_handshake_per_request() {
    for mode in ["async", "sync"] {
        let server = h3_server();
        let doc = run(&server, "/bytes/1000", &["--mode", mode, "--connection", "new"]);
        all_over_h3(&doc, mode);
        let s = server.stats.snapshot();
        let requests = W * (N + WARMUP);
        assert_eq!((s.quic_handshakes, s.h3_requests, s.connections), (requests, requests, 0), "{mode}: {s:?}");
    }
}

/// Uploads over HTTP/3, whole and streamed, each answer checked by the harness (the /upload digest).
#[test]
fn uploads_over_h3() {
    let server = h3_server();
    for mode in ["async", "sync"] {
        for upload in ["whole", "stream"] {
            let args = ["--mode", mode, "--method", "PUT", "--body-size", "70000", "--upload", upload];
            all_over_h3(&run(&server, "/upload", &args), &format!("{mode} {upload}"));
        }
    }
    assert_eq!(server.stats.snapshot().connections, 0);
}

/// Nothing answers on the UDP port: every request is a counted `TimeoutError` (no ICMP error reaches an
/// unconnected UDP socket), the driver exits 0 with its document, and `client.protocol` is null.
#[test]
fn nothing_on_the_udp_port_is_counted_timeouts() {
    let url = format!("https://127.0.0.1:{}/", closed_udp_port());
    for mode in ["async", "sync"] {
        let args = ["--url", &url, "--http", "3", "--mode", mode, "--timeout", "0.3", "--workers", "2"];
        let doc = document(&[&args[..], &["--requests", "2", "--warmup", "0"]].concat());
        assert_eq!(total(&doc, "failure_count"), 4, "{mode}: {}", doc["workers"]);
        assert!(doc["client"]["protocol"].is_null(), "{mode}: {}", doc["client"]);
        for w in doc["workers"].as_array().unwrap() {
            for f in w["failures"].as_array().unwrap() {
                let reason = f["reason"].as_str().unwrap();
                assert!(reason.starts_with("TimeoutError: "), "{mode}: {reason}");
            }
        }
    }
}
