//! What `GET /stats` counts beyond accepted connections and TLS handshakes: each connection's protocol and
//! every request (an HTTP/2 or HTTP/3 stream is one request). QUIC connections are counted where they are
//! accepted ([`crate::http3`]).
//!
//! * [`Sniff`] wraps a connection (plain TCP, or TLS after its handshake) and looks at the first bytes the
//!   client sends: the HTTP/2 connection preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`, RFC 9113 §3.4, sent
//!   with prior knowledge over TCP and after ALPN `h2` over TLS) makes it an HTTP/2 connection, anything
//!   else an HTTP/1.1 one; a connection that sends nothing is neither. This is the test hyper-util's auto
//!   builder makes to pick the protocol, so the two always agree.
//! * [`Counted`] wraps the router and counts each request by its version, and by its authority ([`Origins`]).
//! * [`PlainListener`] is the plain-TCP listener (TCP_NODELAY, the connection counted, [`Sniff`]).
//!
//! Requests are counted on every server thread at the benchmark's full rate, so their counters are
//! [`Counter`]s: one cache line per thread, summed when read, so that the count does not bounce one line
//! between the cores on every request. For the same reason [`Origins`] keeps, per thread, the authorities
//! that thread has already seen: a request to one of them takes no lock.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::http::{header, Request, Version};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use crate::Stats;

/// The client connection preface of HTTP/2 (RFC 9113 §3.4).
pub const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

const SHARDS: usize = 16;

#[derive(Default)]
#[repr(align(128))]
struct Shard(AtomicU64);

/// A counter that threads add to without sharing a cache line (up to [`SHARDS`] threads; more share
/// shards, still exactly). Reading sums the shards.
#[derive(Default)]
pub struct Counter {
    shards: [Shard; SHARDS],
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counter({})", self.get())
    }
}

/// This thread's shard, assigned round-robin at its first count.
fn shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    SHARD.with(|s| {
        if s.get() == usize::MAX {
            s.set(NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS);
        }
        s.get()
    })
}

impl Counter {
    pub fn add(&self) {
        self.shards[shard()].0.fetch_add(1, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.shards.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }
}

/// The most distinct authorities [`Origins`] tells apart: a benchmark uses a few (`--hosts` at most 64), and a
/// client sending a new `Host` with every request must not grow the server without end. Requests for an
/// authority past these are counted in `requests` only.
pub const MAX_ORIGINS: usize = 1024;

/// How many authorities each thread remembers (the `--hosts` maximum: a thread cycling through every origin
/// then never misses).
const CACHED_ORIGINS: usize = 64;

/// The authorities requests were made for (the `:authority` of HTTP/2 and 3, or HTTP/1.1's `Host`, byte for
/// byte as the client sent it, e.g. `127.0.0.2:41234`), each with its request count, since the server started.
pub struct Origins {
    /// Tells this table's entries from another's in the threads' caches (tests run several servers at once).
    id: u64,
    table: Mutex<HashMap<String, Arc<Counter>>>,
}

/// An authority a thread has seen, and its counter (None: the table was full, the authority is not counted).
struct Cached {
    owner: u64,
    authority: Box<[u8]>,
    counter: Option<Arc<Counter>>,
}

thread_local! {
    static SEEN: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

impl Default for Origins {
    fn default() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Origins { id: NEXT.fetch_add(1, Ordering::Relaxed), table: Mutex::new(HashMap::new()) }
    }
}

impl std::fmt::Debug for Origins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Origins({:?})", self.requests())
    }
}

impl Origins {
    /// Counts one request for `authority`.
    pub fn add(&self, authority: &[u8]) {
        SEEN.with(|seen| {
            let mut seen = seen.borrow_mut();
            if let Some(hit) = seen.iter().find(|c| c.owner == self.id && *c.authority == *authority) {
                if let Some(counter) = &hit.counter {
                    counter.add();
                }
                return;
            }
            let counter = self.entry(authority);
            if let Some(counter) = &counter {
                counter.add();
            }
            if seen.len() == CACHED_ORIGINS {
                seen.remove(0);
            }
            seen.push(Cached { owner: self.id, authority: authority.into(), counter });
        })
    }

