//! What the driver's contract tests share: the benchmark server (clientbench-server's router, served in
//! this process on 127.0.0.1), a bounded run of the driver, and the checks every clientbench.raw/4
//! document must pass (docs/raw-format.md).

// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::extract::Request;
use axum::serve::ListenerExt;
use axum::ServiceExt;
use clientbench_server::counting::PlainListener;
use clientbench_server::tls::TlsListener;
use clientbench_server::{Stats, StatsSnapshot};
use serde_json::Value;

pub const DRIVER: &str = env!("CARGO_BIN_EXE_reqwest-driver");

/// The benchmark server on an ephemeral port of 127.0.0.1, for the rest of the test process:
/// `http://127.0.0.1:PORT`.
pub fn server() -> String {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            // as the server binary: responses are small, Nagle would only delay them
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, clientbench_server::app()).await.unwrap();
        });
    });
    format!("http://{}", rx.recv_timeout(Duration::from_secs(10)).expect("the server starts"))
}

/// The benchmark server as the binary serves it, in this process: HTTP/1.1 and HTTP/2 on one port, plain or
/// (`tls`) HTTPS with a generated CA, every connection and request counted.
pub struct Counted {
    /// `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`.
    pub url: String,
    pub stats: Arc<Stats>,
    /// With `tls`: the CA's PEM file (removed on drop).
    pub ca_file: Option<PathBuf>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some(f) = &self.ca_file {
            let _ = std::fs::remove_file(f);
        }
    }
}

impl Counted {
    pub fn snapshot(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    /// The driver's arguments for this server: `--url URL/path` (and `--ca-file` with TLS).
    pub fn args(&self, path: &str) -> Vec<String> {
        let mut args = vec!["--url".to_owned(), format!("{}{path}", self.url)];
        if let Some(ca) = &self.ca_file {
            args.extend(["--ca-file".to_owned(), ca.to_string_lossy().into_owned()]);
        }
        args
    }
}

/// A new [`Counted`] server for the rest of the test process.
pub fn counted_server(tls: bool) -> Counted {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let stats = Arc::new(Stats::default());
    let (tx, rx) = mpsc::channel();
    let (config, ca_file) = if tls {
        let identity = clientbench_server::tls::generate(&clientbench_server::tls::SERVER_NAMES).unwrap();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let file = std::env::temp_dir().join(format!("reqwest-driver-test-{}-{n}-ca.pem", std::process::id()));
        std::fs::write(&file, identity.ca_pem.as_deref().unwrap()).unwrap();
        (Some(clientbench_server::tls::server_config(identity, None).unwrap()), Some(file))
    } else {
        (None, None)
    };
    let shared = stats.clone();
    thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let app = ServiceExt::<Request>::into_make_service(clientbench_server::counted_app(shared.clone()));
            match config {
                None => axum::serve(PlainListener::new(listener, shared), app).await.unwrap(),
                Some(c) => axum::serve(TlsListener::new(listener, c, shared), app).await.unwrap(),
            }
        });
    });
    let addr = rx.recv_timeout(Duration::from_secs(10)).expect("the server starts");
    let url = match tls {
        false => format!("http://{addr}"),
        true => format!("https://{addr}"),
    };
    Counted { url, stats, ca_file }
}

