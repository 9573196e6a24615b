//! reqwest-soak: many requests through `reqwest_bench::Client` from W tokio tasks, bounded in time,
//! storing no per-request samples, so that memory growth means a leak. Prints one JSON line,
//! `clientbench.soak/1` (docs/soak-format.md; "schema" is its first key): requests, failures, reasons,
//! RSS after warm-up and at the end (KiB), elapsed seconds. Used by `clientbench soak` / `make soak`.
//! Failure reasons are the drivers' canonical ones (`reqwest_harness::failure_reason`); the line keeps
//! the most common, most common first, as the C++ and Python soak targets do.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use reqwest_bench::{Client, ClientOptions, TlsConfig, Trust};
use reqwest_harness as harness;
use serde::ser::{Serialize, Serializer};

/// The `schema` of the line.
const SCHEMA: &str = "clientbench.soak/1";
/// How many of the most common failure reasons the line keeps (as the other soak targets).
const TOP_REASONS: usize = 5;

/// Soak the reqwest client: R requests from W tasks, bounded in time.
#[derive(Parser, Debug)]
#[command(name = "reqwest-soak")]
struct Args {
    #[arg(long)]
    url: String,
    #[arg(long, default_value_t = 1_000_000)]
    requests: u64,
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    workers: u32,
    /// requests before the warm RSS sample
    #[arg(long, default_value_t = 50_000)]
    warmup: u64,
    #[arg(long, default_value_t = 600.0)]
    max_seconds: f64,
    /// https:// URLs: trust the CA certificates in this PEM file instead of the system's
    #[arg(long, value_name = "PATH", conflicts_with = "insecure")]
    ca_file: Option<std::path::PathBuf>,
    /// https:// URLs: do not verify the server's certificate (unsafe: for measurements only)
    #[arg(long)]
    insecure: bool,
}

fn rss_kib() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

struct Tally {
    issued: AtomicU64,
    done: AtomicU64,
    failures: AtomicU64,
    rss_warm: AtomicI64,
    reasons: Mutex<BTreeMap<String, u64>>,
}

impl Tally {
    fn record(&self, reason: Option<String>, warmup: u64) {
        if let Some(reason) = reason {
            self.failures.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut r) = self.reasons.lock() {
                *r.entry(reason).or_insert(0) += 1;
            }
        }
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= warmup && self.rss_warm.load(Ordering::Relaxed) < 0 {
            let _ = self.rss_warm.compare_exchange(-1, rss_kib(), Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if let Err(e) = reqwest_bench::parse_url(&args.url) {
        eprintln!("reqwest-soak: error: --url: {e}");
        return std::process::ExitCode::from(2);
    }
    let trust = match (&args.ca_file, args.insecure) {
        (_, true) => Trust::Insecure,
        (Some(path), false) => Trust::CaFile(path.clone()),
        (None, false) => Trust::System,
    };
    let options = match TlsConfig::new(&trust) {
        Ok(tls) => ClientOptions { tls, ..ClientOptions::new(Duration::from_secs(10)) },
        Err(e) => {
            eprintln!("reqwest-soak: error: --ca-file: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("reqwest-soak: cannot start the tokio runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let tally = Arc::new(Tally {
        issued: AtomicU64::new(0),
        done: AtomicU64::new(0),
        failures: AtomicU64::new(0),
        rss_warm: AtomicI64::new(-1),
        reasons: Mutex::new(BTreeMap::new()),
    });
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs_f64(args.max_seconds.max(0.0));
    runtime.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..args.workers {
            let tally = tally.clone();
            let url = args.url.clone();
            let (total, warmup) = (args.requests, args.warmup);
            let options = options.clone();
            tasks.push(tokio::spawn(async move {
                let client = match Client::with_options(&options) {
                    Ok(c) => c,
                    Err(e) => {
                        eprintln!("reqwest-soak: cannot build a client: {e}");
                        return;
                    }
                };
                while tally.issued.fetch_add(1, Ordering::Relaxed) < total && Instant::now() < deadline {
                    let result = client.get(&url).await;
                    tally.record(harness::failure_reason(&result), warmup);
                }
            }));
        }
        for t in tasks {
            let _ = t.await;
        }
    });
    let done = tally.done.load(Ordering::Relaxed);
    let warm = tally.rss_warm.load(Ordering::Relaxed);
    let reasons = tally.reasons.lock().map(|r| r.clone()).unwrap_or_default();
    let line = SoakLine {
        schema: SCHEMA,
        requests: done,
        failures: tally.failures.load(Ordering::Relaxed),
        reasons: TopReasons::of(reasons),
        rss_warm_kib: (warm >= 0).then_some(warm),
        rss_end_kib: rss_kib(),
        elapsed_s: (t0.elapsed().as_secs_f64() * 100.0).round() / 100.0,
        stopped_by_time: done < args.requests,
    };
    match serde_json::to_string(&line) {
        Ok(text) => {
            println!("{text}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("reqwest-soak: cannot serialise the result: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

/// The line, keys in this order (docs/soak-format.md).
#[derive(serde::Serialize)]
struct SoakLine {
    schema: &'static str,
    requests: u64,
    failures: u64,
    reasons: TopReasons,
    rss_warm_kib: Option<i64>,
    rss_end_kib: i64,
    elapsed_s: f64,
    stopped_by_time: bool,
}

/// The most common failure reasons with their counts, most common first (ties in reason order),
/// serialised as a JSON object in that order.
struct TopReasons(Vec<(String, u64)>);

impl TopReasons {
    fn of(counts: BTreeMap<String, u64>) -> Self {
        let mut top: Vec<(String, u64)> = counts.into_iter().collect();
        top.sort_by_key(|(_, count)| std::cmp::Reverse(*count)); // stable: ties stay in reason order
        top.truncate(TOP_REASONS);
        TopReasons(top)
    }
}

impl Serialize for TopReasons {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(reason, count)| (reason, count)))
    }
}
