//! The workers, in both modes, and what they measure: the start gate, the timed loop (closed, or open on
//! a schedule), the wall and CPU time of the group.

use std::future::Future;
use std::sync::{Arc, Barrier, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use reqwest_bench::{ClientError, ClientOptions, Phases};

use crate::body::Answer;
use crate::options::{ClientScope, Method, Plan, Transfer};
use crate::record::{Outcome, Record};
use crate::schedule::{Clock, Limit, Pacer, Schedule};
use crate::{Connection, Driver};

/// What a run of the group measured.
pub struct Group {
    pub(crate) wall_ns: u64,
    pub(crate) cpu_ns: Option<u64>,
    pub(crate) records: Vec<Record>,
    /// With `--phases`, the driver's phase keys (`client.phases`; `None` without the flag or without keys).
    pub(crate) phase_keys: Option<Vec<&'static str>>,
}

/// With `--phases`, the keys of the phases `driver` records for `plan` (`None`: not asked, or none).
fn phase_keys<D: Driver>(driver: &D, plan: &Plan) -> Option<Vec<&'static str>> {
    plan.phases.then(|| driver.phase_keys(plan)).filter(|keys| !keys.is_empty())
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

/// The clock of a thread: sleeps block it (the worker runs under [`block_on`]).
pub struct ThreadClock(Instant);

impl Clock for ThreadClock {
    fn now(&self) -> u64 {
        ns(self.0.elapsed())
    }

    async fn sleep_until(&self, at: u64) {
        let now = self.now();
        if at > now {
            std::thread::sleep(Duration::from_nanos(at - now));
        }
    }
}

/// The clock of a task: sleeps await tokio's timer.
pub struct TaskClock(Instant);

impl Clock for TaskClock {
    fn now(&self) -> u64 {
        ns(self.0.elapsed())
    }

    async fn sleep_until(&self, at: u64) {
        if at > self.now() {
            crate::timer::sleep_until(self.0 + Duration::from_nanos(at)).await;
        }
    }
}

/// A worker's side of the start gate: arrive at `ready`, wait for `go`, and get the clock that starts at
/// t0 (taken by main between the two).
trait Gate: Send + Sync {
    type Clock: Clock + Send + Sync;
    fn pass(&self) -> impl Future<Output = Self::Clock> + Send;
}

/// The gate of the threads: blocks (the worker runs under [`block_on`] on its own thread).
struct ThreadGate {
    ready: Barrier,
    go: Barrier,
    t0: OnceLock<Instant>,
}

impl Gate for ThreadGate {
    type Clock = ThreadClock;

    async fn pass(&self) -> ThreadClock {
        self.ready.wait();
        self.go.wait();
        ThreadClock(*self.t0.get().expect("t0 is set before the gate opens"))
    }
}

/// The gate of the tasks.
struct TaskGate {
    ready: tokio::sync::Barrier,
    go: tokio::sync::Barrier,
    t0: OnceLock<Instant>,
}

impl Gate for TaskGate {
    type Clock = TaskClock;

    async fn pass(&self) -> TaskClock {
        self.ready.wait().await;
        self.go.wait().await;
        TaskClock(*self.t0.get().expect("t0 is set before the gate opens"))
    }
}

/// A worker's client: its own (a new one for every timed request with `--connection new`), or with
/// `--client-scope shared` the one every worker uses.
pub(crate) enum Held<'a, C> {
    Own(Result<C, ClientError>),
    Shared(&'a Result<C, ClientError>),
}

impl<C> Held<'_, C> {
    fn get(&self) -> &Result<C, ClientError> {
        match self {
            Held::Own(c) => c,
            Held::Shared(c) => c,
        }
    }
}

/// Worker `w`'s request `k` of the plan: a GET of `--url` (the driver's own loop, as it always was), or
/// anything else through [`Driver::send`]: a POST/PUT whose answer is checked against the `/upload` line or
/// the body echoed, a streamed download, the target (w + k) mod T.
async fn request<D: Driver>(
    driver: &D,
    client: &Result<D::Client, ClientError>,
    plan: &Plan,
    w: u32,
    k: u64,
) -> Outcome {
    let client = match client {
        Ok(c) => c,
        Err(e) => return Outcome::Error(e.clone()),
    };
    let whole_get = |method| method == Method::Get && plan.download == Transfer::Whole;
    match plan.target(w, k) {
        None if whole_get(plan.method) => Outcome::of_get(driver.get(client, &plan.url).await),
        None => {
            let mut answer = Answer::new(plan.expect.as_ref(), plan.piece());
            let result = driver.send(client, plan.method, &plan.url, plan.outgoing(), &mut answer).await;
            result.map_or_else(Outcome::Error, |status| answer.outcome(status))
        }
        Some(t) if whole_get(t.method) && t.body.is_none() => Outcome::of_get(driver.get(client, &t.url).await),
        Some(t) => {
            // a target's answer is counted, not compared: the runner knows what each one answers
            let mut answer = Answer::new(None, plan.piece());
            let result = driver.send(client, t.method, &t.url, plan.target_outgoing(t), &mut answer).await;
            result.map_or_else(Outcome::Error, |status| answer.outcome(status))
        }
    }
}