/// A plain HTTP/1.1 server on 127.0.0.1 that reads each request (head and Content-Length body) and answers
/// 200 with `body`, keep-alive, for the rest of the test process: its URL.
pub fn fixed_server(body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/", listener.local_addr().unwrap());
    thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
            thread::spawn(move || {
                let mut reader = BufReader::new(tcp);
                loop {
                    let mut length = 0;
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                        if let Some((name, value)) = line.split_once(':') {
                            if name.eq_ignore_ascii_case("content-length") {
                                length = value.trim().parse().unwrap_or(0);
                            }
                        }
                        line.clear();
                    }
                    if line != "\r\n" || std::io::copy(&mut (&mut reader).take(length), &mut std::io::sink()).is_err() {
                        return;
                    }
                    let answer = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len());
                    if reader.get_mut().write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// Run the driver with `args` to the end (killed, and the test failed, after 60 s).
pub fn driver(args: &[&str]) -> Output {
    let mut child =
        Command::new(DRIVER).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    // read both pipes while it runs (a document of many samples fills a pipe)
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let stdout = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let stderr = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("reqwest-driver {args:?} did not finish within 60 s");
        }
        thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}

/// Run the driver; it must exit 0 with a document that passes [`check`].
pub fn document(args: &[&str]) -> Value {
    let out = driver(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    check(&doc);
    doc
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array().expect("an array").iter().map(|x| x.as_u64().expect("a whole number >= 0")).collect()
}

/// A worker's array `key` (absent: `None`).
pub fn array(w: &Value, key: &str) -> Option<Vec<u64>> {
    w.get(key).map(u64s)
}

/// What docs/raw-format.md says of every clientbench.raw/4 document.
pub fn check(doc: &Value) {
    assert_eq!(doc["schema"], "clientbench.raw/4");
    let wl = &doc["workload"];
    for key in [
        "url",
        "workers",
        "requests",
        "duration_s",
        "warmup",
        "timeout_s",
        "connection",
        "loop",
        "rate",
        "arrival",
        "seed",
        "method",
        "body_size",
        "record",
        "client_scope",
        "http",
    ] {
        assert!(wl.get(key).is_some(), "workload.{key} is missing: {wl}");
    }
    assert!(["per-worker", "shared"].contains(&wl["client_scope"].as_str().unwrap()), "{wl}");
    assert!(["1.1", "2", "3"].contains(&wl["http"].as_str().unwrap()), "{wl}");
    // the streamed forms and targets are recorded as asked (absent would mean the defaults)
    for key in ["upload", "download"] {
        assert!(wl.get(key).is_none_or(|v| v == "whole" || v == "stream"), "{wl}");
    }
    assert!(wl.get("chunk_size").is_none_or(|c| c.as_u64().is_some_and(|c| (1..=1 << 24).contains(&c))), "{wl}");
    assert!(wl.get("targets").is_none_or(|t| t.is_null() || t.is_string()), "{wl}");
    let protocol = doc["client"].get("protocol");
    if wl["http"] != "1.1" {
        assert!(protocol.is_some(), "client.protocol is required with --http 2 and 3: {}", doc["client"]);
    }
    if let Some(p) = protocol.filter(|p| !p.is_null()) {
        assert!(["HTTP/1.1", "HTTP/2", "HTTP/3"].contains(&p.as_str().unwrap()), "{p}");
    }
    let open = wl["loop"] == "open";
    assert_eq!(open, !wl["rate"].is_null());
    // the seed only for a Poisson schedule: a uniform one draws nothing
    assert_eq!((wl["arrival"].is_null(), wl["seed"].is_null()), (!open, wl["arrival"] != "poisson"));
    assert!(wl["requests"].is_null() != wl["duration_s"].is_null(), "exactly one of requests and duration_s");
    let histogram = wl["record"] == "histogram";
    let workers = doc["workers"].as_array().unwrap();
    assert_eq!(workers.len() as u64, wl["workers"].as_u64().unwrap());
    assert!(doc["wall_ns"].as_u64().is_some());
    for w in workers {
        let count = w["count"].as_u64().unwrap();
        if let Some(n) = wl["requests"].as_u64() {
            assert_eq!(count, n);
        }
        let (late, missed) = (w["late"].as_u64().unwrap(), w["missed"].as_u64().unwrap());
        assert!(late <= count);
        if !open {
            assert_eq!((late, missed), (0, 0));
        }
        if wl["duration_s"].is_null() {
            assert_eq!(missed, 0);
        }
        let failures = w["failures"].as_array().unwrap();
        let failure_count = w["failure_count"].as_u64().unwrap();
        assert!(failures.len() as u64 <= failure_count.min(1000) && failure_count <= count);
        for f in failures {
            assert!(f["index"].as_u64().unwrap() < count);
            assert!(!f["reason"].as_str().unwrap().is_empty());
        }
        check_phases(doc, w);
        if histogram {
            for key in ["start_ns", "latencies_ns", "intended_ns"] {
                assert!(w.get(key).is_none(), "no {key} with --record histogram");
            }
            let h = &w["histograms"];
            let kinds: &[&str] = if open { &["service", "corrected"] } else { &["service"] };
            assert_eq!(h.as_object().unwrap().len(), kinds.len(), "{h}");
            for kind in kinds {
                assert_eq!(h[kind]["significant_digits"], 3);
                let buckets: Vec<(u64, u64)> = h[kind]["counts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
                    .collect();
                assert!(buckets.windows(2).all(|b| b[0].0 < b[1].0), "by increasing value");
                assert!(buckets.iter().all(|&(v, c)| c >= 1 && v == lowest_equivalent(v)), "{buckets:?}");
                let total: u64 = buckets.iter().map(|b| b.1).sum();
                assert_eq!(total, count - failure_count, "{kind}: the successful requests");
            }
        } else {
            assert!(w.get("histograms").is_none());
            let (start, latency) = (array(w, "start_ns").unwrap(), array(w, "latencies_ns").unwrap());
            assert_eq!((start.len() as u64, latency.len() as u64), (count, count));
            assert!(start.windows(2).all(|s| s[0] <= s[1]), "requests of a worker are sequential");
            match array(w, "intended_ns") {
                Some(intended) => {
                    assert!(open);
                    assert_eq!(intended.len() as u64, count);
                    assert!(start.iter().zip(&intended).all(|(s, i)| s >= i), "no request starts early");
                }
                None => assert!(!open, "an open loop has intended_ns"),
            }
        }
    }
}

/// A worker's `phases` (raw/4): there when `client.phases` is (with `--phases`), under exactly its keys, of at
/// most its successful requests, whose latencies (all of them, when every request succeeded and the samples are
/// kept) they sum, and the phases fit in those latencies.
fn check_phases(doc: &Value, w: &Value) {
    let Some(keys) = doc["client"].get("phases") else {
        assert!(w.get("phases").is_none(), "no workers[i].phases without client.phases: {w}");
        return;
    };
    let keys: Vec<&str> =
        keys.as_array().expect("client.phases is a list").iter().map(|k| k.as_str().unwrap()).collect();
    assert!(!keys.is_empty(), "client.phases is written only when the driver records some");
    let p = &w["phases"];
    let sums = p["sum_ns"].as_object().expect("sum_ns");
    // (serde_json's map is sorted: the order the driver wrote is not seen here)
    let (mut got, mut want) = (sums.keys().map(String::as_str).collect::<Vec<_>>(), keys.clone());
    got.sort();
    want.sort();
    assert_eq!(got, want, "sum_ns has every key of client.phases, and no other");
    let successes = w["count"].as_u64().unwrap() - w["failure_count"].as_u64().unwrap();
    let (n, latency) = (p["count"].as_u64().unwrap(), p["latency_ns"].as_u64().unwrap());
    assert!(n <= successes, "{p}");
    let phases: u64 = sums.values().map(|v| v.as_u64().expect("ns")).sum();
    assert!(phases <= latency, "the phases fit in the requests' latencies: {p}");
    if let (0, Some(latencies)) = (w["failure_count"].as_u64().unwrap(), array(w, "latencies_ns")) {
        assert_eq!((n, latency), (latencies.len() as u64, latencies.iter().sum::<u64>()), "{p}");
    }
}

/// The lowest value of v's bucket at 3 significant digits (docs/raw-format.md).
pub fn lowest_equivalent(v: u64) -> u64 {
    if v < 2048 {
        return v;
    }
    let b = 63 - v.leading_zeros() - 10;
    (v >> b) << b
}

/// All workers' sums of `key`.
pub fn total(doc: &Value, key: &str) -> u64 {
    doc["workers"].as_array().unwrap().iter().map(|w| w[key].as_u64().unwrap()).sum()
}
