//! The clientbench driver harness for Rust clients (docs/raw-format.md), the counterpart of
//! cpp-beast/src/harness.{hpp,cpp} and python/clientbench/drivers/harness.py: the contract's flags, W
//! workers, the ready barrier then t0, the timed loop, failure accounting and the `clientbench.raw/1`
//! document. A driver supplies only how to make a worker's client and how to do one GET with it
//! ([`Driver`]); the binary picks the mode.
//!
//! * [`run_tasks`] (`async`): W tokio tasks on one multi-thread runtime.
//! * [`run_threads`] (`sync`): W OS threads.
//!
//! Both run the same worker ([`worker`]): it makes its client, does K untimed warm-up requests, waits at
//! the start gate, then does N sequential timed GETs (with `--connection new`, a new client, hence a new
//! connection, inside every timed request). The worker is an `async fn`, so that one loop serves both
//! modes: a task awaits it, a thread drives it with [`block_on`] (a sync driver's request future is
//! ready at its first poll, so that costs one poll per request and no allocation).
//!
//! For `https://` URLs, `--ca-file` / `--insecure` reach every client through [`ClientOptions`] (made once,
//! before any worker starts, by [`client_options`]: a CA file that cannot be used is bad usage), and the
//! negotiated TLS version of worker 0's client is reported as `client.tls` (`{"version": "TLSv1.3",
//! "cipher": null}`: reqwest does not tell the cipher suite; absent for `http://`).
//!
//! The gate is two barriers of W+1 parties: every worker arrives at `ready` when its client and warm-up
//! are done; main, once all have arrived, takes t0 (and the process CPU time), then joins `go`, which
//! releases them. So t0 is before every worker's first timed request, and `wall_ns` (t0 until the last
//! worker has finished) contains every timed loop and no start-up.

use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use serde::Serialize;

use crate::{ClientError, ClientOptions, TlsConfig, TlsSetupError, Trust};

/// The `schema` of the document.
pub const SCHEMA: &str = "clientbench.raw/1";

/// What a driver measures: how to make a worker's client and how to do one GET with it.
///
/// `get` returns `(status, body bytes read)` once the whole body has been read; any transport or protocol
/// failure is an error (a non-2xx status is not). A blocking client does the request inside `get` and
/// returns a ready future (`std::future::ready`).
pub trait Driver: Send + Sync + 'static {
    type Client: Send + Sync;

    /// A worker's client, with the run's timeout and TLS settings.
    fn make_client(&self, options: &ClientOptions) -> Result<Self::Client, ClientError>;

    fn get(&self, client: &Self::Client, url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send;

    /// The TLS version the client negotiated (`TLSv1.3`), if it can tell; reported as `client.tls`.
    fn tls_version(&self, _client: &Self::Client) -> Option<&'static str> {
        None
    }
}

/// `--mode`: the library's native mode to run in (`client.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Sync,
    Async,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Sync => "sync",
            Mode::Async => "async",
        }
    }
}

/// `--connection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Connection {
    /// One client (and keep-alive connection) per worker
    KeepAlive,
    /// A new client (and connection) for every timed request
    New,
}

impl Connection {
    pub fn as_str(self) -> &'static str {
        match self {
            Connection::KeepAlive => "keep-alive",
            Connection::New => "new",
        }
    }
}

/// The contract's flags, identical for every driver (`#[command(flatten)]` them into the driver's own).
#[derive(clap::Args, Debug, Clone)]
pub struct Options {
    /// URL every request goes to (http://host:port/path)
    #[arg(long)]
    pub url: String,
    /// Workers, each with its own client and keep-alive connection
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: u32,
    /// Timed sequential requests per worker
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub requests: u32,
    /// Untimed requests per worker before the timed loop
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
    /// Per-request timeout, seconds
    #[arg(long, default_value_t = 30.0, value_parser = parse_timeout)]
    pub timeout: f64,
    /// keep-alive: one connection per worker; new: a new client (and connection) for every timed request
    #[arg(long, value_enum, default_value_t = Connection::KeepAlive)]
    pub connection: Connection,
    /// https:// URLs: trust the CA certificates in this PEM file instead of the system's
    #[arg(long, value_name = "PATH", conflicts_with = "insecure")]
    pub ca_file: Option<PathBuf>,
    /// https:// URLs: do not verify the server's certificate (unsafe: for measurements only)
    #[arg(long)]
    pub insecure: bool,
}

impl Options {
    /// `--ca-file` / `--insecure` / the system's roots.
    pub fn trust(&self) -> Trust {
        match (&self.ca_file, self.insecure) {
            (_, true) => Trust::Insecure,
            (Some(path), false) => Trust::CaFile(path.clone()),
            (None, false) => Trust::System,
        }
    }

