//! reqwest-driver over HTTPS and plain HTTP, against the test servers of rust-reqwest/tests/support.

use crate::support;

use std::io::{BufReader, Write};
use std::sync::atomic::Ordering;

use support::{hello, ok_response, read_request, run, server_config, tcp_server, tls_server, Ca};

/// reqwest-driver over HTTPS: `--ca-file` trusts the CA, the document's `client.tls` names the version (no
/// cipher); without it every request fails with a `TLSError: ` reason; plain HTTP has no `client.tls`;
/// `--ca-file` with `--insecure`, or a CA file that cannot be used, is bad usage (exit 2, one line).
#[test]
fn driver_over_https() {
    let driver = env!("CARGO_BIN_EXE_reqwest-driver");
    let ca = Ca::new("driver");
    let (port, seen) = tls_server(server_config(ca.leaf(&["127.0.0.1"], false), &[&rustls::version::TLS12]), 64, hello);
    let url = format!("https://127.0.0.1:{port}/");
    let ca_file = ca.pem_file.to_str().unwrap();
    for mode in ["async", "sync"] {
        let out =
            run(driver, &["--url", &url, "--ca-file", ca_file, "--workers", "2", "--requests", "3", "--mode", mode]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["client"]["tls"], serde_json::json!({"version": "TLSv1.2", "cipher": null}), "{mode}");
        let failures: Vec<_> =
            doc["workers"].as_array().unwrap().iter().flat_map(|w| w["failures"].as_array().unwrap()).collect();
        assert!(failures.is_empty(), "{failures:?}");
    }
    assert_eq!(seen.connections.load(Ordering::SeqCst), 4, "one kept-alive connection per worker");

    let out = run(driver, &["--url", &url, "--workers", "1", "--requests", "2"]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failures = doc["workers"][0]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2);
    for f in failures {
        let reason = f["reason"].as_str().unwrap();
        assert!(reason.starts_with("TLSError: ") && reason.contains("UnknownIssuer"), "{reason}");
    }
    assert!(doc["client"].get("tls").is_none(), "no TLS connection, no client.tls");

    let out = run(driver, &["--url", &url, "--insecure", "--workers", "1", "--requests", "1", "--connection", "new"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["client"]["tls"]["version"], "TLSv1.2");

    for bad in [&["--ca-file", ca_file, "--insecure"][..], &["--ca-file", "/no/such/ca.pem"]] {
        let out = run(driver, &[&["--url", url.as_str()][..], bad].concat());
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty());
        if bad.len() == 2 {
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains("/no/such/ca.pem"), "{err}");
        }
    }

    let plain = tcp_server(4, |tcp| {
        let mut r = BufReader::new(tcp);
        while read_request(&mut r).is_some() {
            let _ = r.get_mut().write_all(ok_response("hello").as_bytes());
        }
    });
    let out = run(driver, &["--url", &format!("http://127.0.0.1:{plain}/"), "--workers", "1", "--requests", "2"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["client"].get("tls").is_none(), "plain HTTP: no client.tls");
}
