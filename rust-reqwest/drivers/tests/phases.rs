//! reqwest-driver's `--phases` (raw/4): no `phases` key anywhere without it; with it `client.phases` and every
//! worker's sums (common::check checks their shape), in both modes and both record modes; `connect+tls` 0 on the
//! kept-alive connections, non-zero with `--connection new` over TLS; `send+wait` and `receive` follow the
//! server's delays before the head (`/delay/{ms}`) and within the body (`/drip`); a host name adds `dns+`; over
//! HTTP/3 the QUIC handshake is in `connect+tls+send+wait`.

use crate::common;
use crate::h3server;

use crate::support::timing::attempts;
use common::{counted_server, document, server};
use serde_json::{json, Value};

fn workers(doc: &Value) -> &Vec<Value> {
    doc["workers"].as_array().unwrap()
}

/// All workers' sum of phase `key`, and the requests they were recorded for.
fn phase_total(doc: &Value, key: &str) -> (u64, u64) {
    workers(doc).iter().fold((0, 0), |(sum, n), w| {
        let p = &w["phases"];
        (sum + p["sum_ns"][key].as_u64().unwrap(), n + p["count"].as_u64().unwrap())
    })
}

#[test]
fn without_the_flag_the_document_has_no_phases() {
    let url = format!("{}/", server());
    for mode in ["async", "sync"] {
        let doc = document(&["--url", &url, "--workers", "2", "--requests", "5", "--mode", mode]);
        assert!(doc["client"].get("phases").is_none(), "{mode}: {}", doc["client"]);
        assert!(workers(&doc).iter().all(|w| w.get("phases").is_none()), "{mode}");
    }
}

/// Over kept-alive TLS connections opened by the warm-up, every timed request's `connect+tls` is 0, and the
/// sums are of every (successful) request, samples or histograms, in both modes.
#[test]
fn kept_alive_connections_have_no_connect_time() {
    for mode in ["async", "sync"] {
        for record in ["samples", "histogram"] {
            let server = counted_server(true);
            let mut args = server.args("/");
            let more = ["--workers", "2", "--requests", "20", "--warmup", "1", "--phases", "--mode", mode];
            args.extend(more.iter().chain(&["--record", record]).map(|s| s.to_string()));
            let doc = document(&args.iter().map(String::as_str).collect::<Vec<_>>());
            let what = format!("{mode} {record}");
            assert_eq!(doc["client"]["phases"], json!(["connect+tls", "send+wait", "receive"]), "{what}");
            // (async: hyper gives a connection back to the pool from a task of its own, which a worker's next
            // request may overtake on the multi-thread runtime, and open one more: then its time is connect+tls)
            let reused = server.snapshot().connections == 2;
            for w in workers(&doc) {
                assert_eq!((w["failure_count"].as_u64(), w["phases"]["count"].as_u64()), (Some(0), Some(20)), "{what}");
                let sums = &w["phases"]["sum_ns"];
                assert!(!reused || sums["connect+tls"] == 0, "{what}: {w}");
                assert!(sums["send+wait"].as_u64().unwrap() > 0 && sums["receive"].as_u64().is_some(), "{what}: {w}");
            }
            assert!(reused || mode == "async", "{what}: the warm-up's connections were kept");
        }
    }
}

/// `--connection new` over TLS: every request opens its connection, whose time is `connect+tls`.
#[test]
fn a_new_connection_is_timed() {
    for mode in ["async", "sync"] {
        let server = counted_server(true);
        let mut args = server.args("/");
        let more = ["--workers", "2", "--requests", "10", "--connection", "new", "--phases", "--mode", mode];
        args.extend(more.map(str::to_owned));
        let doc = document(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(server.snapshot().connections, 20, "{mode}");
        let (connect, n) = phase_total(&doc, "connect+tls");
        assert_eq!(n, 20, "{mode}");
        // a TCP connect and a TLS handshake each: more than nothing (no bound on a noisy machine's speed)
        assert!(connect > 0, "{mode}: {}", doc["workers"]);
    }
}

/// The server waits 100 ms before the head (`/delay/100`): `send+wait` is 100 ms within 10% + 1 ms; it sends the
/// body 60 ms after the head (`/drip`): `receive` is 60 ms within as much. By name (`localhost`) the connection's
/// key is `dns+connect+tls`.
#[test]
fn send_wait_and_receive_follow_the_servers_delays() {
    attempts(|m| {
        let base = server();
        for mode in ["async", "sync"] {
            // 5 timed requests on the warm-up's connection: the sum of `key` over them
            let mean = |path: &str, key: &str| {
                let url = format!("{base}{path}");
                let args = ["--url", &url, "--workers", "1", "--requests", "5", "--warmup", "1", "--phases"];
                let (sum, n) = phase_total(&document(&[&args[..], &["--mode", mode]].concat()), key);
                assert_eq!(n, 5, "{mode} {path}");
                sum as f64 / n as f64
            };
            m.about(mean("/delay/100", "send+wait"), 100.0, format_args!("{mode}: send+wait"));
            // one piece: the body is one write, 60 ms after the head
            m.about(mean("/drip?bytes=1&duration_ms=60", "receive"), 60.0, format_args!("{mode}: receive"));
            let by_name = base.replace("127.0.0.1", "localhost");
            let doc = document(&["--url", &by_name, "--requests", "2", "--workers", "1", "--phases", "--mode", mode]);
            assert_eq!(doc["client"]["phases"], json!(["dns+connect+tls", "send+wait", "receive"]), "{mode}");
            assert!(phase_total(&doc, "dns+connect+tls").0 > 0, "{mode}: the first request connected");
        }
    });
}

/// HTTP/3: reqwest's QUIC connector is not timed apart, so its handshake is in the merged first phase.
#[test]
fn http3_merges_the_handshake_into_the_exchange() {
    let server = h3server::h3_server();
    let url = format!("{}/", server.url);
    let ca = server.ca_file.to_str().unwrap();
    for mode in ["async", "sync"] {
        let args = ["--url", &url, "--ca-file", ca, "--http", "3", "--requests", "4", "--workers", "2", "--phases"];
        let doc = document(&[&args[..], &["--mode", mode, "--connection", "new"]].concat());
        assert_eq!(doc["client"]["phases"], json!(["connect+tls+send+wait", "receive"]), "{mode}");
        let (first, n) = phase_total(&doc, "connect+tls+send+wait");
        assert!(n == 8 && first > 0, "{mode}: {}", doc["workers"]);
    }
}

/// Targets by address and by name: one key for the connection's time, `dns+connect+tls` (a key names a phase once),
/// under which every request's phases are summed.
#[test]
fn targets_by_address_and_by_name_share_the_keys() {
    let base = server();
    let file = std::env::temp_dir().join(format!("reqwest-driver-phases-targets-{}", std::process::id()));
    std::fs::write(&file, format!("GET {base}/\nGET {}/\n", base.replace("127.0.0.1", "localhost"))).unwrap();
    for mode in ["async", "sync"] {
        let targets = file.to_str().unwrap();
        let args =
            ["--url", &base, "--targets", targets, "--workers", "2", "--requests", "6", "--phases", "--mode", mode];
        let doc = document(&args);
        assert_eq!(doc["client"]["phases"], json!(["dns+connect+tls", "send+wait", "receive"]), "{mode}");
        let (_, n) = phase_total(&doc, "send+wait");
        assert_eq!(n, 12, "{mode}: every request's phases are summed");
    }
    std::fs::remove_file(&file).unwrap();
}
