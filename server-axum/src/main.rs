//! clientbench-server binary: CLI, bind, the one-line `listening` event on stdout, and
//! signal-driven shutdown. Everything except the listening line goes to stderr. Every TCP connection speaks
//! HTTP/1.1 or HTTP/2, whichever the client starts with (see the library's docs).
//!
//! `--tls` serves HTTPS (see `clientbench_server::tls`): by default with a throw-away CA generated at
//! start (its certificate for localhost, 127.0.0.1, ::1 and every `--tls-name`), whose certificate is written
//! to `DIR/ca.pem` (`--tls-dir DIR`, kept; by default a new temporary directory, removed when the server exits) and
//! named in the listening line. With `--tls` the server also speaks HTTP/3 over QUIC on the same port number
//! over UDP (`clientbench_server::http3`), unless `--no-http3` or `--tls-version 1.2` (QUIC needs TLS 1.3):
//! `{"event":"listening","url":"https://127.0.0.1:PORT","ca_file":"/abs/DIR/ca.pem","http3":true,
//! "udp_addr":"127.0.0.1:PORT","udp_recv_buffer":N,"udp_send_buffer":N}` (`"ca_file":null` with
//! `--tls-cert`/`--tls-key`; `"http3":false` and no `udp_*` keys without HTTP/3). A TLS set-up error is one
//! line on stderr and exit status 2; an address that cannot be bound (TCP, or UDP for HTTP/3) one line and 1.
//!
//! `--host` is repeatable: the server listens on every address given with one port number (the first address
//! picks it with `--port 0`), TCP and, with HTTP/3, UDP; a client reaches it through as many origins
//! (`clientbench run --hosts N`: 127.0.0.1 ... 127.0.0.N). The listening line's `url` is the first address's,
//! and `urls` lists them all, in order: `"url":"http://127.0.0.1:PORT","urls":["http://127.0.0.1:PORT",
//! "http://127.0.0.2:PORT"]`. `udp_addr` is the first address's; HTTP/3 answers at each of `urls`.

use std::future::{Future, IntoFuture};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::ServiceExt;
use clap::{Parser, ValueEnum};
use clientbench_server::counting::PlainListener;
use clientbench_server::{http3, tls, udp, Stats};
use futures_util::future::join_all;
use serde::Serialize;
use tokio::net::{lookup_host, TcpListener, TcpSocket};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

/// Listen backlog (the kernel caps it at `net.core.somaxconn`). tokio's `TcpListener::bind`
/// uses 128, which overflows when a client opens hundreds of connections at once: the
/// dropped SYNs are retransmitted after 1 s, i.e. 1 s connect stalls in the benchmark.
const LISTEN_BACKLOG: u32 = 4096;

/// After SIGTERM/SIGINT, in-flight requests get at most this long before the process exits.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// With `--port 0`, how many ephemeral ports to try before giving up on finding one that is free on every
/// address, and over UDP too for HTTP/3 (the first address's TCP bind picks it; the others may hold it).
const PORT_ATTEMPTS: usize = 16;

/// Local HTTP benchmark target server (axum): HTTP/1.1, and HTTP/2 (h2c with prior knowledge; ALPN h2 with --tls);
/// with --tls also HTTP/3 over QUIC on the same port number over UDP.
#[derive(Parser, Debug)]
#[command(name = "clientbench-server", version, about)]
struct Args {
    /// Address to bind (IP address or host name); repeatable: every address is bound with the same port, the
    /// first one's `url` and all of them as `urls` in the listening line.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    host: Vec<String>,

    /// Port to bind; 0 picks an ephemeral port (see the `listening` line for the actual one).
    #[arg(long, default_value_t = 8080)]
    port: u16,

    /// Number of tokio worker threads (default: tokio's default, one per CPU core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,

