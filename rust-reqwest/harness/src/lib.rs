//! The clientbench driver harness for Rust clients (docs/raw-format.md), the counterpart of
//! cpp-beast/harness/harness.{hpp,cpp} and python/clientbench/harness.py: the contract's flags, W
//! workers, the ready barrier then t0, the timed loop, failure accounting and the `clientbench.raw/1`
//! document. A driver supplies only how to make a worker's client and how to do one GET with it
//! ([`Driver`]); the binary picks the mode.
//!
//! * [`run_tasks`] (`async`): W tokio tasks on one multi-thread runtime.
//! * [`run_threads`] (`sync`): W OS threads.
//!
//! Both run the same worker (see [`run`]): it makes its client, does K untimed warm-up requests, waits at
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
//!
//! * [`options`] — the flags and the clients' options made from them.
//! * [`run`] — the workers, the gate and the measurements.
//! * [`document`] — the document, printed by [`finish`].

pub mod document;
pub mod options;
pub mod run;

use std::future::Future;

use clap::ValueEnum;
use reqwest_bench::{ClientError, ClientOptions};

pub use document::{finish, SCHEMA};
pub use options::{client_options, Connection, Options};
pub use run::{block_on, run_tasks, run_threads, Group};

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

/// `client.language`, `client.library`, `client.library_version` of the document.
#[derive(Debug, Clone, Copy)]
pub struct ClientInfo {
    pub language: &'static str,
    pub library: &'static str,
    pub library_version: &'static str,
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
