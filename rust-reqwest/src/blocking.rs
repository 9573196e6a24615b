//! [`BlockingClient`]: a [`Client`] on a private current-thread tokio runtime, for synchronous callers.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::Method;

use crate::send::{Settle, SETTLE};
use crate::{Client, ClientError, ClientOptions, Response, CANCEL_POLL};

/// A request that starts less than this after the client's runtime last ran sends without first letting the
/// runtime look for connections the server closed ([`crate::send`]'s `settle_idle_connections`): the
/// runtime polled them a moment ago. The rule of the Beast client's idle check (a pooled connection looked at
/// only after 10 ms), and the same risk: a server that closes a connection within that moment of its last
/// answer, without saying so, fails a POST sent on it (an idempotent request is sent again).
pub const SETTLE_AFTER: Duration = Duration::from_millis(10);

/// A [`Client`] with its own current-thread tokio runtime, for synchronous callers.
///
/// It is `Send + Sync`: several threads may call it at once (tokio lets several threads `block_on` one
/// current-thread runtime; one of them drives the I/O for all), each request then using its own
/// connection from the shared pool over HTTP/1.1, a stream of the one connection over HTTP/2. hyper hands
/// an HTTP/1.1 connection back to the pool from a task, which only the thread driving the runtime runs:
/// a thread that sends its next request before that finds no idle connection and opens one, so W threads
/// sharing a client open more than W connections (4 threads x 300 requests opened 6 to 9, 8 threads 13 to
/// 17), which the pool then keeps and reuses; ClientOptions's max_connections bounds them.
///
/// The calling thread drives the runtime itself (no hand-off to another thread). [`BlockingClient::run_owned`]
/// (every request method here) runs the request as a task of the runtime, so that the runtime runs it,
/// hyper's connection task and the task that puts the connection back in the pool in one round of its
/// scheduler: a GET over a kept-alive HTTP/1.1 connection costs `writev`, `recvfrom` and two `epoll_wait`
/// (one waiting for the answer, one that the scheduler makes before it polls the caller's `block_on` future
/// again). [`BlockingClient::run`] (a future that borrows) is polled by `block_on` itself and costs two more.
pub struct BlockingClient {
    // field order: the client (and its pooled connections) goes before the runtime
    client: Arc<Client>,
    runtime: Option<tokio::runtime::Runtime>,
    /// When a call last finished running the runtime: nanoseconds since [`epoch`], 0 for never.
    last_run: AtomicU64,
}

/// The origin of [`BlockingClient`]'s `last_run` clock.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn nanos_since_epoch() -> u64 {
    // never 0 (0 is "never run"); u64 nanoseconds last 584 years
    (epoch().elapsed().as_nanos() as u64).max(1)
}

impl BlockingClient {
    /// A blocking client with the system's roots for `https://`.
    pub fn new(timeout: Duration) -> Result<Self, ClientError> {
        BlockingClient::with_options(&ClientOptions::new(timeout))
    }