    /// The URL is `https://`.
    pub fn is_https(&self) -> bool {
        self.url.trim_start().get(..8).is_some_and(|p| p.eq_ignore_ascii_case("https://"))
    }

    /// The clients' options: the timeout, the trust (a CA file is read now), TLS info for `https://`.
    pub fn client_options(&self) -> Result<ClientOptions, TlsSetupError> {
        Ok(ClientOptions {
            tls: TlsConfig::new(&self.trust())?,
            tls_info: self.is_https(),
            ..ClientOptions::new(Duration::from_secs_f64(self.timeout))
        })
    }
}

/// [`Options::client_options`], or the one-line usage error the binary exits with (status 2).
pub fn client_options(prog: &str, o: &Options) -> Result<ClientOptions, ExitCode> {
    o.client_options().map_err(|e| {
        eprintln!("{prog}: error: --ca-file: {e}");
        ExitCode::from(2)
    })
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    let v: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if v <= 0.0 || Duration::try_from_secs_f64(v).is_err() {
        return Err(format!("must be a positive number of seconds, got {text}"));
    }
    Ok(v)
}

/// `client.language`, `client.library`, `client.library_version` of the document.
#[derive(Debug, Clone, Copy)]
pub struct ClientInfo {
    pub language: &'static str,
    pub library: &'static str,
    pub library_version: &'static str,
}

// ---- the document -----------------------------------------------------------------------------------

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    client: ClientJson,
    workload: Workload<'a>,
    wall_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_rss_kib: Option<u64>,
    workers: Vec<WorkerJson>,
}

#[derive(Serialize)]
struct ClientJson {
    language: &'static str,
    library: &'static str,
    library_version: &'static str,
    mode: &'static str,
    gil: Option<&'static str>,
    /// `https://`: what worker 0 negotiated (absent for `http://`, or when no TLS connection succeeded: the
    /// field is optional).
    #[serde(skip_serializing_if = "Option::is_none")]
    tls: Option<TlsJson>,
}

#[derive(Serialize)]
struct TlsJson {
    version: &'static str,
    /// Not available from reqwest (its `TlsInfo` has the version and the certificate only).
    cipher: Option<&'static str>,
}

#[derive(Serialize)]
struct Workload<'a> {
    url: &'a str,
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

#[derive(Serialize)]
struct Failure {
    index: u32,
    reason: String,
    status: Option<u16>,
}

/// The canonical failure reason of a request, the same in every language's harness: `status <code>` for
/// a response other than 200, otherwise `<Class>: <message>` ([`ClientError`]'s `Display`).
pub fn failure_reason(result: &Result<(u16, u64), ClientError>) -> Option<String> {
    match result {
        Ok((200, _)) => None,
        Ok((status, _)) => Some(format!("status {status}")),
        Err(e) => Some(e.to_string()),
    }
}

/// What one worker measured, with absolute `Instant`s until [`Record::into_json`].
struct Record {
    starts: Vec<Instant>,
    latencies: Vec<u64>,
    bytes: u64,
    failures: Vec<Failure>,
    loop_start: Option<Instant>,
    loop_end: Option<Instant>,
    /// The TLS version the worker's (last) client negotiated.
    tls_version: Option<&'static str>,
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
            tls_version: None,
        }
    }

    fn record(&mut self, index: u32, start: Instant, end: Instant, result: Result<(u16, u64), ClientError>) {
        self.starts.push(start);
        self.latencies.push(ns(end.saturating_duration_since(start)));
        if let Ok((_, n)) = result {
            self.bytes += n;
        }
        if let Some(reason) = failure_reason(&result) {
            let status = result.ok().map(|(status, _)| status);
            self.failures.push(Failure { index, reason, status });
        }
    }

    fn into_json(self, t0: Instant) -> WorkerJson {
        let elapsed = match (self.loop_start, self.loop_end) {
            (Some(s), Some(e)) => ns(e.saturating_duration_since(s)),
            _ => 0,
        };
        WorkerJson {
            elapsed_ns: elapsed,
            start_ns: self.starts.iter().map(|s| ns(s.saturating_duration_since(t0))).collect(),
            latencies_ns: self.latencies,
            bytes: self.bytes,
            failures: self.failures,
        }
    }
}

