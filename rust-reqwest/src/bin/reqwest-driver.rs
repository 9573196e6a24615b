//! reqwest-driver: the clientbench driver for reqwest (docs/raw-format.md).
//!
//! `--mode async` (default): W tokio tasks on the multi-thread runtime, each with its own client.
//! `--mode sync`: W OS threads, each with its own `BlockingClient` (own current-thread runtime).
//! Each worker does K untimed warmup requests, all meet at a `ready` barrier (W+1 with main), main takes
//! t0 and only then joins the `go` barrier that releases them into N timed sequential GETs: so t0 is
//! before every worker's first timed request and `wall_ns` contains every timed loop.
//! `--connection new` builds a new client (and so a new connection) inside every timed request.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use reqwest_bench::{BlockingClient, Client, ClientError, REQWEST_VERSION};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    Sync,
    Async,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Connection {
    /// One client (and keep-alive connection) per worker
    KeepAlive,
    /// A new client (and connection) for every timed request
    New,
}

impl Connection {
    fn as_str(self) -> &'static str {
        match self {
            Connection::KeepAlive => "keep-alive",
            Connection::New => "new",
        }
    }
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Sync => "sync",
            Mode::Async => "async",
        }
    }
}

/// Benchmark driver for the reqwest HTTP client (prints one clientbench.raw/1 JSON document).
#[derive(Parser, Debug)]
#[command(name = "reqwest-driver", version)]
struct Args {
    /// URL every request goes to (http://host:port/path)
    #[arg(long)]
    url: String,
    /// Workers, each with its own client and keep-alive connection
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    workers: u32,
    /// Timed sequential requests per worker
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    requests: u32,
    /// Untimed requests per worker before the timed loop
    #[arg(long, default_value_t = 0)]
    warmup: u32,
    /// Per-request timeout, seconds
    #[arg(long, default_value_t = 30.0, value_parser = parse_timeout)]
    timeout: f64,
    /// keep-alive: one connection per worker; new: a new client (and connection) for every timed request
    #[arg(long, value_enum, default_value_t = Connection::KeepAlive)]
    connection: Connection,
    /// async: W tasks on the tokio multi-thread runtime; sync: W OS threads with blocking clients
    #[arg(long, value_enum, default_value_t = Mode::Async)]
    mode: Mode,
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    let v: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if v <= 0.0 || Duration::try_from_secs_f64(v).is_err() {
        return Err(format!("must be a positive number of seconds, got {text}"));
    }
    Ok(v)
}

#[derive(Serialize)]
struct Document {
    schema: &'static str,
    client: ClientInfo,
    workload: Workload,
    wall_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_rss_kib: Option<u64>,
    workers: Vec<WorkerJson>,
}

/// Peak resident set of this process image (VmHWM: reset at exec, unlike getrusage's ru_maxrss, which
/// also counts the forked parent's pages before exec).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[derive(Serialize)]
struct ClientInfo {
    language: &'static str,
    library: &'static str,
    library_version: &'static str,
    mode: &'static str,
    gil: Option<&'static str>,
}

#[derive(Serialize)]
struct Workload {
    url: String,
    workers: u32,
    requests: u32,
    warmup: u32,
    timeout_s: f64,
    connection: &'static str,
}

#[derive(Serialize)]
struct WorkerJson {
    elapsed_ns: u64,
    start_ns: Vec<u64>,
    latencies_ns: Vec<u64>,
    bytes: u64,
    failures: Vec<Failure>,
}

#[derive(Serialize, Clone)]
struct Failure {
    index: u32,
    reason: String,
    status: Option<u16>,
}

/// What one worker measured, with absolute `Instant`s until [`Record::to_json`].
struct Record {
    starts: Vec<Instant>,
    latencies: Vec<u64>,
    bytes: u64,
    failures: Vec<Failure>,
    loop_start: Option<Instant>,
    loop_end: Option<Instant>,
}

impl Record {
    fn new(n: u32) -> Self {
        Record {
            starts: Vec::with_capacity(n as usize),
            latencies: Vec::with_capacity(n as usize),
            bytes: 0,
            failures: Vec::new(),
            loop_start: None,
            loop_end: None,
        }
    }

    fn record(&mut self, index: u32, start: Instant, end: Instant, result: Result<(u16, u64), ClientError>) {
        self.starts.push(start);
        self.latencies.push(ns(end.saturating_duration_since(start)));
        match result {
            Ok((status, n)) => {
                self.bytes += n;
                if status != 200 {
                    self.failures.push(Failure { index, reason: format!("status {status}"), status: Some(status) });
                }
            }
            Err(e) => self.failures.push(Failure { index, reason: e.to_string(), status: None }),
        }
    }

    fn to_json(&self, t0: Instant) -> WorkerJson {
        let elapsed = match (self.loop_start, self.loop_end) {
            (Some(s), Some(e)) => ns(e.saturating_duration_since(s)),
            _ => 0,
        };
        WorkerJson {
            elapsed_ns: elapsed,
            start_ns: self.starts.iter().map(|s| ns(s.saturating_duration_since(t0))).collect(),
            latencies_ns: self.latencies.clone(),
            bytes: self.bytes,
            failures: self.failures.clone(),
        }
    }
}

/// What a run of the group measured.
struct Group {
    wall_ns: u64,
    cpu_ns: Option<u64>,
    t0: Instant,
    records: Vec<Record>,
}

