//! reqwest-soak prints one `clientbench.soak/1` line (docs/soak-format.md): "schema" first, then the
//! other keys in their documented order; failure reasons are the canonical ones, the most common first.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::net::TcpListener;
use std::process::Command;

use support::{hello, run, server_config, tls_server, Ca};

const KEYS: [&str; 8] =
    ["schema", "requests", "failures", "reasons", "rss_warm_kib", "rss_end_kib", "elapsed_s", "stopped_by_time"];

fn soak(url: &str, requests: u32) -> (String, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_reqwest-soak"))
        .args(["--url", url, "--requests", &requests.to_string(), "--workers", "2", "--warmup", "1"])
        .args(["--max-seconds", "60"])
        .output()
        .expect("run reqwest-soak");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(text.lines().count(), 1, "{text}");
    let value = serde_json::from_str(&text).expect("json");
    (text, value)
}

#[test]
fn soak_line_has_the_schema_first_and_canonical_reasons() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    }; // nobody listens there now: every request is refused
    let (text, v) = soak(&format!("http://127.0.0.1:{port}/"), 6);
    assert!(text.starts_with(r#"{"schema":"clientbench.soak/1","#), "{text}");
    let positions: Vec<usize> = KEYS.iter().map(|k| text.find(&format!("\"{k}\":")).expect(k)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "keys out of order: {text}");
    assert_eq!(v.as_object().expect("object").len(), KEYS.len());
    assert_eq!((v["requests"].as_u64(), v["failures"].as_u64()), (Some(6), Some(6)));
    assert_eq!(v["stopped_by_time"], serde_json::Value::Bool(false));
    let reasons = v["reasons"].as_object().expect("reasons");
    assert_eq!(reasons.len(), 1, "{text}");
    let (reason, count) = reasons.iter().next().expect("one reason");
    assert!(reason.starts_with("ConnectionError: ") && reason.contains("refused"), "{reason}");
    assert_eq!(count.as_u64(), Some(6));
}

/// reqwest-soak takes `--ca-file` / `--insecure` too.
#[test]
fn soak_over_https() {
    let soak = env!("CARGO_BIN_EXE_reqwest-soak");
    let ca = Ca::new("soak");
    let (port, _) = tls_server(server_config(ca.leaf(&["localhost"], false), &[&rustls::version::TLS13]), 64, hello);
    let url = format!("https://localhost:{port}/");
    let common = ["--url", url.as_str(), "--requests", "40", "--workers", "2", "--warmup", "1", "--max-seconds", "30"];
    let line = |out: std::process::Output| -> serde_json::Value {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = line(run(soak, &[&common[..], &["--ca-file", ca.pem_file.to_str().unwrap()]].concat()));
    assert_eq!((v["requests"].as_u64(), v["failures"].as_u64()), (Some(40), Some(0)), "{v}");
    let v = line(run(soak, &[&common[..], &["--insecure"]].concat()));
    assert_eq!(v["failures"].as_u64(), Some(0), "{v}");
    let v = line(run(soak, &common));
    assert_eq!(v["failures"].as_u64(), Some(40), "{v}");
    let (reason, _) = v["reasons"].as_object().unwrap().iter().next().unwrap();
    assert!(reason.starts_with("TLSError: "), "{reason}");
    let out = run(soak, &[&common[..], &["--ca-file", "/no/such/ca.pem"]].concat());
    assert_eq!(out.status.code(), Some(2));
}
