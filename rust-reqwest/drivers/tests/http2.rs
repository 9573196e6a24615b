//! reqwest-driver's `--client-scope shared` and `--http 2` against the benchmark server (HTTP/1.1 and
//! HTTP/2 on one port, every connection and request counted), in both modes: one HTTP/2 connection carries
//! a shared client's W workers (h2c with prior knowledge, and over TLS after ALPN), an HTTP/1.1 pool opens
//! up to W, the protocol is in the document; ALPN against a server without h2 falls back to HTTP/1.1 and
//! says so; prior knowledge against a server without h2 is counted failures.

use crate::common;
use crate::support;

use std::io::Read;
use std::net::TcpListener;
use std::thread;

use clientbench_server::StatsSnapshot;
use common::{counted_server, document, fixed_server, total};
use serde_json::Value;

const W: u64 = 8;
const N: u64 = 20;
const WARMUP: u64 = 2;

fn run(args: &[String], extra: &[&str]) -> Value {
    let w = W.to_string();
    let (n, k) = (N.to_string(), WARMUP.to_string());
    let base = ["--workers", &w, "--requests", &n, "--warmup", &k];
    let args: Vec<&str> = args.iter().map(String::as_str).chain(base).chain(extra.iter().copied()).collect();
    document(&args)
}

/// Every request (warm-up included) to the server of `doc` succeeded.
fn all_ok(doc: &Value) {
    assert_eq!(total(doc, "failure_count"), 0, "{}", doc["workers"]);
    assert_eq!(total(doc, "count"), W * N);
}

/// One client shared by W workers over HTTP/2: every connection is HTTP/2 and there are far fewer than W (one,
/// as a rule; hyper's pool does not promise exactly one, and two were seen beside the other suites under load),
/// so the workers' requests went as streams of shared connections.
fn assert_shared_h2(s: &StatsSnapshot, mode: &str) {
    assert!(s.connections == s.h2_connections && (1..=W / 4).contains(&s.h2_connections), "{mode}: {s:?}");
}

#[test]
fn shared_client_multiplexes_one_h2c_connection() {
    for mode in ["async", "sync"] {
        let server = counted_server(false);
        let doc = run(&server.args("/"), &["--mode", mode, "--client-scope", "shared", "--http", "2"]);
        all_ok(&doc);
        assert_eq!(
            (doc["workload"]["client_scope"].as_str(), doc["workload"]["http"].as_str()),
            (Some("shared"), Some("2"))
        );
        assert_eq!(doc["client"]["protocol"], "HTTP/2", "{mode}");
        let s = server.snapshot();
        assert_shared_h2(&s, mode);
        assert_eq!(s.http1_connections, 0, "{mode}: {s:?}");
        assert_eq!(s.h2_requests, W * (N + WARMUP), "{mode}: {s:?}");
    }
}

#[test]
fn shared_client_multiplexes_one_h2_connection_over_tls() {
    for mode in ["async", "sync"] {
        let server = counted_server(true);
        let doc = run(&server.args("/"), &["--mode", mode, "--client-scope", "shared", "--http", "2"]);
        all_ok(&doc);
        assert_eq!(doc["client"]["protocol"], "HTTP/2", "{mode}");
        assert_eq!(doc["client"]["tls"]["version"], "TLSv1.3", "{mode}");
        let s = server.snapshot();
        // the first request to the server goes alone: the others find its HTTP/2 connection in the pool
        assert_shared_h2(&s, mode);
        assert_eq!(s.tls_handshakes, s.connections, "{mode}: {s:?}");
        assert_eq!(s.h2_requests, W * (N + WARMUP), "{mode}: {s:?}");
    }
}

