//! reqwest-soak: many requests through `reqwest_bench::Client` from W tokio tasks, bounded in time,
//! storing no per-request samples, so that memory growth means a leak. Prints one JSON line (the format
//! of python/clientbench/drivers/soak_binding.py): requests, failures, reasons, RSS after warm-up and at
//! the end (KiB), elapsed seconds. Used by `clientbench soak` / `make soak`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use reqwest_bench::Client;

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
    fn record(&self, ok: bool, reason: impl FnOnce() -> String, warmup: u64) {
        if !ok {
            self.failures.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut r) = self.reasons.lock() {
                *r.entry(reason()).or_insert(0) += 1;
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
            tasks.push(tokio::spawn(async move {
                let client = match Client::new(Duration::from_secs(10)) {
                    Ok(c) => c,
                    Err(e) => {
                        eprintln!("reqwest-soak: cannot build a client: {e}");
                        return;
                    }
                };
                while tally.issued.fetch_add(1, Ordering::Relaxed) < total && Instant::now() < deadline {
                    match client.get(&url).await {
                        Ok((200, _)) => tally.record(true, String::new, warmup),
                        Ok((status, _)) => tally.record(false, || format!("status {status}"), warmup),
                        Err(e) => tally.record(false, || e.kind().to_string(), warmup),
                    }
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
    let doc = serde_json::json!({
        "requests": done,
        "failures": tally.failures.load(Ordering::Relaxed),
        "reasons": reasons,
        "rss_warm_kib": if warm < 0 { serde_json::Value::Null } else { warm.into() },
        "rss_end_kib": rss_kib(),
        "elapsed_s": (t0.elapsed().as_secs_f64() * 100.0).round() / 100.0,
        "stopped_by_time": done < args.requests,
    });
    println!("{doc}");
    std::process::ExitCode::SUCCESS
}
