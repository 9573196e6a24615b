//! What the client adds to reqwest's pool, per origin (scheme, host, port).
//!
//! [`Limiter`], [`crate::ClientOptions::max_connections`]: reqwest's pool has no bound on the connections it opens (its
//! `pool_max_idle_per_host` bounds only the idle ones), so the client bounds the requests in flight to each
//! origin (scheme, host, port) instead. A request takes a [`Permit`] of its origin before it is sent and
//! keeps it, inside its response, until the response is dropped (its body read to the end, or given up).
//! Over HTTP/1.1 a connection carries one request at a time, so no more than `max` connections to an origin
//! are ever busy; with the idle ones bounded by the same `max`, the pool holds at most `max` connections
//! to it once it settles (hyper may finish a connection it started for a request that then got a pooled
//! one first: that one joins the idle ones, and the idle bound closes the surplus). Over HTTP/2 every
//! request to an origin shares one connection, and `max` bounds the streams in flight on it.
//!
//! [`FirstContact`], with [`crate::Http2::Alpn`]: reqwest learns that an origin speaks HTTP/2 only when a
//! connection's TLS handshake picks `h2`, and until then every request that finds no pooled connection
//! opens one of its own, so W requests sent at once to a new origin open W connections, all of them HTTP/2
//! (hyper-util pools each). The first request to an origin therefore goes alone: the others wait until it
//! has its response head (or has failed), then find its connection in the pool if it is HTTP/2, or open
//! their own if it is HTTP/1.1 (busy until its body is read), as a browser waits for a connection it is
//! opening to an origin before opening more. With prior knowledge hyper-util does this itself.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Url;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::ClientError;

/// How many times the task that gives a permit back yields first (see [`Held`]).
const RELEASE_YIELDS: usize = 2;

/// Origins remembered before the ones nobody uses are forgotten.
const ORIGINS_KEPT: usize = 64;

type Origin = (String, String, u16);

/// The in-flight bound of one client, per origin.
#[derive(Debug)]
pub struct Limiter {
    max: usize,
    /// The longest a request waits for a permit (the client's connect timeout: waiting for a connection
    /// is part of getting one); the request's total timeout, when shorter, bounds it too.
    wait: Option<Duration>,
    origins: Mutex<HashMap<Origin, Arc<Semaphore>>>,
}

/// A request's right to one of its origin's connections, held by its response (in its extensions) until
/// the response is dropped.
#[derive(Clone, Debug)]
pub struct Permit(#[allow(dead_code)] Arc<Held>);

impl Permit {
    fn new(p: OwnedSemaphorePermit) -> Permit {
        Permit(Arc::new(Held(Some(p))))
    }
}

/// The semaphore's permit, given back late: hyper hands an HTTP/1.1 connection back to the pool from a
/// task of its own, woken as the response's body ends, so a request let through at once would often find
/// no idle connection and open one more than `max`. Given back from a task spawned behind hyper's (after
/// two yields), the permit usually lets the next request through once the connection is back in the pool
/// (not always: threads sharing a current-thread runtime, or a multi-thread one, run tasks in no fixed
/// order; the idle bound then closes the surplus).
#[derive(Debug)]
struct Held(Option<OwnedSemaphorePermit>);

impl Drop for Held {
    fn drop(&mut self) {
        let Some(p) = self.0.take() else { return };
        // outside a runtime (a response dropped by a thread of its own) there is no task to wait for
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                for _ in 0..RELEASE_YIELDS {
                    tokio::task::yield_now().await;
                }
                drop(p);
            });
        }
    }
}

impl Limiter {
    /// At most `max` (>= 1) requests in flight per origin; a request waits at most `wait` for its turn.
    pub fn new(max: usize, wait: Option<Duration>) -> Limiter {
        Limiter { max: max.max(1), wait, origins: Mutex::new(HashMap::new()) }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    fn semaphore(&self, origin: Origin) -> Arc<Semaphore> {
        let mut origins = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        if origins.len() >= ORIGINS_KEPT && !origins.contains_key(&origin) {
            // forget the origins with no request in flight (their semaphore is back to `max` permits and
            // nobody waits on it: the map holds the only reference)
            origins.retain(|_, s| Arc::strong_count(s) > 1 || s.available_permits() < self.max);
        }
        origins.entry(origin).or_insert_with(|| Arc::new(Semaphore::new(self.max))).clone()
    }

    /// Wait (at most the limiter's wait, and `left`) for a permit of `url`'s origin.
    pub async fn acquire(&self, url: &Url, left: Option<Duration>) -> Result<Permit, ClientError> {
        let semaphore = self.semaphore(origin(url));
        if let Ok(p) = semaphore.clone().try_acquire_owned() {
            return Ok(Permit::new(p));
        }
        let wait = match (self.wait, left) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let acquire = semaphore.acquire_owned();
        let permit = match wait {
            None => acquire.await,
            Some(d) => tokio::time::timeout(d, acquire).await.map_err(|_| {
                ClientError::Timeout(format!(
                    "no free connection to {}://{} within {d:?}: max_connections ({}) requests were in flight to \
                     it all along",
                    url.scheme(),
                    url.host_str().unwrap_or(""),
                    self.max
                ))
            })?,
        };
        // the semaphores are never closed
        Ok(Permit::new(permit.expect("a limiter's semaphore is never closed")))
    }
}

/// What a client adds to its pool: the bound of [`Limiter`] and the [`FirstContact`] gate, either or both.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape<'a> {
    pub limiter: Option<&'a Limiter>,
    pub first: Option<&'a FirstContact>,
    /// The client speaks HTTP/2 with prior knowledge ([`crate::Http2::PriorKnowledge`]): a connection that
    /// breaks says so ([`Shape::explain`]).
    pub prior_knowledge: bool,
    /// The client speaks HTTP/3 ([`crate::ClientOptions::http3`]): `https://` only, every request asks for
    /// HTTP/3.
    pub http3: bool,
}

