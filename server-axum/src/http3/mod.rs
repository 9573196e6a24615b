//! HTTP/3 beside HTTPS (`--tls`, unless `--no-http3`): QUIC on UDP at the TCP listener's address and port
//! number, with the same certificate ([`crate::tls::quic_server_config`]: TLS 1.3, ALPN `h3`), on quinn and
//! hyperium's h3 (the crates reqwest's `http3` feature uses).
//!
//! Each request stream goes, its body streamed, to the same router the TCP listener serves ([`exchange`]), so
//! every endpoint answers alike over HTTP/1.1, 2 and 3. What is the connection's over HTTP/1.1 follows RFC
//! 9114: `/close`'s `Connection: close` becomes a GOAWAY sent once its response is; no response carries a
//! connection-specific field. No `Alt-Svc` is ever sent: a client that follows it would switch protocols in
//! the middle of an HTTP/1.1 or HTTP/2 measurement; HTTP/3 clients are pointed at the port directly.
//!
//! A connection ends when the client closes it or goes idle (quinn's 30 s idle timeout), or after a GOAWAY
//! (`/close`, or the server shutting down): once its last request is answered, the server waits a few probe
//! timeouts ([`linger`]) for the client to close, then closes it with H3_NO_ERROR. It waits because closing a
//! QUIC connection discards what the peer has not acknowledged yet, the end of the last response included.

mod exchange;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::counting::Counted;
use crate::udp::{self, Buffers};
use crate::Stats;

/// quinn's (and RFC 9000's) default max_ack_delay: part of a probe timeout (RFC 9002 §6.2.1).
const MAX_ACK_DELAY: Duration = Duration::from_millis(25);

/// H3_NO_ERROR, the code of a graceful close (RFC 9114 §8.1).
const H3_NO_ERROR: u32 = 0x100;

/// The HTTP/3 endpoint: a quinn endpoint on its UDP socket, serving nothing until [`serve`].
pub struct Listener {
    endpoint: quinn::Endpoint,
    addr: SocketAddr,
    buffers: Buffers,
}

impl Listener {
    /// Binds UDP `addr` (its buffers asked to be `buffer` bytes, [`udp`]) and sets up QUIC with `tls` (a TLS 1.3
    /// configuration, [`crate::tls::quic_server_config`]). Must run inside a tokio runtime.
    pub fn bind(addr: SocketAddr, buffer: usize, tls: Arc<rustls::ServerConfig>) -> io::Result<Listener> {
        let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("QUIC's TLS configuration: {e}")))?;
        let (socket, buffers) = udp::bind(addr, buffer)?;
        let config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        let runtime = Arc::new(quinn::TokioRuntime);
        let endpoint = quinn::Endpoint::new(quinn::EndpointConfig::default(), Some(config), socket, runtime)?;
        let addr = endpoint.local_addr()?;
        Ok(Listener { endpoint, addr, buffers })
    }

    /// The UDP address it is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The socket buffer sizes the kernel granted.
    pub fn buffers(&self) -> Buffers {
        self.buffers
    }
}

/// Serves HTTP/3 on `listener` with `app` until `stop` turns true; then sends every connection a GOAWAY, lets
/// their requests finish, closes them and returns. Counts QUIC connections and handshakes in `stats`; `app`
/// counts the requests. The socket's buffer sizes are in `stats` from the call on, before the future runs.
pub fn serve(
    listener: Listener,
    app: Counted<Router>,
    stats: Arc<Stats>,
    stop: watch::Receiver<bool>,
) -> impl Future<Output = ()> + Send {
    let _ = stats.udp_buffers.set(listener.buffers);
    accept(listener.endpoint, app, stats, stop)
}

async fn accept(endpoint: quinn::Endpoint, app: Counted<Router>, stats: Arc<Stats>, stop: watch::Receiver<bool>) {
    let mut stopped = stop.clone();
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            incoming = endpoint.accept() => match incoming {
                Some(incoming) => {
                    connections.spawn(connection(incoming, app.clone(), stats.clone(), stop.clone()));
                }
                None => break, // the endpoint was closed
            },
            // finished connection tasks are reaped as they end, so the set holds only live ones
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            _ = stopped.wait_for(|stop| *stop) => break,
        }
    }
    // refuse new connections while the open ones wind down
    endpoint.set_server_config(None);
    while connections.join_next().await.is_some() {}
    endpoint.close(H3_NO_ERROR.into(), b"");
    endpoint.wait_idle().await;
}

