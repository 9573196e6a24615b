//! clientbench-server binary: CLI, bind, the one-line `listening` event on stdout, and
//! signal-driven shutdown. Everything except the listening line goes to stderr.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use axum::serve::ListenerExt;
use clap::Parser;
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

/// Local HTTP/1.1 benchmark target server (axum).
#[derive(Parser, Debug)]
#[command(name = "clientbench-server", version, about)]
struct Args {
    /// Address to bind (IP address or host name).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,

    /// Port to bind; 0 picks an ephemeral port (see the `listening` line for the actual one).
    #[arg(long, default_value_t = 8080)]
    port: u16,

    /// Number of tokio worker threads (default: tokio's default, one per CPU core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

#[derive(Serialize)]
struct Listening<'a> {
    event: &'a str,
    url: &'a str,
}

fn main() -> ExitCode {
    let args = Args::parse();

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
    let code = rt.block_on(run(args));
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

async fn run(args: Args) -> ExitCode {
    // Register signal handlers before announcing the address, so a signal sent right
    // after the listening line is seen is handled gracefully.
    let (mut sigterm, mut sigint) = match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(t), Ok(i)) => (t, i),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("clientbench-server: failed to install signal handlers: {e}");
            return ExitCode::from(1);
        }
    };

    let listener = match bind(&args.host, args.port).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("clientbench-server: failed to bind {}:{}: {e}", args.host, args.port);
            return ExitCode::from(1);
        }
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("clientbench-server: failed to read bound address: {e}");
            return ExitCode::from(1);
        }
    };

    clientbench_server::warm_up();

    let url = format!("http://{addr}");
    let line = serde_json::to_string(&Listening { event: "listening", url: &url })
        .expect("serializing two strings cannot fail");
    {
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            // stdout closed: nobody can learn the address, but keep serving anyway.
            eprintln!("clientbench-server: could not write listening line to stdout");
        }
    }

    let listener = listener.tap_io(|tcp| {
        // Disable Nagle: responses are small and latency-sensitive.
        let _ = tcp.set_nodelay(true);
    });

    let (stop_tx, mut stop_rx) = watch::channel(false);
    let mut graceful_rx = stop_rx.clone();
    let server = axum::serve(listener, clientbench_server::app()).with_graceful_shutdown(async move {
        let _ = graceful_rx.wait_for(|stop| *stop).await;
    });

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