impl Shape<'_> {
    /// Wait for `url`'s turn (at most `left`): the permit (that the response is to hold) and the first
    /// request's guard (to drop once the response head is in).
    pub async fn enter(
        &self,
        url: &Url,
        left: Option<Duration>,
    ) -> Result<(Option<Permit>, Option<FirstGuard>), ClientError> {
        if self.http3 && url.scheme() != "https" {
            // QUIC is always encrypted: no HTTP/3 over http://, and the client never falls back to TCP
            return Err(ClientError::InvalidUrl(format!(
                "{url}: HTTP/3 runs over QUIC, which is always TLS: the client speaks HTTP/3 to https:// URLs only"
            )));
        }
        let permit = match self.limiter {
            Some(l) => Some(l.acquire(url, left).await?),
            None => None,
        };
        let first = match self.first {
            Some(f) => f.wait(url, left).await?,
            None => None,
        };
        Ok((permit, first))
    }

    /// A request's error, with what it most likely means under prior knowledge: a server that does not
    /// speak HTTP/2 answers the connection preface with an HTTP/1.1 error (an invalid HTTP/2 frame) or
    /// closes the connection, and both are connection failures to the client.
    pub fn explain(&self, e: ClientError) -> ClientError {
        match e {
            ClientError::Connection(kind, msg) if self.prior_knowledge && kind != crate::ConnectionKind::Refused => {
                ClientError::Connection(
                    kind,
                    format!("{msg} (HTTP/2 with prior knowledge: the server may not speak HTTP/2 on this port)"),
                )
            }
            other => other,
        }
    }
}

/// The origin of `url`: scheme, host, port.
fn origin(url: &Url) -> Origin {
    (url.scheme().to_owned(), url.host_str().unwrap_or("").to_owned(), url.port_or_known_default().unwrap_or(0))
}

/// One origin's first request (see the module docs).
#[derive(Debug, Default)]
struct Contact {
    /// A first request has been sent and has its answer (a response head, or an error).
    made: std::sync::atomic::AtomicBool,
    first: Arc<tokio::sync::Mutex<()>>,
}

/// The first request to each origin goes alone ([`crate::Http2::Alpn`]).
#[derive(Debug, Default)]
pub struct FirstContact {
    origins: Mutex<HashMap<Origin, Arc<Contact>>>,
}