    /// Serve HTTPS (rustls, TLS 1.2 and 1.3, ALPN h2 and http/1.1) with a certificate for localhost, 127.0.0.1
    /// and ::1 signed by a throw-away CA generated at start (its PEM is written to DIR/ca.pem); and HTTP/3 over
    /// QUIC (UDP, the same port number, TLS 1.3, ALPN h3). No Alt-Svc is sent: HTTP/3 clients are pointed at it.
    #[arg(long)]
    tls: bool,

    /// With --tls: no HTTP/3 (no UDP socket).
    #[arg(long)]
    no_http3: bool,

    /// With HTTP/3: the UDP socket's receive and send buffer sizes to ask for, in bytes (the kernel's defaults,
    /// 208 KiB, overflow at benchmark rates); the sizes granted are in the listening line and /stats.
    #[arg(long, value_name = "BYTES", requires = "tls", conflicts_with = "no_http3",
          value_parser = clap::value_parser!(u32).range(1..=1 << 30))]
    udp_buffer: Option<u32>,

    /// With --tls and the generated CA: a DNS name or IP address the certificate names too, besides localhost,
    /// 127.0.0.1 and ::1 (the name a client on another machine uses); repeatable.
    #[arg(long, value_name = "NAME", requires = "tls", conflicts_with = "tls_cert", value_parser = tls::parse_name)]
    tls_name: Vec<String>,

    /// With --tls: where to write the generated CA's certificate, DIR/ca.pem (the directory is created if
    /// missing and never removed; default: a new temporary directory, removed when the server exits).
    #[arg(long, value_name = "DIR", requires = "tls", conflicts_with = "tls_cert")]
    tls_dir: Option<PathBuf>,

    /// With --tls: serve this certificate chain (PEM, leaf first) instead of a generated one; needs --tls-key.
    #[arg(long, value_name = "PEM", requires_all = ["tls", "tls_key"])]
    tls_cert: Option<PathBuf>,

    /// With --tls-cert: the certificate's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "PEM", requires_all = ["tls", "tls_cert"])]
    tls_key: Option<PathBuf>,

    /// With --tls: accept only this TLS version (default: 1.2 and 1.3). 1.2 turns HTTP/3 off: QUIC is TLS 1.3.
    #[arg(long, value_enum, requires = "tls")]
    tls_version: Option<TlsVersion>,

    /// debug also logs every failed TLS handshake.
    #[arg(long, value_enum, default_value_t = LogLevel::Info)]
    log_level: LogLevel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TlsVersion {
    #[value(name = "1.2")]
    Tls12,
    #[value(name = "1.3")]
    Tls13,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LogLevel {
    Info,
    Debug,
}

#[derive(Serialize)]
struct Listening<'a> {
    event: &'a str,
    url: &'a str,
    /// One URL per `--host`, in order (the first is `url`).
    urls: &'a [String],
    /// Only with --tls: the generated CA's PEM file, or null with the user's own certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    ca_file: Option<Option<&'a str>>,
    http3: bool,
    /// With HTTP/3: its UDP address and the socket's buffer sizes as granted.
    #[serde(skip_serializing_if = "Option::is_none")]
    udp_addr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    udp_recv_buffer: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    udp_send_buffer: Option<u64>,
}

/// What `--tls` set up: the rustls configurations (HTTPS, and HTTP/3's unless it is off), and the CA file
/// written (None: the user's certificate).
struct Https {
    config: Arc<rustls::ServerConfig>,
    quic: Option<Arc<rustls::ServerConfig>>,
    ca_file: Option<String>,
    /// The temporary directory made for the CA (no --tls-dir), removed with this (when `run` returns).
    _ca_dir: Option<MadeDir>,
}

/// A directory the server made: removed when dropped, at exit or on a set-up error after it.
struct MadeDir(PathBuf);

impl Drop for MadeDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            eprintln!("clientbench-server: could not remove {}: {e}", self.0.display());
        }
    }
}