/// [`request`] recording its phases (`--phases`): the same requests through [`Driver::get_phases`] and
/// [`Driver::send_phases`]; the phases are those of a request that got its answer (all 0 otherwise).
async fn request_phases<D: Driver>(
    driver: &D,
    client: &Result<D::Client, ClientError>,
    plan: &Plan,
    w: u32,
    k: u64,
) -> (Outcome, Phases) {
    let client = match client {
        Ok(c) => c,
        Err(e) => return (Outcome::Error(e.clone()), Phases::default()),
    };
    let whole_get = |method| method == Method::Get && plan.download == Transfer::Whole;
    match plan.target(w, k) {
        None if whole_get(plan.method) => get_phases(driver, client, &plan.url).await,
        None => {
            let answer = Answer::new(plan.expect.as_ref(), plan.piece());
            send_phases(driver, client, plan.method, &plan.url, plan.outgoing(), answer).await
        }
        Some(t) if whole_get(t.method) && t.body.is_none() => get_phases(driver, client, &t.url).await,
        Some(t) => {
            let answer = Answer::new(None, plan.piece());
            send_phases(driver, client, t.method, &t.url, plan.target_outgoing(t), answer).await
        }
    }
}

async fn get_phases<D: Driver>(driver: &D, client: &D::Client, url: &str) -> (Outcome, Phases) {
    match driver.get_phases(client, url).await {
        Ok((status, n, phases)) => (Outcome::of_get(Ok((status, n))), phases),
        Err(e) => (Outcome::Error(e), Phases::default()),
    }
}

async fn send_phases<D: Driver>(
    driver: &D,
    client: &D::Client,
    method: Method,
    url: &str,
    body: crate::Outgoing,
    mut answer: Answer<'_>,
) -> (Outcome, Phases) {
    match driver.send_phases(client, method, url, body, &mut answer).await {
        Ok((status, phases)) => (answer.outcome(status), phases),
        Err(e) => (Outcome::Error(e), Phases::default()),
    }
}

/// A timed request: [`request`], or with `phased` (`--phases`) [`request_phases`].
async fn attempt<D: Driver>(
    driver: &D,
    client: &Result<D::Client, ClientError>,
    plan: &Plan,
    w: u32,
    k: u64,
    phased: bool,
) -> (Outcome, Option<Phases>) {
    if !phased {
        return (request(driver, client, plan, w, k).await, None);
    }
    let (outcome, phases) = request_phases(driver, client, plan, w, k).await;
    (outcome, Some(phases))
}

/// One worker, in both modes: its client (or the shared one), K warm-up requests (closed loop), the gate,
/// the timed loop.
async fn worker<D: Driver, G: Gate>(
    driver: &D,
    plan: &Plan,
    co: &ClientOptions,
    gate: &G,
    w: u32,
    shared: Option<&Result<D::Client, ClientError>>,
) -> Record {
    let mut client = match shared {
        Some(c) => Held::Shared(c),
        None => Held::Own(driver.make_client(co)),
    };
    if client.get().is_ok() {
        for k in 0..u64::from(plan.warmup) {
            let _ = request(driver, client.get(), plan, w, k).await; // warmup failures are not measured
        }
    }
    let clock = gate.pass().await;
    let mut rec = timed(driver, &mut client, plan, co, w, &clock).await;
    if let Ok(c) = client.get() {
        rec.tls_version = driver.tls_version(c);
        rec.protocol = driver.protocol(c);
    }
    rec
}

/// With `--client-scope shared`, the one client of every worker, made before any worker starts.
fn shared_client<D: Driver>(
    driver: &D,
    plan: &Plan,
    co: &ClientOptions,
) -> Option<Arc<Result<D::Client, ClientError>>> {
    (plan.scope == ClientScope::Shared).then(|| Arc::new(driver.make_client(co)))
}