/// Held by an origin's first request until it has its answer; dropping it lets the others go.
pub struct FirstGuard {
    contact: Arc<Contact>,
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

impl Drop for FirstGuard {
    fn drop(&mut self) {
        self.contact.made.store(true, std::sync::atomic::Ordering::Release);
    }
}

impl FirstContact {
    /// `None` once `url`'s origin has had its first request answered; else wait (at most `left`) for the
    /// first request under way to be answered, or become that first request (`Some`: send it, then drop
    /// the guard). Waiting longer than `left` is the request's timeout.
    pub async fn wait(&self, url: &Url, left: Option<Duration>) -> Result<Option<FirstGuard>, ClientError> {
        use std::sync::atomic::Ordering;
        let contact = {
            let mut origins = self.origins.lock().unwrap_or_else(|e| e.into_inner());
            let key = origin(url);
            match origins.get(&key) {
                Some(c) if c.made.load(Ordering::Acquire) => return Ok(None),
                Some(c) => c.clone(),
                None => {
                    if origins.len() >= ORIGINS_KEPT {
                        // forgetting an answered origin only costs it one more request alone
                        origins.retain(|_, c| Arc::strong_count(c) > 1);
                    }
                    origins.entry(key).or_default().clone()
                }
            }
        };
        let turn = contact.first.clone().lock_owned();
        let turn = match left {
            None => turn.await,
            Some(d) => tokio::time::timeout(d, turn).await.map_err(|_| {
                ClientError::Timeout(format!(
                    "the first request to {}://{} was not answered within {d:?}",
                    url.scheme(),
                    url.host_str().unwrap_or("")
                ))
            })?,
        };
        if contact.made.load(Ordering::Acquire) {
            return Ok(None);
        }
        Ok(Some(FirstGuard { contact, _turn: turn }))
    }
}

/// Take the permit out of `resp` (to keep it while the body is read by a method that consumes the response).
pub fn take(resp: &mut reqwest::Response) -> Option<Permit> {
    resp.extensions_mut().remove::<Permit>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[tokio::test]
    async fn bound_per_origin_and_timed_wait() {
        // real time (no paused clock: tokio's test-util would part the tests' build of tokio, and of everything on
        // it, from the binding's and the drivers'): which deadline ended a wait is read off its message
        let l = Limiter::new(2, Some(Duration::from_millis(400)));
        let a = url("http://a.test/x");
        let p1 = l.acquire(&a, None).await.unwrap();
        let _p2 = l.acquire(&url("http://a.test:80/y"), None).await.unwrap();
        // another origin (scheme, host or port) has its own permits
        for other in ["https://a.test/", "http://b.test/", "http://a.test:8080/"] {
            l.acquire(&url(other), None).await.unwrap();
        }
        let err = l.acquire(&a, None).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Timeout(m) if m.contains("max_connections (2)") && m.contains("within 400ms")),
            "{err:?}"
        );
        // the request's own deadline, when shorter, cuts the wait
        let started = tokio::time::Instant::now();
        let err = l.acquire(&a, Some(Duration::from_millis(30))).await.unwrap_err();
        assert!(matches!(&err, ClientError::Timeout(m) if m.contains("within 30ms")), "{err:?}");
        assert!(started.elapsed() >= Duration::from_millis(30));
        // a permit given back lets a waiter through
        let waiter = l.acquire(&a, None);
        drop(p1);
        waiter.await.unwrap();
    }

    /// The first request to an origin goes alone; the others wait for its answer (success or not), then go
    /// together; another origin has its own first request; a waiter gives up at its deadline.
    #[tokio::test]
    async fn first_contact_goes_alone() {
        let fc = Arc::new(FirstContact::default());
        let a = url("https://a.test/");
        let first = fc.wait(&a, None).await.unwrap().expect("the first request");
        assert!(fc.wait(&url("https://b.test/"), None).await.unwrap().is_some(), "another origin");
        let waiter = {
            let (fc, a) = (fc.clone(), a.clone());
            tokio::spawn(async move { fc.wait(&a, None).await })
        };
        assert!(fc.wait(&a, Some(Duration::from_millis(20))).await.is_err(), "its deadline");
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(first); // answered
        assert!(waiter.await.unwrap().unwrap().is_none(), "the others then go without waiting");
        assert!(fc.wait(&url("https://a.test:443/x"), None).await.unwrap().is_none());
    }

    async fn settle() {
        for _ in 0..=RELEASE_YIELDS {
            tokio::task::yield_now().await;
        }
    }

    /// A permit dropped on a runtime is given back from a task behind the ones already queued (hyper's,
    /// which put the connection back in the pool); dropped outside any runtime, at once.
    #[test]
    fn a_permit_is_given_back_behind_the_queued_tasks() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let l = Arc::new(Limiter::new(1, None));
        let a = url("http://a.test/");
        let order = rt.block_on(async {
            let order = Arc::new(Mutex::new(Vec::new()));
            let p = l.acquire(&a, None).await.unwrap();
            let o = order.clone();
            tokio::spawn(async move { o.lock().unwrap().push("queued before") });
            drop(p);
            assert_eq!(l.semaphore(origin(&a)).available_permits(), 0, "not yet");
            let _again = l.acquire(&a, None).await.unwrap();
            order.lock().unwrap().push("next request");
            let out = order.lock().unwrap().clone();
            out
        });
        assert_eq!(order, ["queued before", "next request"]);
        let p = rt.block_on(l.acquire(&url("http://b.test/"), None)).unwrap();
        drop(p);
        assert_eq!(l.semaphore(origin(&url("http://b.test/"))).available_permits(), 1);
    }

    #[tokio::test]
    async fn idle_origins_are_forgotten() {
        let l = Limiter::new(1, None);
        let held = l.acquire(&url("http://kept.test/"), None).await.unwrap();
        for i in 0..200 {
            drop(l.acquire(&url(&format!("http://h{i}.test/")), None).await.unwrap());
            settle().await; // the permit is given back from a task
        }
        let n = l.origins.lock().unwrap().len();
        assert!(n <= ORIGINS_KEPT, "{n}");
        assert!(l.origins.lock().unwrap().contains_key(&("http".into(), "kept.test".into(), 80)));
        drop(held);
    }
}