/// A new private directory `$TMPDIR/clientbench-tls-XXXXXX` (mkdtemp: mode 0700).
fn temp_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let template = std::env::temp_dir().join("clientbench-tls-XXXXXX");
    let mut bytes = template.as_os_str().as_bytes().to_vec();
    bytes.push(0);
    // SAFETY: `bytes` is a NUL-terminated template that mkdtemp rewrites in place.
    if unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) }.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    bytes.pop();
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)))
}

/// Write the CA's PEM to DIR/ca.pem (DIR created if missing; without DIR a new temporary directory); returns
/// its absolute path and the temporary directory made.
fn write_ca(dir: Option<&Path>, pem: &str) -> Result<(String, Option<MadeDir>), String> {
    let (dir, made) = match dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| format!("--tls-dir {}: {e}", d.display()))?;
            (d.to_path_buf(), None)
        }
        None => {
            let d = temp_dir().map_err(|e| format!("cannot create a temporary directory for the CA: {e}"))?;
            (d.clone(), Some(MadeDir(d)))
        }
    };
    let dir = std::fs::canonicalize(&dir).map_err(|e| format!("--tls-dir {}: {e}", dir.display()))?;
    let file = dir.join("ca.pem");
    std::fs::write(&file, pem).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok((file.to_string_lossy().into_owned(), made))
}

/// Whether HTTP/3 is served: with --tls, unless --no-http3 or --tls-version 1.2 (QUIC is TLS 1.3 only).
fn wants_http3(args: &Args) -> bool {
    args.tls && !args.no_http3 && args.tls_version != Some(TlsVersion::Tls12)
}

fn set_up_tls(args: &Args) -> Result<Https, String> {
    if args.udp_buffer.is_some() && !wants_http3(args) {
        return Err("--udp-buffer: no HTTP/3 with --tls-version 1.2 (QUIC needs TLS 1.3)".into());
    }
    let identity = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => tls::load(cert, key)?,
        _ => {
            let mut names: Vec<&str> = tls::SERVER_NAMES.to_vec();
            for name in &args.tls_name {
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
            }
            tls::generate(&names).map_err(|e| format!("cannot generate the certificates: {e}"))?
        }
    };
    let version = args.tls_version.map(|v| match v {
        TlsVersion::Tls12 => tls::Version::Tls12,
        TlsVersion::Tls13 => tls::Version::Tls13,
    });
    let (ca_file, ca_dir) = match &identity.ca_pem {
        Some(pem) => {
            let (file, made) = write_ca(args.tls_dir.as_deref(), pem)?;
            (Some(file), made)
        }
        None => (None, None),
    };
    let quic = if wants_http3(args) { Some(tls::quic_server_config(&identity)?) } else { None };
    let config = tls::server_config(identity, version)?;
    Ok(Https { config, quic, ca_file, _ca_dir: ca_dir })
}