/// What a run of the group measured.
pub struct Group {
    wall_ns: u64,
    cpu_ns: Option<u64>,
    t0: Instant,
    records: Vec<Record>,
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// CPU time (user + system) of this process so far, if getrusage works.
fn cpu_time() -> Option<Duration> {
    // SAFETY: all-zero bytes are a valid `rusage` (plain integers and timevals).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we pass, which lives for the call.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let tv = |t: libc::timeval| {
        let micros = u32::try_from(t.tv_usec.clamp(0, 999_999)).unwrap_or(0);
        Duration::new(u64::try_from(t.tv_sec).unwrap_or(0), micros * 1000)
    };
    Some(tv(usage.ru_utime) + tv(usage.ru_stime))
}

fn cpu_since(start: Option<Duration>) -> Option<u64> {
    Some(ns(cpu_time()?.saturating_sub(start?)))
}

/// Peak resident set of this process image (VmHWM: reset at exec, unlike getrusage's ru_maxrss, which
/// also counts the forked parent's pages before exec).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

// ---- the workers ------------------------------------------------------------------------------------

/// A worker's side of the start gate: arrive at `ready`, then wait for `go`.
trait Gate: Send + Sync {
    fn pass(&self) -> impl Future<Output = ()> + Send;
}

/// The gate of the threads: blocks (the worker runs under [`block_on`] on its own thread).
struct ThreadGate {
    ready: Barrier,
    go: Barrier,
}

impl Gate for ThreadGate {
    async fn pass(&self) {
        self.ready.wait();
        self.go.wait();
    }
}

/// The gate of the tasks.
struct TaskGate {
    ready: tokio::sync::Barrier,
    go: tokio::sync::Barrier,
}

impl Gate for TaskGate {
    async fn pass(&self) {
        self.ready.wait().await;
        self.go.wait().await;
    }
}

/// One worker, in both modes: client, K warm-up requests, the gate, N timed requests.
async fn worker<D: Driver>(driver: &D, o: &Options, co: &ClientOptions, gate: &impl Gate) -> Record {
    let mut rec = Record::new(o.requests);
    let mut client = driver.make_client(co);
    if let Ok(c) = &client {
        for _ in 0..o.warmup {
            let _ = driver.get(c, &o.url).await; // warmup failures are not measured
        }
    }
    gate.pass().await;
    rec.loop_start = Some(Instant::now());
    for i in 0..o.requests {
        let start = Instant::now();
        if o.connection == Connection::New {
            client = driver.make_client(co); // drops the previous client and its connection
        }
        let result = match &client {
            Ok(c) => driver.get(c, &o.url).await,
            Err(e) => Err(e.clone()),
        };
        rec.record(i, start, Instant::now(), result);
    }
    rec.loop_end = Some(Instant::now());
    rec.tls_version = client.as_ref().ok().and_then(|c| driver.tls_version(c));
    rec
}

/// Unparks the thread that is blocked in [`block_on`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Drive `fut` to completion on this thread, parking while it is pending (a worker of [`run_threads`]:
/// its requests and gate block, so it is ready at every poll).
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

/// `sync`: W OS threads, each running [`worker`] with its own client (made with `co`).
pub fn run_threads<D: Driver>(driver: D, o: &Options, co: &ClientOptions) -> Result<Group, String> {
    let parties = o.workers as usize + 1;
    let gate = Arc::new(ThreadGate { ready: Barrier::new(parties), go: Barrier::new(parties) });
    let (driver, options, co) = (Arc::new(driver), Arc::new(o.clone()), Arc::new(co.clone()));
    let mut handles = Vec::with_capacity(o.workers as usize);
    for i in 0..o.workers {
        let (d, opts, c, g) = (driver.clone(), options.clone(), co.clone(), gate.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("worker-{i}"))
            .spawn(move || block_on(worker(&*d, &opts, &c, &*g)));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                // The threads already started wait at the barrier forever; nothing sensible to report.
                return Err(format!("cannot start worker thread {i}: {e}"));
            }
        }
    }
    gate.ready.wait();
    let (t0, cpu0) = (Instant::now(), cpu_time());
    gate.go.wait();
    let mut records = Vec::with_capacity(handles.len());
    for h in handles {
        records.push(h.join().map_err(|_| "a worker thread panicked".to_string())?);
    }
    let wall = ns(t0.elapsed());
    Ok(Group { wall_ns: wall, cpu_ns: cpu_since(cpu0), t0, records })
}

