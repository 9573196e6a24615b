//! The workers, in both modes, and what they measure: the start gate, the timed loop, the wall and CPU
//! time of the group.

use std::future::Future;
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use reqwest_bench::{ClientError, ClientOptions};

use crate::document::{Failure, WorkerJson};
use crate::{failure_reason, Connection, Driver, Options};

/// What one worker measured, with absolute `Instant`s until [`Record::into_json`].
pub(crate) struct Record {
    starts: Vec<Instant>,
    latencies: Vec<u64>,
    bytes: u64,
    failures: Vec<Failure>,
    loop_start: Option<Instant>,
    loop_end: Option<Instant>,
    /// The TLS version the worker's (last) client negotiated.
    pub(crate) tls_version: Option<&'static str>,
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

    pub(crate) fn into_json(self, t0: Instant) -> WorkerJson {
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
    pub(crate) wall_ns: u64,
    pub(crate) cpu_ns: Option<u64>,
    pub(crate) t0: Instant,
    pub(crate) records: Vec<Record>,
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
}
