//! The clientbench driver harness for Rust clients (docs/raw-format.md), the counterpart of
//! cpp-beast/harness/ and python/clientbench/harness.py: the contract's flags, W workers, the ready barrier
//! then t0, the timed loop (closed, or open on a schedule), failure accounting and the
//! `clientbench.raw/4` document. A driver supplies only how to make a worker's client, how to do one GET
//! and one POST/PUT with it ([`Driver`]); the binary picks the mode.
//!
//! * [`run_tasks`] (`async`): W tokio tasks on one multi-thread runtime.
//! * [`run_threads`] (`sync`): W OS threads.
//!
//! Both run the same worker (see [`run`]): it makes its client, does K untimed warm-up requests, waits at
//! the start gate, then runs its timed loop: closed (N sequential requests), or with `--rate` open, on the
//! worker's schedule of intended start times ([`schedule`]: uniform phases or seeded Poisson arrivals;
//! late starts counted and their latency charged from the intended time; with `--duration` the requests
//! that could not start before D are missed, so a run stops by itself at D plus one timeout). With
//! `--connection new` a new client (hence connection) is made inside every timed request. The worker is an
//! `async fn`, so that one loop serves both modes: a task awaits it (and sleeps on tokio's timer), a thread
//! drives it with [`block_on`] (a sync driver's request future is ready at its first poll, a thread's sleep
//! blocks, so that costs one poll per request and no allocation).
//!
//! A POST/PUT sends the same `--body-size` bytes every time (`abc...`, one shared buffer, or with `--upload
//! stream` chunks of `--chunk-size` cut from the pattern as the client takes them: [`body`]) and checks every
//! response, chunk by chunk, against the `/upload` line of that body, computed once, or the body itself (an
//! echo), whichever has the answer's length (a difference is a failure, `Error: upload digest mismatch:
//! ...`). With `--download stream` the answer is taken in pieces of at most `--chunk-size`, each counted and
//! dropped. With `--targets` worker w's request k goes to target (w + k) mod T instead ([`targets`]; its
//! answer is counted, not compared). A GET whose answer is read whole is the driver's [`Driver::get`], the
//! hot loop the benchmark measures, as it always was; everything else goes through [`Driver::send`]. With `--record histogram` the latencies of the
//! successful requests go into HdrHistograms (3 significant digits) instead of per-request arrays
//! ([`record`]). With `--phases` (raw/4) the driver's [`Driver::get_phases`] / [`Driver::send_phases`] do the
//! timed requests, and each worker sums the phases of its successful ones (`workers[i].phases`), under the keys
//! the driver names ([`Driver::phase_keys`], `client.phases`); without it nothing of that runs.
//!
//! For `https://` URLs, `--ca-file` / `--insecure` reach every client through [`ClientOptions`] (made once,
//! before any worker starts, by [`prepare`]: a CA file that cannot be used is bad usage), and the
//! negotiated TLS version of worker 0's client is reported as `client.tls` (`{"version": "TLSv1.3",
//! "cipher": null}`: reqwest does not tell the cipher suite; absent for `http://`). `--http 2` asks the
//! clients for HTTP/2 (ALPN over `https://`, prior knowledge over `http://`), `--http 3` for HTTP/3 over QUIC
//! (`https://` only: an `http://` URL or target is bad usage), and the HTTP version of worker 0's client's
//! most recent response is `client.protocol`.
//!
//! With `--client-scope shared` one client is made before the workers start (so before the gate) and every
//! worker sends through it; its warm-up is still K requests per worker, from the workers. A driver that
//! cannot do what is asked says so ([`Driver::unsupported`]) and exits 3 ([`unsupported`]).
//!
//! The gate is two barriers of W+1 parties: every worker arrives at `ready` when its client and warm-up
//! are done; main, once all have arrived, takes t0 (and the process CPU time), then joins `go`, which
//! releases them with t0 (their clock and schedule start there). So t0 is before every worker's first
//! timed request, and `wall_ns` (t0 until the last worker has finished) contains every timed loop and no
//! start-up.
//!
//! * [`options`] — the flags, their checks, and the [`Plan`] and clients' options made from them.
//! * `usage` — the usage errors in the wording of the contract's declaration, and the flags' value parsers.
//! * [`body`] — request bodies (whole or streamed) and the check of their answers.
//! * [`targets`] — the targets file.
//! * [`schedule`] — the open loop's intended times and bookkeeping, and the [`Clock`] it runs on.
//! * [`run`] — the workers, the gate and the measurements.
//! * [`record`] — what a worker keeps of each request; the histogram buckets.
//! * [`document`] — the document, printed by [`finish`].

pub mod body;
pub mod document;
pub mod options;
pub mod record;
pub mod run;
pub mod schedule;
pub mod targets;
mod timer;
mod usage;

use std::future::Future;

use clap::ValueEnum;
use reqwest_bench::{ClientError, ClientOptions, Phases};

pub use body::{Answer, Chunks, Outgoing};
/// The chunk type of bodies.
pub use bytes::Bytes;
pub use document::{finish, SCHEMA};
pub use options::{
    prepare, Arrival, ClientScope, Connection, HttpVersion, Method, Options, Plan, RecordMode, Transfer,
};
pub use run::{block_on, run_tasks, run_threads, Group};
pub use schedule::{Clock, Limit, Open, Pacer, Schedule};
pub use usage::parse_args;