fn main() -> ExitCode {
    let args = Args::parse();
    clientbench_server::set_debug(args.log_level == LogLevel::Debug);
    if let Some(host) = repeated_host(&args.host) {
        eprintln!("clientbench-server: --host {host} is given twice (each address is bound once)");
        return ExitCode::from(2);
    }

    let https = if args.tls {
        match set_up_tls(&args) {
            Ok(h) => Some(h),
            Err(e) => {
                eprintln!("clientbench-server: {}", e.replace('\n', " "));
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };

    // Each connection is a file descriptor: lift the (often 1024) soft limit to the hard
    // one so 1000+ concurrent keep-alive connections fit. Never fatal.
    if let Err(e) = clientbench_server::raise_nofile_limit() {
        eprintln!("clientbench-server: could not raise the open-file limit (RLIMIT_NOFILE): {e}");
    }

    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(n) = args.threads {
        builder.worker_threads(n.into());
    }
    let rt = match builder.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("clientbench-server: failed to start tokio runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = rt.block_on(run(args, https));
    // Don't let lingering connection tasks keep the process alive.
    rt.shutdown_timeout(Duration::from_millis(100));
    code
}

/// Like `TcpListener::bind((host, port))` (first resolved address that binds wins, else the
/// last error), but with `LISTEN_BACKLOG`.
async fn bind(host: &str, port: u16) -> std::io::Result<TcpListener> {
    let mut last_err = None;
    for addr in lookup_host((host, port)).await? {
        let res = (|| {
            let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
            socket.set_reuseaddr(true)?;
            socket.bind(addr)?;
            socket.listen(LISTEN_BACKLOG)
        })();
        match res {
            Ok(listener) => return Ok(listener),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err
        .unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "could not resolve to any address")))
}

/// What one `--host` is bound to: its TCP listener, and with HTTP/3 its UDP endpoint at the same address.
struct Bound {
    tcp: TcpListener,
    addr: SocketAddr,
    quic: Option<http3::Listener>,
}

/// A bind that failed: whether another port could do (`--port 0`, a port taken) and the one-line message.
struct BindError {
    port_taken: bool,
    message: String,
}

/// `host` bound at `port` over TCP, and with `quic` (HTTP/3's TLS configuration) over UDP at the same address.
async fn bind_host(
    host: &str,
    port: u16,
    quic: Option<&Arc<rustls::ServerConfig>>,
    buffer: usize,
) -> Result<Bound, BindError> {
    let taken = |e: &std::io::Error| e.kind() == std::io::ErrorKind::AddrInUse;
    let tcp = bind(host, port)
        .await
        .map_err(|e| BindError { port_taken: taken(&e), message: format!("failed to bind {host}:{port}: {e}") })?;
    let addr = tcp
        .local_addr()
        .map_err(|e| BindError { port_taken: false, message: format!("failed to read bound address: {e}") })?;
    let quic = match quic {
        Some(config) => Some(http3::Listener::bind(addr, buffer, config.clone()).map_err(|e| BindError {
            port_taken: taken(&e),
            message: format!("failed to bind UDP {addr} for HTTP/3: {e} (--no-http3 serves without it)"),
        })?),
        None => None,
    };
    Ok(Bound { tcp, addr, quic })
}

/// Every `--host` bound at one port: TCP, and with `quic` (HTTP/3's TLS configuration) UDP at the same
/// addresses. With `--port 0` the first address's TCP bind picks the port and the others take it; when any of
/// them finds it taken, everything bound so far is let go and another port tried. Errors are one line.
async fn bind_all(args: &Args, quic: Option<&Arc<rustls::ServerConfig>>) -> Result<Vec<Bound>, String> {
    let buffer = args.udp_buffer.map_or(udp::DEFAULT_BUFFER, |b| b as usize);
    let mut attempt = 1;
    'port: loop {
        let mut bound: Vec<Bound> = Vec::with_capacity(args.host.len());
        for host in &args.host {
            let port = bound.first().map_or(args.port, |b| b.addr.port());
            match bind_host(host, port, quic, buffer).await {
                Ok(b) => bound.push(b),
                Err(e) if args.port == 0 && e.port_taken && attempt < PORT_ATTEMPTS => {
                    attempt += 1;
                    continue 'port; // `bound` is dropped: its sockets close before the next try
                }
                Err(e) if args.port == 0 && e.port_taken => {
                    return Err(format!("{} ({PORT_ATTEMPTS} ports tried)", e.message));
                }
                Err(e) => return Err(e.message),
            }
        }
        return Ok(bound);
    }
}

/// A `--host` given twice would be bound twice at one port: refused up front (an address as its canonical
/// form, a name whatever its case).
fn repeated_host(hosts: &[String]) -> Option<&str> {
    let key = |h: &str| h.parse::<std::net::IpAddr>().map_or_else(|_| h.to_ascii_lowercase(), |ip| ip.to_string());
    let mut seen = std::collections::HashSet::new();
    hosts.iter().find(|h| !seen.insert(key(h))).map(String::as_str)
}

async fn run(args: Args, https: Option<Https>) -> ExitCode {
    // Register signal handlers before announcing the address, so a signal sent right
    // after the listening line is seen is handled gracefully.
    let (mut sigterm, mut sigint) = match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(t), Ok(i)) => (t, i),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("clientbench-server: failed to install signal handlers: {e}");
            return ExitCode::from(1);
        }
    };

    let bound = match bind_all(&args, https.as_ref().and_then(|h| h.quic.as_ref())).await {
        Ok(bound) => bound,
        Err(e) => {
            eprintln!("clientbench-server: {e}");
            return ExitCode::from(1);
        }
    };

    clientbench_server::warm_up();

    let scheme = if https.is_some() { "https" } else { "http" };
    let urls: Vec<String> = bound.iter().map(|b| format!("{scheme}://{}", b.addr)).collect();
    let first = bound[0].quic.as_ref(); // clap's default makes at least one --host
    let ca_file = https.as_ref().map(|h| h.ca_file.as_deref());
    let line = serde_json::to_string(&Listening {
        event: "listening",
        url: &urls[0],
        urls: &urls,
        ca_file,
        http3: first.is_some(),
        udp_addr: first.map(|q| q.local_addr().to_string()),
        udp_recv_buffer: first.map(|q| q.buffers().recv),
        udp_send_buffer: first.map(|q| q.buffers().send),
    })
    .expect("serializing strings cannot fail");
    {
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            // stdout closed: nobody can learn the address, but keep serving anyway.
            eprintln!("clientbench-server: could not write listening line to stdout");
        }
    }

    // one router and one set of counters for every address and protocol: /stats sees them all
    let stats = Arc::new(Stats::default());
    let counted = clientbench_server::counted_app(stats.clone());
    let (stop_tx, mut stop_rx) = watch::channel(false);
    let mut tcp_servers: Vec<Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>> = Vec::new();
    let mut h3_servers: Vec<Pin<Box<dyn Future<Output = ()> + Send>>> = Vec::new();
    for Bound { tcp, quic, .. } in bound {
        // HTTP/3 serves the same router; on the stop signal it sends GOAWAYs and lets requests finish, as
        // axum's graceful shutdown does for TCP
        if let Some(endpoint) = quic {
            h3_servers.push(Box::pin(http3::serve(endpoint, counted.clone(), stats.clone(), stop_rx.clone())));
        }
        let app = ServiceExt::<Request>::into_make_service(counted.clone());
        let mut graceful_rx = stop_rx.clone();
        let graceful = async move {
            let _ = graceful_rx.wait_for(|stop| *stop).await;
        };
        tcp_servers.push(match &https {
            None => {
                let listener = PlainListener::new(tcp, stats.clone());
                Box::pin(axum::serve(listener, app).with_graceful_shutdown(graceful).into_future())
            }
            Some(h) => {
                let listener = tls::TlsListener::new(tcp, h.config.clone(), stats.clone());
                Box::pin(axum::serve(listener, app).with_graceful_shutdown(graceful).into_future())
            }
        });
    }

    let signal_watcher = async move {
        let name = tokio::select! {
            _ = sigterm.recv() => "SIGTERM",
            _ = sigint.recv() => "SIGINT",
        };
        eprintln!("clientbench-server: received {name}, shutting down");
        let _ = stop_tx.send(true);
        // Keep the sender alive; completion is driven by the deadline below.
        std::future::pending::<()>().await;
    };
    let deadline = async move {
        let _ = stop_rx.wait_for(|stop| *stop).await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };

    let server = async move {
        let (tcp, _) = tokio::join!(join_all(tcp_servers), join_all(h3_servers));
        tcp.into_iter().collect::<std::io::Result<Vec<()>>>()
    };

    tokio::select! {
        res = server => {
            if let Err(e) = res {
                eprintln!("clientbench-server: server error: {e}");
                return ExitCode::from(1);
            }
        }
        _ = signal_watcher => {}
        _ = deadline => {
            eprintln!(
                "clientbench-server: connections still open after {} s, exiting anyway",
                SHUTDOWN_GRACE.as_secs()
            );
        }
    }
    ExitCode::SUCCESS
}