/// Worker `w`'s timed loop, on `clock` (ns after t0): closed (N sequential requests), or open (on its
/// schedule; see [`Pacer`]). With `--connection new` every timed request makes a new client first.
pub(crate) async fn timed<D: Driver, C: Clock>(
    driver: &D,
    client: &mut Held<'_, D::Client>,
    plan: &Plan,
    co: &ClientOptions,
    w: u32,
    clock: &C,
) -> Record {
    let new_client = plan.connection == Connection::New;
    let keys = phase_keys(driver, plan);
    let phased = keys.is_some();
    let with_phases = |rec: Record| match &keys {
        Some(k) => rec.with_phases(k.clone()),
        None => rec,
    };
    let Some(open) = plan.open else {
        let Limit::Requests(n) = plan.limit else { unreachable!("--duration needs --rate (checked by Options::plan)") };
        let mut rec = with_phases(Record::new(plan.record, false, n as usize));
        rec.loop_start = clock.now();
        for k in 0..u64::from(n) {
            let start = clock.now();
            if new_client {
                *client = Held::Own(driver.make_client(co)); // drops the previous client and its connection
            }
            // with --phases, the request's phases count when it succeeded
            let (outcome, phases) = attempt(driver, client.get(), plan, w, k, phased).await;
            let end = clock.now();
            let outcome = outcome.within(end.saturating_sub(start), plan.timeout_ns);
            if let (Some(p), Outcome::Ok { .. }) = (phases, &outcome) {
                rec.phases(end.saturating_sub(start), p.entries());
            }
            rec.record(k, None, start, end, outcome);
        }
        rec.loop_end = clock.now();
        return rec;
    };
    let mut pacer = Pacer::new(Schedule::new(&open, plan.workers, w), plan.limit);
    let mut rec = with_phases(Record::new(plan.record, true, pacer.expected(&open, plan.workers)));
    rec.loop_start = clock.now();
    while let Some(intended) = pacer.next_intended() {
        clock.sleep_until(intended).await;
        let start = clock.now();
        if !pacer.admit(intended, start) {
            break;
        }
        if new_client {
            *client = Held::Own(driver.make_client(co));
        }
        let k = pacer.sent() - 1; // admitted: counted
        let (outcome, phases) = attempt(driver, client.get(), plan, w, k, phased).await;
        let end = clock.now();
        pacer.finished(end);
        let outcome = outcome.within(end.saturating_sub(start), plan.timeout_ns);
        if let (Some(p), Outcome::Ok { .. }) = (phases, &outcome) {
            rec.phases(end.saturating_sub(start), p.entries());
        }
        rec.record(k, Some(intended), start, end, outcome);
    }
    rec.loop_end = clock.now();
    (rec.late, rec.missed) = (pacer.late(), pacer.missed());
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
/// its requests, gate and sleeps block, so it is ready at every poll).
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

/// `sync`: W OS threads, each running [`worker`] with its own client (made with `co`), or with
/// `--client-scope shared` all with one client made here first.
pub fn run_threads<D: Driver>(driver: D, plan: &Plan, co: &ClientOptions) -> Result<Group, String> {
    let shared = shared_client(&driver, plan, co);
    let parties = plan.workers as usize + 1;
    let gate = Arc::new(ThreadGate { ready: Barrier::new(parties), go: Barrier::new(parties), t0: OnceLock::new() });
    let (driver, plan_, co) = (Arc::new(driver), Arc::new(plan.clone()), Arc::new(co.clone()));
    let mut handles = Vec::with_capacity(plan.workers as usize);
    for w in 0..plan.workers {
        let (d, p, c, g, s) = (driver.clone(), plan_.clone(), co.clone(), gate.clone(), shared.clone());
        let spawned = std::thread::Builder::new().name(format!("worker-{w}")).spawn(move || {
            crate::timer::precise_sleeps(); // the open loop's waits: std::thread::sleep on time
            block_on(worker(&*d, &p, &c, &*g, w, s.as_deref()))
        });
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                // The threads already started wait at the barrier forever; nothing sensible to report.
                return Err(format!("cannot start worker thread {w}: {e}"));
            }
        }
    }
    gate.ready.wait();
    let (t0, cpu0) = (Instant::now(), cpu_time());
    let _ = gate.t0.set(t0);
    gate.go.wait();
    let mut records = Vec::with_capacity(handles.len());
    for h in handles {
        records.push(h.join().map_err(|_| "a worker thread panicked".to_string())?);
    }
    let wall = ns(t0.elapsed());
    Ok(Group { wall_ns: wall, cpu_ns: cpu_since(cpu0), records, phase_keys: phase_keys(&*driver, plan) })
}

/// `async`: W tokio tasks on one multi-thread runtime, each running [`worker`] with its own client (made
/// with `co`), or with `--client-scope shared` all with one client made on the runtime first.
pub fn run_tasks<D: Driver>(driver: D, plan: &Plan, co: &ClientOptions) -> Result<Group, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    rt.block_on(async {
        let parties = plan.workers as usize + 1;
        let gate = Arc::new(TaskGate {
            ready: tokio::sync::Barrier::new(parties),
            go: tokio::sync::Barrier::new(parties),
            t0: OnceLock::new(),
        });
        let shared = shared_client(&driver, plan, co);
        let (driver, plan_, co) = (Arc::new(driver), Arc::new(plan.clone()), Arc::new(co.clone()));
        let handles: Vec<_> = (0..plan.workers)
            .map(|w| {
                let (d, p, c, g, s) = (driver.clone(), plan_.clone(), co.clone(), gate.clone(), shared.clone());
                tokio::spawn(async move { worker(&*d, &p, &c, &*g, w, s.as_deref()).await })
            })
            .collect();
        gate.ready.wait().await;
        let (t0, cpu0) = (Instant::now(), cpu_time());
        let _ = gate.t0.set(t0);
        gate.go.wait().await;
        let mut records = Vec::with_capacity(handles.len());
        for h in handles {
            records.push(h.await.map_err(|e| format!("worker task failed: {e}"))?);
        }
        let wall = ns(t0.elapsed());
        Ok(Group { wall_ns: wall, cpu_ns: cpu_since(cpu0), records, phase_keys: phase_keys(&*driver, plan) })
    })
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "run_bodies_tests.rs"]
mod bodies_tests;