/// What a driver measures: how to make a worker's client, and how to do one GET and any other request with it.
///
/// A blocking client does the request inside the method and returns a ready future
/// (`std::future::ready`).
pub trait Driver: Send + Sync + 'static {
    type Client: Send + Sync;

    /// A worker's client, with the run's timeout and TLS settings.
    fn make_client(&self, options: &ClientOptions) -> Result<Self::Client, ClientError>;

    /// GET `url`: `(status, body bytes read)` once the whole body has been read; any transport or protocol
    /// failure is an error (a non-2xx status is not).
    fn get(&self, client: &Self::Client, url: &str) -> impl Future<Output = Result<(u16, u64), ClientError>> + Send;

    /// `method` `url` with `body` (none, one buffer, or chunks to stream as the client takes them), giving
    /// every chunk of the response body to `answer` as the client offers it (which counts and checks it),
    /// never keeping it: the status once the whole body has been read; any transport or protocol failure
    /// is an error (a non-2xx status is not). Every request but [`Driver::get`]'s: uploads, a streamed
    /// download, targets.
    fn send(
        &self,
        client: &Self::Client,
        method: Method,
        url: &str,
        body: Outgoing,
        answer: &mut Answer<'_>,
    ) -> impl Future<Output = Result<u16, ClientError>> + Send;

    /// With `--phases`: the keys of the phases this driver records for `plan`'s requests (`client.phases`, in the
    /// contract's order: e.g. `connect+tls`, `send+wait`, `receive`). None (the default): it sees no phase, and
    /// the document has no `phases` keys; [`Driver::get_phases`] and [`Driver::send_phases`] are then never called.
    fn phase_keys(&self, _plan: &Plan) -> Vec<&'static str> {
        Vec::new()
    }

    /// [`Driver::get`], recording the request's phases (each of its [`Phases::entries`] under one of
    /// [`Driver::phase_keys`]). Called instead of `get` for the timed requests with `--phases`.
    fn get_phases(
        &self,
        client: &Self::Client,
        url: &str,
    ) -> impl Future<Output = Result<(u16, u64, Phases), ClientError>> + Send {
        let get = self.get(client, url);
        async move { get.await.map(|(status, n)| (status, n, Phases::default())) }
    }

    /// [`Driver::send`], recording the request's phases (as [`Driver::get_phases`]).
    fn send_phases(
        &self,
        client: &Self::Client,
        method: Method,
        url: &str,
        body: Outgoing,
        answer: &mut Answer<'_>,
    ) -> impl Future<Output = Result<(u16, Phases), ClientError>> + Send {
        let send = self.send(client, method, url, body, answer);
        async move { send.await.map(|status| (status, Phases::default())) }
    }

    /// The TLS version the client negotiated (`TLSv1.3`), if it can tell; reported as `client.tls`.
    fn tls_version(&self, _client: &Self::Client) -> Option<&'static str> {
        None
    }

    /// The HTTP version of the client's most recent response (`HTTP/1.1`, `HTTP/2`, `HTTP/3`), if it can tell;
    /// reported as `client.protocol`.
    fn protocol(&self, _client: &Self::Client) -> Option<&'static str> {
        None
    }

    /// What this driver cannot do at all, if anything (`HTTP/3`, `a shared client`): the run is then not
    /// made, and the driver exits 3 with `unsupported: <what>` ([`unsupported`]).
    fn unsupported(&self, _options: &Options) -> Option<String> {
        None
    }
}

/// Exit status of a driver asked for what it cannot do (docs/raw-format.md): nothing on stdout, one line
/// `unsupported: <what>` on stderr.
pub const EXIT_UNSUPPORTED: u8 = 3;

/// [`Driver::unsupported`]'s answer for `options`, printed: `Err(exit status 3)` when the driver cannot
/// run them.
pub fn unsupported<D: Driver>(driver: &D, options: &Options) -> Result<(), std::process::ExitCode> {
    match driver.unsupported(options) {
        Some(what) => {
            eprintln!("unsupported: {what}");
            Err(std::process::ExitCode::from(EXIT_UNSUPPORTED))
        }
        None => Ok(()),
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

/// `client.language`, `client.library`, `client.library_version` of the document.
#[derive(Debug, Clone, Copy)]
pub struct ClientInfo {
    pub language: &'static str,
    pub library: &'static str,
    pub library_version: &'static str,
}

/// The canonical failure reason of a GET, the same in every language's harness: `status <code>` for a
/// response other than 200, otherwise `<Class>: <message>` ([`ClientError`]'s `Display`).
pub fn failure_reason(result: &Result<(u16, u64), ClientError>) -> Option<String> {
    record::Outcome::of_get(result.clone()).failure().map(|(reason, _)| reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_reasons_are_canonical() {
        assert_eq!(failure_reason(&Ok((200, 5))), None);
        assert_eq!(failure_reason(&Ok((503, 0))).as_deref(), Some("status 503"));
        assert_eq!(failure_reason(&Ok((204, 0))).as_deref(), Some("status 204"));
        let timeout = ClientError::Timeout("request timed out".into());
        assert_eq!(failure_reason(&Err(timeout)).as_deref(), Some("TimeoutError: request timed out"));
        let refused = ClientError::Connection(reqwest_bench::ConnectionKind::Refused, "connection refused".into());
        assert_eq!(failure_reason(&Err(refused)).as_deref(), Some("ConnectionError: connection refused"));
        let tls = ClientError::Tls("invalid peer certificate: UnknownIssuer".into());
        assert_eq!(failure_reason(&Err(tls)).as_deref(), Some("TLSError: invalid peer certificate: UnknownIssuer"));
    }
}