    pub fn with_options(options: &ClientOptions) -> Result<Self, ClientError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ClientError::Usage(format!("cannot start a tokio runtime: {e}")))?;
        let client = {
            let _guard = runtime.enter();
            Client::with_options(options)?
        };
        Ok(BlockingClient { client: Arc::new(client), runtime: Some(runtime), last_run: AtomicU64::new(0) })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The client, for a future that owns it ([`BlockingClient::run_owned`]).
    pub fn client_arc(&self) -> Arc<Client> {
        self.client.clone()
    }

    fn runtime(&self) -> Result<&tokio::runtime::Runtime, ClientError> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(ClientError::Usage(
                "a blocking client cannot be used from inside an async (tokio) runtime".into(),
            ));
        }
        self.runtime.as_ref().ok_or_else(|| ClientError::Usage("client is closed".into()))
    }

    /// Whether the runtime ran less than [`SETTLE_AFTER`] ago.
    fn ran_lately(&self) -> bool {
        let last = self.last_run.load(Ordering::Relaxed);
        last != 0 && nanos_since_epoch().saturating_sub(last) < SETTLE_AFTER.as_nanos() as u64
    }

    fn note_run(&self) {
        self.last_run.store(nanos_since_epoch(), Ordering::Relaxed);
    }

    /// Drive `fut` to completion on the private runtime, calling `cancel` every [`CANCEL_POLL`]; when
    /// it returns true the request is dropped (its connection is closed) and `Cancelled` returned.
    /// `block_on` polls `fut` itself, which costs two more `epoll_wait` per request than
    /// [`BlockingClient::run_owned`]: use that one for a future that can be spawned.
    pub fn run<T, F, C>(&self, fut: F, cancel: C) -> Result<T, ClientError>
    where
        F: Future<Output = Result<T, ClientError>>,
        C: FnMut() -> bool,
    {
        let rt = self.runtime()?;
        let out = rt.block_on(async {
            let mut fut = std::pin::pin!(fut);
            until_cancelled(&mut fut, cancel).await.unwrap_or(Err(ClientError::Cancelled))
        });
        self.note_run();
        out
    }

    /// [`BlockingClient::run`] for a future that owns what it uses: it runs as a task of the runtime, which
    /// the calling thread drives (see the type's docs); a cancelled one is aborted, and dropped before this
    /// returns. A panic in it is resumed here.
    pub fn run_owned<T, F, C>(&self, fut: F, cancel: C) -> Result<T, ClientError>
    where
        F: Future<Output = Result<T, ClientError>> + Send + 'static,
        T: Send + 'static,
        C: FnMut() -> bool,
    {
        let rt = self.runtime()?;
        // a task runs after the ones already queued, so one yield of it lets the connection tasks run first
        let settle = if self.ran_lately() { Settle::Skip } else { Settle::Once };
        let out = rt.block_on(async {
            // boxed first: the task then holds a pointer, not a copy of the whole future's state
            let mut task = tokio::spawn(SETTLE.scope(settle, Box::pin(fut)));
            match until_cancelled(&mut task, cancel).await {
                Some(Ok(out)) => out,
                Some(Err(e)) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Some(Err(_)) => Err(ClientError::Cancelled),
                None => {
                    task.abort();
                    let _ = task.await; // dropped now, its connection closed
                    Err(ClientError::Cancelled)
                }
            }
        });
        self.note_run();
        out
    }

    /// Blocking [`Client::get`]: `(status, body bytes)`.
    pub fn get<C: FnMut() -> bool>(&self, url: &str, cancel: C) -> Result<(u16, u64), ClientError> {
        let (client, url) = (self.client_arc(), url.to_owned());
        self.run_owned(async move { client.get(&url).await }, cancel)
    }

    /// Blocking [`Client::get_phases`]: `(status, body bytes, phases)`.
    pub fn get_phases<C: FnMut() -> bool>(
        &self,
        url: &str,
        cancel: C,
    ) -> Result<(u16, u64, crate::Phases), ClientError> {
        let (client, url) = (self.client_arc(), url.to_owned());
        self.run_owned(async move { client.get_phases(&url).await }, cancel)
    }

    /// Blocking [`Client::send_body`].
    pub fn send_body<C: FnMut() -> bool>(
        &self,
        method: Method,
        url: &str,
        body: Bytes,
        keep: usize,
        cancel: C,
    ) -> Result<(u16, u64, Bytes), ClientError> {
        let (client, url) = (self.client_arc(), url.to_owned());
        self.run_owned(async move { client.send_body(method, &url, body, keep).await }, cancel)
    }

    /// Blocking [`Client::fetch`].
    pub fn fetch<C: FnMut() -> bool>(
        &self,
        method: &str,
        url: &str,
        headers: &[(String, String)],
        body: Option<Bytes>,
        cancel: C,
    ) -> Result<Response, ClientError> {
        let (client, method, url, headers) = (self.client_arc(), method.to_owned(), url.to_owned(), headers.to_vec());
        self.run_owned(async move { client.fetch(&method, &url, &headers, body).await }, cancel)
    }
}

/// `fut`'s output, or `None` as soon as `cancel` (called every [`CANCEL_POLL`]) returns true.
async fn until_cancelled<F, C>(fut: &mut F, mut cancel: C) -> Option<F::Output>
where
    F: Future + Unpin,
    C: FnMut() -> bool,
{
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + CANCEL_POLL, CANCEL_POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            biased;
            out = &mut *fut => return Some(out),
            _ = tick.tick() => {
                if cancel() {
                    return None;
                }
            }
        }
    }
}

impl Drop for BlockingClient {
    fn drop(&mut self) {
        // Never block in drop (e.g. on a DNS lookup still running on the blocking pool).
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