/// `async`: W tokio tasks on one multi-thread runtime, each running [`worker`] with its own client (made
/// with `co`).
pub fn run_tasks<D: Driver>(driver: D, o: &Options, co: &ClientOptions) -> Result<Group, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    rt.block_on(async {
        let parties = o.workers as usize + 1;
        let gate =
            Arc::new(TaskGate { ready: tokio::sync::Barrier::new(parties), go: tokio::sync::Barrier::new(parties) });
        let (driver, options, co) = (Arc::new(driver), Arc::new(o.clone()), Arc::new(co.clone()));
        let handles: Vec<_> = (0..o.workers)
            .map(|_| {
                let (d, opts, c, g) = (driver.clone(), options.clone(), co.clone(), gate.clone());
                tokio::spawn(async move { worker(&*d, &opts, &c, &*g).await })
            })
            .collect();
        gate.ready.wait().await;
        let (t0, cpu0) = (Instant::now(), cpu_time());
        gate.go.wait().await;
        let mut records = Vec::with_capacity(handles.len());
        for h in handles {
            records.push(h.await.map_err(|e| format!("worker task failed: {e}"))?);
        }
        let wall = ns(t0.elapsed());
        Ok(Group { wall_ns: wall, cpu_ns: cpu_since(cpu0), t0, records })
    })
}

