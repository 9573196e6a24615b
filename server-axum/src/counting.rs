//! What `GET /stats` counts beyond accepted connections and TLS handshakes: each connection's protocol and
//! every request (an HTTP/2 or HTTP/3 stream is one request). QUIC connections are counted where they are
//! accepted ([`crate::http3`]).
//!
//! * [`Sniff`] wraps a connection (plain TCP, or TLS after its handshake) and looks at the first bytes the
//!   client sends: the HTTP/2 connection preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`, RFC 9113 §3.4, sent
//!   with prior knowledge over TCP and after ALPN `h2` over TLS) makes it an HTTP/2 connection, anything
//!   else an HTTP/1.1 one; a connection that sends nothing is neither. This is the test hyper-util's auto
//!   builder makes to pick the protocol, so the two always agree.
//! * [`Counted`] wraps the router and counts each request by its version.
//! * [`PlainListener`] is the plain-TCP listener (TCP_NODELAY, the connection counted, [`Sniff`]).
//!
//! Requests are counted on every server thread at the benchmark's full rate, so their counters are
//! [`Counter`]s: one cache line per thread, summed when read, so that the count does not bounce one line
//! between the cores on every request.

use std::cell::Cell;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::http::{Request, Version};
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
