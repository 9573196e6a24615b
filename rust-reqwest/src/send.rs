//! Sending one request on a reqwest client: after its turn ([`crate::limit`]), again when the connection it
//! went on was stale or, over HTTP/3, when the server did not process it; and the runtime's catch-up with
//! the pool's connections before each ([`settle_idle_connections`]).

use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::header::HeaderMap;
use reqwest::{Method, Url};

use crate::{classify, error, limit, protocol, ClientError};

/// [`crate::Client::send`] on `http`; `timeout` (the request's total deadline, if it has its own) overrides the
/// client's `client_timeout`. The request first waits for its turn as `shape` says ([`crate::limit`]: a permit of
/// its origin, which the response then holds; the origin's first request).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn send_on(
    http: &reqwest::Client,
    shape: limit::Shape<'_>,
    client_timeout: Option<Duration>,
    method: Method,
    url: Url,
    headers: HeaderMap,
    body: Option<Bytes>,
    timeout: Option<Duration>,
) -> Result<reqwest::Response, ClientError> {
    let started = Instant::now();
    let (permit, _first) = shape.enter(&url, timeout.or(client_timeout)).await?;
    let head = method.clone();
    let mut resp = send_unlimited(http, shape.http3, client_timeout, method, url, headers, body, timeout, started)
        .await
        .map_err(|e| shape.explain(e))?;
    if shape.http3 {
        resp = protocol::h3_checked(resp, &head);
    }
    if let Some(p) = permit {
        resp.extensions_mut().insert(p);
    }
    Ok(resp)
}

#[allow(clippy::too_many_arguments)]
async fn send_unlimited(
    http: &reqwest::Client,
    http3: bool,
    client_timeout: Option<Duration>,
    method: Method,
    url: Url,
    headers: HeaderMap,
    body: Option<Bytes>,
    timeout: Option<Duration>,
    started: Instant,
) -> Result<reqwest::Response, ClientError> {
    settle_idle_connections().await;
    let build = |timeout: Option<Duration>| {
        let mut rb = request_builder(http, http3, method.clone(), url.clone()).headers(headers.clone());
        if let Some(b) = &body {
            rb = rb.body(b.clone());
        }
        if let Some(t) = timeout {
            rb = rb.timeout(t);
        }
        rb
    };
    // What is left of the total timeout (`Some(None)`: there is none), or `None` once it has expired.
    let left = || match timeout.or(client_timeout) {
        None => Some(None),
        Some(total) => Some(Some(total.saturating_sub(started.elapsed()))).filter(|l| l != &Some(Duration::ZERO)),
    };
    let exchange = |rb: reqwest::RequestBuilder| crate::phases::exchange(&url, http3, rb.send());
    let mut sent = exchange(build(timeout)).await;
    // HTTP/3: a request the server did not process (h3 refused it after the server's GOAWAY, the server
    // rejected it or closed the connection gracefully without answering it: error::is_unprocessed_h3) goes
    // again whatever its method. reqwest's pool hands a connection with a GOAWAY out until the server closes it
    // (a few round trips later), so the request goes again every GOAWAY_PAUSE until a new connection takes
    // it, for at most GOAWAY_WAIT and within its timeout.
    let goaway = Instant::now();
    while let Err(e) = &sent {
        if !error::is_unprocessed_h3(e) || goaway.elapsed() >= GOAWAY_WAIT {
            break;
        }
        let Some(l) = left().filter(|l| l.is_none_or(|l| l > GOAWAY_PAUSE)) else { break };
        tokio::time::sleep(GOAWAY_PAUSE).await;
        sent = exchange(build(l.map(|l| l - GOAWAY_PAUSE))).await;
    }
    match sent {
        Ok(resp) => Ok(resp),
        Err(e) if method.is_idempotent() && error::is_stale_connection(&e) => match left() {
            None => Err(classify(&e)),
            Some(l) => exchange(build(l)).await.map_err(|e| classify(&e)),
        },
        Err(e) => Err(classify(&e)),
    }
}

/// How often a request the server did not process is sent again over HTTP/3, and for how long ([`send_unlimited`]).
const GOAWAY_PAUSE: Duration = Duration::from_millis(5);
const GOAWAY_WAIT: Duration = Duration::from_secs(2);

/// A request of `http`: with HTTP/3 it says so, as reqwest 0.13 sends a request over QUIC only when its version
/// is HTTP/3 (`http3_prior_knowledge` alone leaves requests on TCP).
pub(crate) fn request_builder(
    http: &reqwest::Client,
    http3: bool,
    method: Method,
    url: Url,
) -> reqwest::RequestBuilder {
    let rb = http.request(method, url);
    if http3 {
        rb.version(reqwest::Version::HTTP_3)
    } else {
        rb
    }
}

/// How a request of [`crate::BlockingClient::run_owned`] lets the runtime catch up first ([`settle_idle_connections`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Settle {
    /// The runtime ran a moment ago ([`crate::blocking::SETTLE_AFTER`]): nothing to catch up with.
    Skip,
    /// The request is a task of its own, behind any task already queued: one yield is enough.
    Once,
}

tokio::task_local! {
    /// Set by [`crate::BlockingClient::run_owned`] around the request it spawns.
    pub(crate) static SETTLE: Settle;
}

/// Let the runtime catch up with what happened on the pooled connections while it was not running,
/// before the pool hands one out.
///
/// A keep-alive connection that the server closed while it sat idle is only known to be closed once its
/// hyper connection task has read the server's FIN (EOF while idle closes it, and the pool then discards
/// it). That needs the runtime to poll its I/O driver and then run the task. A multi-thread runtime does
/// so on its own, as soon as the FIN arrives. A current-thread runtime only runs inside `block_on`,
/// which is how [`crate::BlockingClient`] (and a caller's `block_on(client.get(..))`) uses it: between two
/// requests nobody polls, the pool still counts the dead connection as idle and open, the request is
/// written into it, and the server's kernel answers with a reset. hyper then reports "connection closed
/// before message completed" after the request may have been sent, which is only safe to retry for
/// idempotent methods: a POST or PATCH after a pause longer than the server's keep-alive timeout would fail.
///
/// So on a current-thread runtime, yield twice before checking a connection out: the first yield makes
/// the scheduler poll the I/O driver (recording the FIN and waking the connection's task); the second
/// lets that task run (it reads EOF and closes, so the pool discards the connection, or, if the request
/// was already queued to it, hands the unsent request back and hyper-util sends it on a new connection).
/// Either way a connection found closed before anything was sent on it is never an error, for every
/// method. What remains is the unavoidable race of a FIN still in flight while the request is written;
/// that is what the idempotent re-send in [`crate::Client::send`] covers. Cost: two `epoll_wait(0)` per
/// request. A request that [`crate::BlockingClient::run_owned`] spawns ([`SETTLE`]) yields once (the
/// connection tasks the first yield wakes run before it), and not at all when the runtime ran less than
/// [`crate::blocking::SETTLE_AFTER`] ago.
pub(crate) async fn settle_idle_connections() {
    let current_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread);
    if !current_thread {
        return;
    }
    match SETTLE.try_with(|s| *s) {
        Ok(Settle::Skip) => {}
        Ok(Settle::Once) => tokio::task::yield_now().await,
        Err(_) => {
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
        }
    }
}