/// Print the document of a run (or the error that stopped it) and return the exit status:
/// 0 when the document was printed, whatever the requests did; 1 on an internal error.
pub fn finish(prog: &str, info: ClientInfo, mode: Mode, o: &Options, outcome: Result<Group, String>) -> ExitCode {
    let Group { wall_ns, cpu_ns, t0, records } = match outcome {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{prog}: {e}");
            return ExitCode::from(1);
        }
    };
    let doc = Document {
        schema: SCHEMA,
        client: ClientJson {
            language: info.language,
            library: info.library,
            library_version: info.library_version,
            mode: mode.as_str(),
            gil: None,
            tls: records.iter().find_map(|r| r.tls_version).map(|version| TlsJson { version, cipher: None }),
        },
        workload: Workload {
            url: &o.url,
            workers: o.workers,
            requests: o.requests,
            warmup: o.warmup,
            timeout_s: o.timeout,
            connection: o.connection.as_str(),
        },
        wall_ns,
        cpu_ns,
        peak_rss_kib: peak_rss_kib(),
        workers: records.into_iter().map(|r| r.into_json(t0)).collect(),
    };
    match serde_json::to_string(&doc) {
        Ok(text) => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            if let Err(e) = writeln!(out, "{text}").and_then(|_| out.flush()) {
                eprintln!("{prog}: cannot write the result: {e}");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{prog}: cannot serialise the result: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A fake client: request j of a worker answers 200 with j bytes, except every 4th (status 500) and
    /// every 5th (a timeout); counts the clients made.
    struct Fake {
        clients: AtomicU32,
    }

    struct FakeClient {
        next: AtomicU32,
    }

    fn timeout() -> ClientError {
        ClientError::Timeout("request timed out".into())
    }

    fn answer(client: &FakeClient) -> Result<(u16, u64), ClientError> {
        let j = client.next.fetch_add(1, Ordering::Relaxed);
        match j {
            j if j % 5 == 4 => Err(timeout()),
            j if j % 4 == 3 => Ok((500, 1)),
            j => Ok((200, u64::from(j))),
        }
    }

    impl Driver for Fake {
        type Client = FakeClient;

        fn make_client(&self, _options: &ClientOptions) -> Result<FakeClient, ClientError> {
            self.clients.fetch_add(1, Ordering::Relaxed);
            Ok(FakeClient { next: AtomicU32::new(0) })
        }

        fn get(&self, client: &FakeClient, _url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
            std::future::ready(answer(client))
        }
    }

    /// The same client, answering from a tokio task after a yield (a real async request is pending first).
    struct AsyncFake(Fake);

    impl Driver for AsyncFake {
        type Client = FakeClient;

        fn make_client(&self, options: &ClientOptions) -> Result<FakeClient, ClientError> {
            self.0.make_client(options)
        }

        async fn get(&self, client: &FakeClient, _url: &str) -> Result<(u16, u64), ClientError> {
            tokio::task::yield_now().await;
            answer(client)
        }
    }

    fn options(workers: u32, requests: u32, warmup: u32, connection: Connection) -> Options {
        Options {
            url: "http://127.0.0.1:9/".into(),
            workers,
            requests,
            warmup,
            timeout: 1.0,
            connection,
            ca_file: None,
            insecure: false,
        }
    }

    fn check(group: Group, o: &Options) {
        assert_eq!(group.records.len(), o.workers as usize);
        let mut loops = Vec::new();
        for r in group.records {
            let (start, end) = (r.loop_start.expect("loop start"), r.loop_end.expect("loop end"));
            assert!(start >= group.t0, "no timed loop starts before t0");
            loops.push(ns(end.saturating_duration_since(start)));
            let json = r.into_json(group.t0);
            assert_eq!((json.start_ns.len(), json.latencies_ns.len()), (o.requests as usize, o.requests as usize));
            assert!(json.start_ns.windows(2).all(|w| w[0] <= w[1]));
            // with --connection keep-alive the warm-up requests came first on the same client
            let first = if o.connection == Connection::New { 0 } else { o.warmup };
            let mut bytes = 0;
            let mut failures = Vec::new();
            for i in 0..o.requests {
                let j = if o.connection == Connection::New { first } else { first + i };
                match j {
                    j if j % 5 == 4 => failures.push((i, timeout().to_string(), None)),
                    j if j % 4 == 3 => {
                        bytes += 1;
                        failures.push((i, "status 500".to_string(), Some(500)));
                    }
                    j => bytes += u64::from(j),
                }
            }
            assert_eq!(json.bytes, bytes);
            let got: Vec<_> = json.failures.into_iter().map(|f| (f.index, f.reason, f.status)).collect();
            assert_eq!(got, failures);
        }
        assert!(loops.iter().all(|&l| l <= group.wall_ns), "wall_ns contains every timed loop");
    }

    #[test]
    fn threads_and_tasks_run_the_same_workload() {
        for connection in [Connection::KeepAlive, Connection::New] {
            let o = options(3, 12, 2, connection);
            let fake = Fake { clients: AtomicU32::new(0) };
            let co = o.client_options().unwrap();
            let group = run_threads(fake, &o, &co).expect("threads");
            check(group, &o);
            let group = run_tasks(AsyncFake(Fake { clients: AtomicU32::new(0) }), &o, &co).expect("tasks");
            check(group, &o);
        }
    }

    #[test]
    fn new_connection_makes_a_client_per_timed_request() {
        let o = options(2, 5, 3, Connection::New);
        let driver = Arc::new(Fake { clients: AtomicU32::new(0) });
        struct Shared(Arc<Fake>);
        impl Driver for Shared {
            type Client = FakeClient;
            fn make_client(&self, o: &ClientOptions) -> Result<FakeClient, ClientError> {
                self.0.make_client(o)
            }
            fn get(&self, c: &FakeClient, url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send {
                self.0.get(c, url)
            }
        }
        run_threads(Shared(driver.clone()), &o, &o.client_options().unwrap()).expect("threads");
        // one client per worker for the warm-up, then one per timed request
        assert_eq!(driver.clients.load(Ordering::Relaxed), 2 * (1 + 5));
    }

    #[test]
    fn failure_reasons_are_canonical() {
        assert_eq!(failure_reason(&Ok((200, 5))), None);
        assert_eq!(failure_reason(&Ok((503, 0))).as_deref(), Some("status 503"));
        assert_eq!(failure_reason(&Ok((204, 0))).as_deref(), Some("status 204"));
        assert_eq!(failure_reason(&Err(timeout())).as_deref(), Some("TimeoutError: request timed out"));
        let refused = ClientError::Connection(crate::ConnectionKind::Refused, "connection refused".into());
        assert_eq!(failure_reason(&Err(refused)).as_deref(), Some("ConnectionError: connection refused"));
        let tls = ClientError::Tls("invalid peer certificate: UnknownIssuer".into());
        assert_eq!(failure_reason(&Err(tls)).as_deref(), Some("TLSError: invalid peer certificate: UnknownIssuer"));
    }

    #[test]
    fn tls_flags() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            o: Options,
        }
        let parse =
            |args: &[&str]| Cli::try_parse_from([&["driver", "--url", "https://127.0.0.1:1/"][..], args].concat());
        let o = parse(&[]).unwrap().o;
        assert_eq!((o.trust(), o.is_https()), (Trust::System, true));
        assert!(o.client_options().unwrap().tls_info);
        assert_eq!(parse(&["--insecure"]).unwrap().o.trust(), Trust::Insecure);
        assert_eq!(parse(&["--ca-file", "/x.pem"]).unwrap().o.trust(), Trust::CaFile("/x.pem".into()));
        let err = parse(&["--ca-file", "/x.pem", "--insecure"]).err().expect("mutually exclusive");
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
        let missing = parse(&["--ca-file", "/no/such/ca.pem"]).unwrap().o.client_options().unwrap_err();
        assert!(matches!(missing, TlsSetupError::Io(std::io::ErrorKind::NotFound, _)), "{missing:?}");
        let http = Cli::try_parse_from(["driver", "--url", "http://127.0.0.1:1/"]).unwrap().o;
        assert!(!http.is_https() && !http.client_options().unwrap().tls_info);
    }
}