/// How long a connection whose requests are all answered waits for the client to close it after a GOAWAY:
/// four probe timeouts, each about an RTT and the peer's ACK delay (RFC 9002 §6.2.1), time for the last
/// response's packets to be acknowledged even if one is lost and resent.
fn linger(conn: &quinn::Connection) -> Duration {
    4 * (conn.rtt() + MAX_ACK_DELAY)
}

/// Whether a connection ended as connections do: closed without an error by either side (at the HTTP/3 or
/// the QUIC layer: clients do both), or idle.
fn ended_quietly(conn: &quinn::Connection) -> bool {
    use quinn::ConnectionError as E;
    match conn.close_reason() {
        Some(E::ApplicationClosed(close)) => close.error_code == quinn::VarInt::from_u32(H3_NO_ERROR),
        Some(E::ConnectionClosed(close)) => close.error_code == quinn::TransportErrorCode::NO_ERROR,
        Some(E::TimedOut | E::LocallyClosed) => true,
        _ => false,
    }
}

/// One QUIC connection: its handshake, then its request streams, each served in a task of its own.
async fn connection(
    incoming: quinn::Incoming,
    app: Counted<Router>,
    stats: Arc<Stats>,
    mut stop: watch::Receiver<bool>,
) {
    let peer = incoming.remote_address();
    // counted before quinn answers the client, so that no client can see the server's first packets before
    // /stats counts its connection
    stats.quic_connections.fetch_add(1, Ordering::AcqRel);
    let connecting = match incoming.accept() {
        Ok(c) => c,
        Err(e) => {
            crate::debug!("QUIC connection from {peer} not accepted: {e}");
            return;
        }
    };
    let conn = match tokio::time::timeout(crate::tls::HANDSHAKE_TIMEOUT, connecting).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => {
            crate::debug!("QUIC handshake with {peer} failed: {e}");
            return;
        }
        Err(_) => {
            crate::debug!("QUIC handshake with {peer} failed: no handshake within the handshake timeout");
            return;
        }
    };
    stats.quic_handshakes.fetch_add(1, Ordering::AcqRel);
    let mut h3 = match h3::server::builder().build(h3_quinn::Connection::new(conn.clone())).await {
        Ok(h3) => h3,
        Err(e) => {
            crate::debug!("HTTP/3 connection with {peer} not set up: {e}");
            return;
        }
    };

    // each task answers one request and says whether its response asked for a GOAWAY (`/close`)
    let mut requests = JoinSet::new();
    let mut goaway_sent = false;
    loop {
        if goaway_sent && requests.is_empty() {
            break; // no request can follow a GOAWAY: every stream it admits has been accepted
        }
        let goaway = tokio::select! {
            done = requests.join_next(), if !requests.is_empty() => matches!(done, Some(Ok(true))),
            _ = stop.wait_for(|stop| *stop), if !goaway_sent => true,
            accepted = h3.accept() => match accepted {
                Ok(Some(resolver)) => {
                    requests.spawn(exchange::exchange(resolver, app.clone()));
                    false
                }
                // the client sent a GOAWAY and its requests are answered
                Ok(None) => break,
                Err(e) => {
                    // closed or idle: there is nobody left to answer
                    if !ended_quietly(&conn) {
                        crate::debug!("HTTP/3 connection with {peer} ended: {e}");
                    }
                    return;
                }
            },
        };
        if goaway && !goaway_sent {
            // the last stream admitted is the last one accepted: requests already accepted are answered
            if let Err(e) = h3.shutdown(0).await {
                crate::debug!("HTTP/3 GOAWAY to {peer} not sent: {e}");
                return;
            }
            goaway_sent = true;
        }
    }
    let _ = tokio::time::timeout(linger(&conn), conn.closed()).await;
    // dropping the h3 connection closes it with H3_NO_ERROR (a no-op if the client closed it first)
    drop(h3);
}