/// CPU time (user + system) of this process so far, if getrusage works.
fn cpu_time() -> Option<Duration> {
    // SAFETY: getrusage only writes into the zero-initialised struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.clamp(0, 999_999) as u32) * 1000);
    Some(tv(usage.ru_utime) + tv(usage.ru_stime))
}

fn cpu_since(start: Option<Duration>) -> Option<u64> {
    Some(ns(cpu_time()?.saturating_sub(start?)))
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

async fn async_worker(args: Arc<Args>, gates: Arc<[tokio::sync::Barrier; 2]>) -> Record {
    let mut rec = Record::new(args.requests);
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut client = Client::new(timeout);
    if let Ok(c) = &client {
        for _ in 0..args.warmup {
            let _ = c.get(&args.url).await; // warmup failures are not measured
        }
    }
    gates[0].wait().await;
    gates[1].wait().await;
    rec.loop_start = Some(Instant::now());
    for i in 0..args.requests {
        let start = Instant::now();
        if args.connection == Connection::New {
            client = Client::new(timeout); // drops the previous client and its connection
        }
        let result = match &client {
            Ok(c) => c.get(&args.url).await,
            Err(e) => Err(e.clone()),
        };
        rec.record(i, start, Instant::now(), result);
    }
    rec.loop_end = Some(Instant::now());
    rec
}

fn run_async(args: Arc<Args>) -> Result<Group, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    rt.block_on(async {
        let parties = args.workers as usize + 1;
        let gates = Arc::new([tokio::sync::Barrier::new(parties), tokio::sync::Barrier::new(parties)]);
        let handles: Vec<_> = (0..args.workers)
            .map(|_| tokio::spawn(async_worker(args.clone(), gates.clone())))
            .collect();
        gates[0].wait().await;
        let (t0, cpu0) = (Instant::now(), cpu_time());
        gates[1].wait().await;
        let mut records = Vec::with_capacity(handles.len());
        for h in handles {
            records.push(h.await.map_err(|e| format!("worker task failed: {e}"))?);
        }
        let wall = ns(t0.elapsed());
        Ok(Group { wall_ns: wall, cpu_ns: cpu_since(cpu0), t0, records })
    })
}

fn sync_worker(args: &Args, gates: &[std::sync::Barrier; 2]) -> Record {
    let mut rec = Record::new(args.requests);
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut client = BlockingClient::new(timeout);
    if let Ok(c) = &client {
        for _ in 0..args.warmup {
            let _ = c.get(&args.url, || false);
        }
    }
    gates[0].wait();
    gates[1].wait();
    rec.loop_start = Some(Instant::now());
    for i in 0..args.requests {
        let start = Instant::now();
        if args.connection == Connection::New {
            client = BlockingClient::new(timeout); // its own runtime, pool and connection
        }
        let result = match &client {
            Ok(c) => c.get(&args.url, || false),
            Err(e) => Err(e.clone()),
        };
        rec.record(i, start, Instant::now(), result);
    }
    rec.loop_end = Some(Instant::now());
    rec
}

fn run_sync(args: Arc<Args>) -> Result<Group, String> {
    let parties = args.workers as usize + 1;
    let gates = Arc::new([std::sync::Barrier::new(parties), std::sync::Barrier::new(parties)]);
    let mut handles = Vec::with_capacity(args.workers as usize);
    for i in 0..args.workers {
        let (a, g) = (args.clone(), gates.clone());
        let spawned = std::thread::Builder::new().name(format!("worker-{i}")).spawn(move || sync_worker(&a, &g));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                // The threads already started wait at the barrier forever; nothing sensible to report.
                return Err(format!("cannot start worker thread {i}: {e}"));
            }
        }
    }
    gates[0].wait();
    let (t0, cpu0) = (Instant::now(), cpu_time());
    gates[1].wait();
    let mut records = Vec::with_capacity(handles.len());
    for h in handles {
        records.push(h.join().map_err(|_| "a worker thread panicked".to_string())?);
    }
    let wall = ns(t0.elapsed());
    Ok(Group { wall_ns: wall, cpu_ns: cpu_since(cpu0), t0, records })
}

fn main() -> ExitCode {
    let args = Arc::new(Args::parse());
    let outcome = match args.mode {
        Mode::Async => run_async(args.clone()),
        Mode::Sync => run_sync(args.clone()),
    };
    let Group { wall_ns, cpu_ns, t0, records } = match outcome {
        Ok(v) => v,
        Err(e) => {
            eprintln!("reqwest-driver: {e}");
            return ExitCode::from(1);
        }
    };
    let doc = Document {
        schema: "clientbench.raw/1",
        client: ClientInfo {
            language: "Rust",
            library: "reqwest",
            library_version: REQWEST_VERSION,
            mode: args.mode.as_str(),
            gil: None,
        },
        workload: Workload {
            url: args.url.clone(),
            workers: args.workers,
            requests: args.requests,
            warmup: args.warmup,
            timeout_s: args.timeout,
            connection: args.connection.as_str(),
        },
        wall_ns,
        cpu_ns,
        peak_rss_kib: peak_rss_kib(),
        workers: records.iter().map(|r| r.to_json(t0)).collect(),
    };
    match serde_json::to_string(&doc) {
        Ok(text) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            if let Err(e) = writeln!(out, "{text}").and_then(|_| out.flush()) {
                eprintln!("reqwest-driver: cannot write the result: {e}");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("reqwest-driver: cannot serialise the result: {e}");
            ExitCode::from(1)
        }
    }
}