    /// `authority`'s counter in the table (added if new and there is room).
    #[cold]
    fn entry(&self, authority: &[u8]) -> Option<Arc<Counter>> {
        // a Host may hold bytes that are not UTF-8 (obs-text): told apart as /stats can show them
        let key = String::from_utf8_lossy(authority);
        let mut table = self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(counter) = table.get(key.as_ref()) {
            return Some(counter.clone());
        }
        if table.len() >= MAX_ORIGINS {
            return None;
        }
        let counter = Arc::new(Counter::default());
        table.insert(key.into_owned(), counter.clone());
        Some(counter)
    }

    /// Each authority seen, with its requests so far.
    pub fn requests(&self) -> BTreeMap<String, u64> {
        let table = self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        table.iter().map(|(authority, counter)| (authority.clone(), counter.get())).collect()
    }
}

/// The authority a request names: the URI's (HTTP/2 and 3's `:authority`, an HTTP/1.1 absolute-form target)
/// or else the `Host` header's; None for an HTTP/1.0 request without one.
fn authority<B>(req: &Request<B>) -> Option<&[u8]> {
    match req.uri().authority() {
        Some(authority) => Some(authority.as_str().as_bytes()),
        None => req.headers().get(header::HOST).map(|host| host.as_bytes()),
    }
}

/// A connection whose first bytes from the client decide which protocol it counts as (see the module docs).
pub struct Sniff<T> {
    io: T,
    /// How many bytes of the preface the client has sent so far; `None` once the protocol is known.
    matched: Option<usize>,
    stats: Arc<Stats>,
}

impl<T> Sniff<T> {
    pub fn new(io: T, stats: Arc<Stats>) -> Self {
        Sniff { io, matched: Some(0), stats }
    }

