//! [`BlockingClient`]: a [`Client`] on a private current-thread tokio runtime, for synchronous callers.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use reqwest::Method;

use crate::{Client, ClientError, ClientOptions, Response, CANCEL_POLL};

/// A [`Client`] with its own current-thread tokio runtime, for synchronous callers.
///
/// It is `Send + Sync`: several threads may call it at once (tokio lets several threads `block_on` one
/// current-thread runtime; one of them drives the I/O for all), each request then using its own
/// connection from the shared pool over HTTP/1.1, a stream of the one connection over HTTP/2. hyper hands
/// an HTTP/1.1 connection back to the pool from a task, which only the thread driving the runtime runs:
/// a thread that sends its next request before that finds no idle connection and opens one, so W threads
/// sharing a client open more than W connections (4 threads x 300 requests opened 6 to 9, 8 threads 13 to
/// 17), which the pool then keeps and reuses; ClientOptions's max_connections bounds them.
pub struct BlockingClient {
    // field order: the client (and its pooled connections) goes before the runtime
    client: Client,
    runtime: Option<tokio::runtime::Runtime>,
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
        Ok(BlockingClient { client, runtime: Some(runtime) })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Drive `fut` to completion on the private runtime, calling `cancel` every [`CANCEL_POLL`]; when
    /// it returns true the request is dropped (its connection is closed) and `Cancelled` returned.
    pub fn run<T, F, C>(&self, fut: F, mut cancel: C) -> Result<T, ClientError>
    where
        F: Future<Output = Result<T, ClientError>>,
        C: FnMut() -> bool,
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(ClientError::Usage(
                "a blocking client cannot be used from inside an async (tokio) runtime".into(),
            ));
        }
        let Some(rt) = self.runtime.as_ref() else {
            return Err(ClientError::Usage("client is closed".into()));
        };
        rt.block_on(async {
            let mut fut = std::pin::pin!(fut);
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + CANCEL_POLL, CANCEL_POLL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    biased;
                    out = &mut fut => return out,
                    _ = tick.tick() => {
                        if cancel() {
                            return Err(ClientError::Cancelled);
                        }
                    }
                }
            }
        })
    }

    /// Blocking [`Client::get`]: `(status, body bytes)`.
    pub fn get<C: FnMut() -> bool>(&self, url: &str, cancel: C) -> Result<(u16, u64), ClientError> {
        self.run(self.client.get(url), cancel)
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
        self.run(self.client.send_body(method, url, body, keep), cancel)
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
        self.run(self.client.fetch(method, url, headers, body), cancel)
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