/// A shared HTTP/1.1 client opens a connection whenever a request finds none idle in the pool: with W
/// requests in flight, up to W, and more, because hyper hands a connection back to the pool from a task
/// that runs after the response, and a worker that asks again before that finds none idle (one that a
/// request gave up for an idle one carries nothing). Tasks on the multi-thread runtime usually find theirs
/// back (W here); threads sharing a `BlockingClient` usually do not, as only the thread driving its runtime
/// runs that task (about 2W here, 2W + 1 on a loaded machine): the test asserts keep-alive (a connection
/// carries several requests), not a count that depends on timing. Per worker it is exactly W, over HTTP/1.1
/// and (one HTTP/2 connection per client) over HTTP/2.
#[test]
fn connections_by_scope_and_protocol() {
    for mode in ["async", "sync"] {
        let server = counted_server(false);
        let doc = run(&server.args("/"), &["--mode", mode, "--client-scope", "shared"]);
        all_ok(&doc);
        assert_eq!(
            (doc["client"]["protocol"].as_str(), doc["workload"]["http"].as_str()),
            (Some("HTTP/1.1"), Some("1.1"))
        );
        let s = server.snapshot();
        assert!(s.connections >= 1 && 4 * s.connections <= s.requests && s.h2_connections == 0, "{mode}: {s:?}");
        // a connection hyper opened for a request that then got an idle one sends nothing: counted, not sniffed
        assert!((1..=s.connections).contains(&s.http1_connections), "{mode}: {s:?}");
        assert_eq!(s.requests, W * (N + WARMUP), "{mode}: {s:?}");

        for (http, tls) in [("1.1", false), ("2", false), ("2", true)] {
            let server = counted_server(tls);
            let doc = run(&server.args("/"), &["--mode", mode, "--http", http]);
            all_ok(&doc);
            assert_eq!(doc["workload"]["client_scope"], "per-worker");
            let s = server.snapshot();
            let (h1, h2) = if http == "2" { (0, W) } else { (W, 0) };
            assert_eq!((s.connections, s.http1_connections, s.h2_connections), (W, h1, h2), "{mode} {http}: {s:?}");
        }
    }
}

/// Uploads go over HTTP/2 too, every answer checked.
#[test]
fn uploads_over_h2() {
    let server = counted_server(false);
    for mode in ["async", "sync"] {
        let args =
            ["--mode", mode, "--client-scope", "shared", "--http", "2", "--method", "PUT", "--body-size", "70000"];
        let doc = run(&server.args("/upload"), &args);
        all_ok(&doc);
        assert_eq!(doc["client"]["protocol"], "HTTP/2");
    }
    // one shared connection per mode as a rule, but 3 in all were seen once beside the other suites (not
    // reproduced in 30 runs under load; hyper's pool decides): the multiplexing itself is the test above's
    let s = server.snapshot();
    assert!((2..=2 * W).contains(&s.h2_connections) && s.http1_connections == 0, "{s:?}");
}

/// ALPN against a TLS server that offers only http/1.1: every request succeeds over HTTP/1.1, and the
/// document says HTTP/1.1 (the fallback shows).
#[test]
fn alpn_falls_back_to_http11() {
    let ca = support::Ca::new("fallback");
    let leaf = ca.leaf(&["127.0.0.1"], false);
    let (port, _) = support::tls_server(support::server_config(leaf, &[&rustls::version::TLS13]), 64, support::hello);
    let url = format!("https://127.0.0.1:{port}/");
    for scope in ["per-worker", "shared"] {
        let args = ["--url", &url, "--ca-file", ca.pem_file.to_str().unwrap(), "--http", "2", "--client-scope", scope];
        let doc = document(&[&args[..], &["--workers", "2", "--requests", "3"]].concat());
        assert_eq!(total(&doc, "failure_count"), 0, "{scope}: {}", doc["workers"]);
        assert_eq!(doc["client"]["protocol"], "HTTP/1.1", "{scope}");
    }
}

/// h2c with prior knowledge against servers without HTTP/2: one that answers the preface with HTTP/1.1
/// and one that closes the connection. Every request is a counted `ConnectionError` that says the server
/// may not speak HTTP/2, the driver exits 0 with its document, and `client.protocol` is null (no
/// response).
#[test]
fn prior_knowledge_without_h2_is_counted_failures() {
    let closer = TcpListener::bind("127.0.0.1:0").unwrap();
    let closing = format!("http://{}/", closer.local_addr().unwrap());
    thread::spawn(move || {
        for mut tcp in closer.incoming().flatten() {
            let _ = tcp.read(&mut [0u8; 1024]);
        }
    });
    for url in [fixed_server("Hello, World!"), closing] {
        for (mode, scope) in [("async", "per-worker"), ("sync", "per-worker"), ("async", "shared"), ("sync", "shared")]
        {
            let args = ["--url", &url, "--http", "2", "--mode", mode, "--client-scope", scope, "--timeout", "10"];
            let doc = document(&[&args[..], &["--workers", "2", "--requests", "3"]].concat());
            assert_eq!(total(&doc, "failure_count"), 6, "{url} {mode} {scope}");
            assert!(doc["client"]["protocol"].is_null(), "{}", doc["client"]);
            for w in doc["workers"].as_array().unwrap() {
                for f in w["failures"].as_array().unwrap() {
                    let reason = f["reason"].as_str().unwrap();
                    assert!(reason.starts_with("ConnectionError: "), "{reason}");
                    assert!(reason.contains("may not speak HTTP/2"), "{reason}");
                }
            }
        }
    }
}