    /// Look at the bytes the client just sent (`fresh`; empty at the end of the stream).
    #[cold]
    fn see(&mut self, fresh: &[u8]) {
        let Some(done) = self.matched else { return };
        if fresh.is_empty() {
            self.matched = None; // closed before saying anything: neither protocol
            return;
        }
        let want = &H2_PREFACE[done..];
        let n = fresh.len().min(want.len());
        if fresh[..n] != want[..n] {
            self.stats.http1_connections.fetch_add(1, Ordering::AcqRel);
            self.matched = None;
        } else if done + n == H2_PREFACE.len() {
            self.stats.h2_connections.fetch_add(1, Ordering::AcqRel);
            self.matched = None;
        } else {
            self.matched = Some(done + n);
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Sniff<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if this.matched.is_some() && matches!(polled, Poll::Ready(Ok(()))) {
            let fresh = &buf.filled()[before..];
            this.see(fresh);
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Sniff<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// The plain-TCP listener of `axum::serve`: every accepted connection counted in `Stats::connections`,
/// with TCP_NODELAY (responses are small and latency-sensitive), its protocol sniffed.
pub struct PlainListener {
    tcp: TcpListener,
    stats: Arc<Stats>,
}

impl PlainListener {
    pub fn new(tcp: TcpListener, stats: Arc<Stats>) -> Self {
        PlainListener { tcp, stats }
    }
}

impl axum::serve::Listener for PlainListener {
    type Io = Sniff<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Sniff<TcpStream>, SocketAddr) {
        // TcpListener's own Listener impl: retries (and backs off on) accept errors.
        let (tcp, peer) = axum::serve::Listener::accept(&mut self.tcp).await;
        self.stats.connections.fetch_add(1, Ordering::AcqRel);
        let _ = tcp.set_nodelay(true);
        (Sniff::new(tcp, self.stats.clone()), peer)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

/// A service (the router) whose every request is counted, by version (HTTP/1.x, 2, 3), before it is routed. It wraps the
/// whole router rather than being a router layer: a layer boxes each route once more, a box per request.
#[derive(Clone)]
pub struct Counted<S> {
    inner: S,
    stats: Arc<Stats>,
}

impl<S> Counted<S> {
    pub fn new(inner: S, stats: Arc<Stats>) -> Self {
        Counted { inner, stats }
    }
}

impl<S, B> tower_service::Service<Request<B>> for Counted<S>
where
    S: tower_service::Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> S::Future {
        match req.version() {
            Version::HTTP_2 => self.stats.h2_requests.add(),
            Version::HTTP_3 => self.stats.h3_requests.add(),
            _ => self.stats.http1_requests.add(),
        }
        if let Some(authority) = authority(&req) {
            self.stats.origins.add(authority);
        }
        self.inner.call(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniffed(pieces: &[&[u8]]) -> (u64, u64) {
        let stats = Arc::new(Stats::default());
        let mut s = Sniff::new((), stats.clone());
        for p in pieces {
            s.see(p);
        }
        (stats.http1_connections.load(Ordering::Acquire), stats.h2_connections.load(Ordering::Acquire))
    }

    #[test]
    fn the_preface_decides_in_any_pieces() {
        assert_eq!(sniffed(&[H2_PREFACE]), (0, 1));
        assert_eq!(sniffed(&[b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x12\x04"]), (0, 1));
        assert_eq!(sniffed(&[b"PRI", b" * HTTP/2.0\r\n", b"\r\nSM\r\n\r", b"\n"]), (0, 1));
        assert_eq!(sniffed(&[b"GET / HTTP/1.1\r\n"]), (1, 0));
        assert_eq!(sniffed(&[b"P", b"OST /upload HTTP/1.1\r\n"]), (1, 0));
        assert_eq!(sniffed(&[b"PRI * HTTP/1.1\r\n"]), (1, 0));
        // counted once, whatever follows
        assert_eq!(sniffed(&[b"GET / HTTP/1.1\r\n", H2_PREFACE, b""]), (1, 0));
        // closed before a byte, or in the middle of the preface: neither
        assert_eq!(sniffed(&[b""]), (0, 0));
        assert_eq!(sniffed(&[b"PRI * HTTP/2", b""]), (0, 0));
    }

    #[test]
    fn origins_count_each_authority_from_every_thread() {
        let origins = Arc::new(Origins::default());
        let other = Origins::default(); // another server's table: its own counts, whatever the thread caches
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let origins = origins.clone();
                std::thread::spawn(move || {
                    for i in 0..1000 {
                        origins.add(format!("127.0.0.{}:8080", 1 + (t + i) % 4).as_bytes());
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        other.add(b"127.0.0.1:8080");
        let want: BTreeMap<String, u64> = (1..=4).map(|k| (format!("127.0.0.{k}:8080"), 2000)).collect();
        assert_eq!(origins.requests(), want);
        assert_eq!(other.requests(), BTreeMap::from([("127.0.0.1:8080".to_owned(), 1)]));
    }

    #[test]
    fn origins_stop_growing_at_the_limit() {
        let origins = Origins::default();
        for i in 0..MAX_ORIGINS + 10 {
            origins.add(format!("host{i}").as_bytes());
            origins.add(format!("host{i}").as_bytes());
        }
        let requests = origins.requests();
        assert_eq!(requests.len(), MAX_ORIGINS);
        assert!(requests.values().all(|n| *n == 2), "{requests:?}");
        assert!(!requests.contains_key(&format!("host{}", MAX_ORIGINS)));
    }

    #[test]
    fn the_authority_is_the_uri_s_else_the_host_header() {
        let req = |uri: &str, host: Option<&str>| {
            let mut b = Request::builder().uri(uri);
            if let Some(host) = host {
                b = b.header(header::HOST, host);
            }
            b.body(()).unwrap()
        };
        assert_eq!(authority(&req("/", Some("127.0.0.2:80"))), Some(&b"127.0.0.2:80"[..]));
        assert_eq!(authority(&req("https://127.0.0.3:443/", Some("x"))), Some(&b"127.0.0.3:443"[..]));
        assert_eq!(authority(&req("/", None)), None);
    }

    #[test]
    fn counters_sum_every_thread() {
        let c = Arc::new(Counter::default());
        let threads: Vec<_> = (0..40)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || (0..1000).for_each(|_| c.add()))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(c.get(), 40_000);
    }
}
